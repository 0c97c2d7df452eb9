"""Whether a value found after a label is a secret: random-looking, prose, or code.

A label says a value *may* be a secret; these tests look at the value itself. A ``secret``
label's value counts only when it looks random (:func:`looks_random`): keys, tokens and
hashes do, words and code do not (``CONFIG_KEY_NS``, ``ctx.set(config)``). A password
label's value counts unless it reads as prose after ``is`` (:func:`plain_word`) or is
code (:func:`code_value`: ``password: Optional[str] = None``, ``password=self.password``,
``pwd = keys.pop(``), which the coding scene stores by the thousand.

Example:
    >>> looks_random("mB4vC7xZ1nQ9wE3rT6yU"), looks_random("CONFIG_KEY_CHECKPOINT_NS")
    (True, False)
    >>> code_value("Optional[str] = None", "="), code_value("Tr0ub4dor&3", ":")
    (True, False)
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Final

from hy_memory_langgraph.redact.rules import CASE_CHANGE, fold, load_rules, mentions_password, name_class

_CLASSES: Final = tuple(re.compile(p) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))
_NON_ALNUM: Final = re.compile(r"[^A-Za-z0-9]+")
#: A part of a name: letters with at most four digits after them, or a small number (an index).
_WORD_PART: Final = re.compile(r"[A-Za-z]+[0-9]{0,4}|[0-9]{1,3}")
_LOWER_RUN: Final = re.compile(r"[a-z]+")
#: A value that is code: a generic or bare type (an annotation), a call or subscript, a
#: role of reStructuredText (``:class:`…```), a list or dict of names, an attribute
#: (``self.password``), a statement (``raise …``).
_CODE: Final = re.compile(
    r"(?:Optional|Union|List|Dict|Tuple|Set|Sequence|Mapping|Literal|Annotated|Callable|list|dict|tuple|set|type)\["
    r"|\(?(?:str|bytes|bool|int|float|None|Any|object|SecretStr|SecretBytes|string|number|boolean|any|unknown)"
    r"(?:\s*$|\s*[=,|)\];]|\s+\|)"
    r"|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*[(\[]"
    r"|(?:class|func|meth|attr|paramref|ref|obj|mod|data|exc):`"
    r"|[\[{][A-Za-z_'\"][\w.'\"]*(?:[\]},:(]|$)"
    r"|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$"
    r"|(?:raise|return|yield|await|lambda)\b")
_IDENTIFIER_PATH: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_ATTRIBUTE_PATH: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
#: Two digits or more ending an attribute path: a password (``Meadow.willow8326``,
#: ``nimbus.meadow.pepper27``), unless the name is a type or an algorithm (``np.float64``,
#: ``hashlib.sha256``).
_TRAILING_DIGITS: Final = re.compile(r"(?<![.\d_])(?<!(?i:int|oat|lex|sha|.md|utf|ase|crc|.2b|.2s))\d{2,}$")
#: What stands for a value instead of being one: a template's field (``<token>``, ``{{ key }}``,
#: ``{token}``, ``%(key)s``), a variable (``$PASS``, ``${DB_PASSWORD}``, ``$(cat pw)``,
#: ``%PASSWORD%``), an environment variable's name (``YOUR_API_KEY``, ``ACCESS_TOKEN``), a mask
#: (``********``, ``xxxx``, ``…``), words that ask for the value (``your_password``, ``<your
#: password here>``, ``sk-...your-key-here``, ``changeme``, ``REPLACE_ME``), a secret store's
#: reference (``vault:secret/db#password``, ``ref+vault://…``, ``op://…``, an AWS ARN, ``!vault``).
_REFERENCE: Final = re.compile(
    r"(?:<[^<>\n]{1,80}>|\[[A-Za-z _-]{1,40}\]|\$\{[^{}\n]{1,80}\}|\$\(.{1,200}\)|\$[A-Za-z_][A-Za-z0-9_]{0,60}"
    r"|%[A-Za-z_][A-Za-z0-9_]{0,60}%|\{\{.{1,80}\}\}|\{[A-Za-z_][A-Za-z0-9_.]{0,60}\}|[*xX•·.…_#-]{3,}"
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|(?i:(?:your|my|the)[ _-][a-z _-]{2,30}(?:here)?|xxx\w*|placeholder|redacted)"
    r"|%\([A-Za-z_]\w{0,60}\)[sdr]|\S*(?:\.\.\.|…|(?i:your[_ -]?(?:api[_ -]?)?(?:key|token|secret|password|pass)"
    r"|[_-]here|replace[_-]?me|change[_-]?me|change[_-]?it|fill[_-]?me|x{6,}))\S*"
    # "change me" in other languages, with words after it only (ChangezMoi-8841 is a password)
    r"|(?i:changez[_-]?moi|cambia[_-]?me)(?:[_-][a-z]+)*"
    # a secret store's reference: Vault, Ansible Vault, vals' ref+…, 1Password, AWS and Google stores
    r"|(?:ref\+)?(?:vault|awssm|awsssm|gcpsm|azurekeyvault|sops|op|doppler|ssm)(?::|://)[\w./#:@-]{1,200}"
    r"|arn:aws:(?:secretsmanager|ssm):[\w./#:@+=-]{1,200}|!vault\b[^\n]{0,3})"
    r"[.,;:!?)]*")
_VARIABLE: Final = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def _unsayable_name(name: str) -> bool:
    """Whether a name after ``$`` is no variable's: random letters and digits (three case
    changes or digit runs among its words' parts, or looks random)."""
    return looks_random(name, min_length=8) and not wordy(name)


#: A credential's token inside a header's value: a run of the characters keys and tokens use.
_CREDENTIAL_TOKEN: Final = re.compile(r"[A-Za-z0-9+/_.~%-]{8,}={0,2}")


def entropy(text: str) -> float:
    """Shannon entropy of ``text``, in bits a character."""
    counts = Counter(text)
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


#: A key of a key-value store: lower-case words and numbers joined by colons, a word first
#: (``user:16003:profile``, ``rate-limit:ip:10``).
_STORE_KEY: Final = re.compile(r"[a-z][a-z_-]+(?::(?:[a-z][a-z_-]+|\d+))+")


def looks_random(value: str, min_length: int = 10) -> bool:
    """A token long enough, with two or more character classes and high Shannon entropy
    (keys, tokens, hashes; not words, numbers or names: :func:`wordy`; not a key-value
    store's key: :data:`_STORE_KEY`). Latin letters with marks read as letters
    (``próbálkozás`` is a word)."""
    if len(value) < min_length or _STORE_KEY.fullmatch(value):
        return False
    if not value.isascii():
        value = fold(value)
    classes = sum(bool(p.search(value)) for p in _CLASSES)
    return classes >= 2 and entropy(value) >= 3.0 and not wordy(value)


def wordy(value: str) -> bool:
    """Whether ``value`` is made of words, as names and code are (``CONFIG_KEY_NS``,
    ``ctx.set(config)``, ``getUserProfileById2``): split at every non-alphanumeric and at
    case changes, each part is letters with at most four digits after them (``X509``) or
    a number of up to three digits; and the lower-case runs are 2.5 letters long or more on
    average, or the parts three letters on average with at most a third shorter (random
    text changes case every letter or two: ``wJalrXUtnFEMI``). Without lower case, at most
    one part holds a digit and at most a third are shorter than three letters. Words can
    be said, and names hold few numbers (:func:`_unsayable`)."""
    parts = [p for chunk in _NON_ALNUM.split(value) for p in CASE_CHANGE.split(chunk) if p]
    if not parts or not all(_WORD_PART.fullmatch(p) for p in parts) or _unsayable(parts):
        return False
    letters = [len(p.rstrip("0123456789")) for p in parts]
    few_short = sum(n < 3 for n in letters) * 3 <= len(parts)
    lower = _LOWER_RUN.findall(value)
    if lower:
        return sum(map(len, lower)) / len(lower) >= 2.5 or (few_short and sum(letters) >= 3 * len(parts))
    return few_short and sum(any(c.isdigit() for c in p) for p in parts) <= 1


_VOWELLESS_RUN: Final = re.compile(r"[b-df-hj-np-tv-xz]{6,}")
_CAPITALS: Final = re.compile(r"[A-Z]{8,}")


def _unsayable(parts: list[str]) -> bool:
    """Whether the ``parts`` of a name (split at case changes) hold letters no word has:
    six lower-case consonants in a row (``xmwlpk``; ``y`` counts as a vowel), eight
    capitals or more of which under a quarter are vowels (``ZHCZRILDJ``), or three parts or
    more with digits (``D3``, ``VCZ1``, ``CG31``)."""
    if sum(any(c.isdigit() for c in p) for p in parts) >= 3:
        return True
    if any(_VOWELLESS_RUN.search(part) for part in parts):
        return True
    return any(sum(c in "AEIOUY" for c in run) * 4 < len(run) for p in parts for run in _CAPITALS.findall(p))


def plain_word(value: str) -> bool:
    """Letters only, of one case (or of a script without case): after ``is`` that reads
    as prose, not as a password."""
    if not value.isalpha():
        return False
    return value.islower() or value.isupper() or value.istitle() or \
        not any(c.islower() or c.isupper() for c in value)


#: First parts of an attribute path of code (``self.password``, ``os.environ``, ``settings.db.value``).
_CODE_ROOTS: Final = frozenset({
    "self", "this", "cls", "super", "os", "sys", "env", "environ", "process", "config", "conf", "cfg", "settings",
    "options", "opts", "args", "kwargs", "params", "ctx", "context", "request", "req", "response", "resp", "res",
    "app", "data", "form", "user", "auth", "db", "secrets", "vault", "creds", "credentials", "window", "document",
    "module", "exports", "props", "state", "np", "pd", "torch", "tf", "math", "json", "django", "flask", "models",
    "schema", "api", "client", "session", "obj", "item", "row", "record", "values", "input", "event", "payload",
    # packages and namespaces (java.util.Optional, org.springframework…, System.Text)
    "java", "javax", "jakarta", "org", "com", "net", "io", "android", "androidx", "kotlin", "scala", "std", "system",
    "microsoft", "google", "apache", "spring"})
#: A part of a path of words: letters, perhaps digits after them (``Velvet``, ``srv77``).
_PATH_WORD: Final = re.compile(r"[A-Za-z]{2,}\d*")


def word_path(value: str) -> bool:
    """Whether a dotted ``value`` is words joined by dots (a passphrase, a password shaped
    like a host name: ``maple.walnut.candle``, ``Velvet.Mitten.Lantern``,
    ``srv77.lantern.corp``) rather than an attribute of code: three parts or more, each
    letters (digits may follow) of one case or capitalised (no ``camelCase`` or
    ``SNAKE_CASE``), none naming a secret (``cfg.db.password``), no code root first
    (``self.…``, ``os.…``, ``settings.…``).

    Example:
        >>> [word_path(v) for v in ("maple.walnut.candle", "self.db.password", "np.random.seed", "a.b")]
        [True, False, False, False]
    """
    parts = value.split(".")
    return len(parts) >= 3 and parts[0].lower() not in _CODE_ROOTS \
        and all(_PATH_WORD.fullmatch(p) and (p.islower() or p.istitle()) for p in parts) \
        and not any(name_class(p) in ("password", "secret") for p in parts)


def code_value(value: str, sep: str) -> bool:
    """Whether a password label's ``value`` is code rather than a password: a type, a call,
    a subscript, a reStructuredText role, a list or dict of names or an attribute (not
    words joined by dots, :func:`word_path`, nor random characters with a dot among them,
    ``vGpjX6.f10HV5PZAEugF``); after ``=`` or ``:``, also a name without digits that itself
    names a password (``password=password``, ``shrink_pass: ShrinkPass``; ``Wg3tPass`` is a
    password)."""
    if _CODE.match(value):
        return not (_ATTRIBUTE_PATH.fullmatch(value) and (_TRAILING_DIGITS.search(value) or word_path(value)
                                                          or _random_path(value)))
    if sep in ("=", ":") and _IDENTIFIER_PATH.fullmatch(value) and not any(c.isdigit() for c in value):
        name = value.rsplit(".", 1)[-1]
        return name_class(name) == "password" or mentions_password(name)
    return False


def _random_path(value: str) -> bool:
    """Random characters with a dot among them: a part with digits among letters of both
    cases that reads as no name (``G5TXObou.I59Ybb``; ``Base64.Encoder``, ``int32.MAX``
    are names), or random as a whole; not a path of code (a code root first, a part naming
    a secret)."""
    parts = value.split(".")
    if parts[0].lower() in _CODE_ROOTS or any(name_class(p) is not None for p in parts):
        return False  # settings.Neo4j.password, cfg.oAuth2.clientSecret: an attribute of code
    return any(any(c.isdigit() for c in p) and not (p.islower() or p.isupper()) and not wordy(p) for p in parts) \
        or looks_random(value, min_length=10)


#: A value that is the name of what belongs there: a placeholder (``postgres://user:password@localhost``).
_PLACEHOLDER_WORDS: Final = frozenset({"password", "passwd", "pass", "pwd", "pw", "secret", "token", "apikey",
                                       "api_key", "passphrase", "mypassword", "yourpassword"})


#: Three mask characters or more inside a value, the rest a few characters on either side:
#: shown masked (``138****5678``, ``sk-…••••3f9a``; ``Tulip***42horse`` is a password).
_MASKED: Final = re.compile(r"[*•●]{3,}")
_MASK_SHOWS: Final = 4


def _masked(value: str) -> bool:
    return _MASKED.search(value) is not None and \
        all(len(part) <= _MASK_SHOWS for part in _MASKED.split(value.removeprefix("sk-").strip("….")))


def reference(value: str) -> bool:
    """Whether ``value`` stands for a secret instead of being one: a template's field, a
    variable, an environment variable's name, a mask, words asking for it (``<token>``,
    ``$DB_PASS``, ``${TOKEN}``, ``YOUR_API_KEY``, ``********``, ``your password here``), the
    name of what belongs there in any language (``password`` in ``user:password@host``,
    ``usuario:contraseña``), a masked value (``138****5678``).

    Example:
        >>> [reference(v) for v in ("$PASS", "<token>", "YOUR_API_KEY", "Tr0ub4dor&3", "$nzr4OtPvwglTwN")]
        [True, True, True, False, False]
    """
    match = _REFERENCE.fullmatch(value.strip())
    if match is None:  # user:password@host, USER:PASSWORD@HOST, usuario:contraseña; 138****5678, a masked phone number
        word = fold(value.strip().strip("\"'`.,;:!?").lower())
        return word in _PLACEHOLDER_WORDS or word in load_rules().password or _masked(value.strip())
    variable = _VARIABLE.fullmatch(match.group().rstrip(".,;:!?)"))
    # a variable's name is words ($DB_PASS, $dbPassword); $nzr4OtPvwglTwN is a password
    return variable is None or len(variable.group(1)) < 8 or not _unsayable_name(variable.group(1))


def holds_credential(value: str) -> bool:
    """Whether a header's ``value`` holds a credential: a token of eight characters or more
    that looks random (``Bearer <token>``, ``see the docs``, ``{credentials}`` hold none)."""
    return any(looks_random(token.strip("=").split("=")[-1] or token, min_length=8) and not reference(token)
               for token in _CREDENTIAL_TOKEN.findall(value))


#: Three words or more of three letters or more joined by one dot, dash or plus sign, or
#: capitalised words joined by underscores: in a string literal a passphrase
#: (``"velvet.tango.ember"``, ``"Walnut_Whisker_Candle"``), not an attribute or a name.
_LITERAL_PHRASE: Final = re.compile(r"[^\W\d_]{3,}([-+.])[^\W\d_]{3,}(?:\1[^\W\d_]{3,})+"
                                    r"|[A-Z][a-z]{2,}(?:_[A-Z][a-z]{2,}){2,}")


def literal_password(value: str) -> bool:
    """A string literal that reads as a password: letters with a digit, or with a symbol
    inside it (``P@ss!word``; ``guest@``, ``read:all`` and e-mail addresses are names),
    random letters, or words joined by dots or dashes (``velvet.tango.ember``)."""
    if not any(c.isalpha() for c in value) or not_a_value(value):
        return False
    return any(c.isdigit() for c in value) or not _PASSWORD_SYMBOLS.isdisjoint(value[1:-1]) \
        or looks_random(value, min_length=8) or _LITERAL_PHRASE.fullmatch(value) is not None


def _random_enough(value: str) -> bool:
    """A value behind a session cookie's name: 16 characters or more, letters and digits,
    high entropy (a random id of any case pattern), no code (``request.cookies.get(``)."""
    return len(value) >= 16 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value) \
        and entropy(value) >= 3.5 and not code_value(value, "") and not _STORE_KEY.fullmatch(value)


def long_digits(value: str) -> bool:
    """Sixteen digits or more: a network's key of digits (a FRITZ!Box's has twenty), longer
    than any phone number."""
    return len(value) >= 16 and value.isdigit()


def marker_value(test: str, value: str) -> int | None:
    """How much of the ``value`` a marker rule found is the secret, by the rule's ``test``
    (``None``: none of it). Every value that stands for a secret (:func:`reference`) is
    none; ``"random"``: a value that looks random (16 characters or more, a session
    cookie's); ``"cookie"``: a Cookie header's value, when it holds a credential;
    ``"credential"``: an ``Authorization`` header's value, one token (``Bearer
    …``) or, when it is a list of parameters (``Digest username="…", response="…"``,
    ``Credential=…, Signature=…``), all of it, if it holds a credential; ``"strong"``: a
    value that looks like a password (:func:`credential_like`) and holds a symbol or looks
    random, or a network key of digits (:func:`long_digits`); other tests take the value
    as it is. A markdown code span's closing backtick is no part of a value."""
    value = value.rstrip("`")
    if not value or reference(value):
        return None
    if test == "random":
        return len(value) if _random_enough(value) else None
    if test == "strong":
        return len(value) if long_digits(value) or (credential_like(value) and (
            not _PASSWORD_SYMBOLS.isdisjoint(value) or looks_random(value, min_length=8))) else None
    if test == "cookie":  # a Cookie header: a credential among its values (theme=dark; Path=/ holds none)
        return len(value) if holds_credential(value) else None
    if test == "credential":
        first = value.split(None, 1)[0]
        end = len(value.rstrip()) if "=" in first.rstrip("=") or first.endswith(",") else len(first)
        return end if holds_credential(value[:end]) else None
    return len(value)


#: Tokens that are no credential whatever label comes before them: dates, times, versions,
#: prices, numbers with a unit (``24h``, ``5pm``, ``12mm``, ``2nd``, ``100MB``, ``3-digit``),
#: digests by their hash's name (``SHA256:nThb…``, ``MD5:de:ad:…``, ``sha384-oqVu…``), e-mail
#: addresses, URLs and paths (phone numbers: :func:`not_a_value`).
_NOT_A_VALUE: Final = re.compile(
    r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{4}|\d{1,2}[/.]\d{1,2}[/.]\d{2}"
    r"|\d{1,2}[:h.]\d{2}(?::\d{2})?(?:[ap]\.?m\.?)?"
    r"|[vV]?\d+(?:\.\d+){1,3}(?:[-+][0-9A-Za-z.]+)?"
    r"|(?:[A-Z]{0,3}[$€£¥₹₩₽]|[$€£¥₹₩₽][A-Z]{0,3})\s?\d[\d.,]*[kKmM]?|\d[\d.,]*\s?[$€£¥₹₩₽]"
    r"|\d+(?:[.,]\d+)?(?:%|°[CF]?|[a-zµ]{1,3}|[KMGT]B|[AP]M)"
    r"|\d+-[^\W\d_]+"
    r"|(?i:sha(?:1|224|256|384|512)|md5)[:=-][A-Za-z0-9+/=:_-]+"
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}"
    r"|(?:[a-z][a-z0-9+.-]*:)?//\S*|www\.\S*"
    r"|(?:~|\.{1,2})?/(?:[\w.-]+/)*[\w.-]*|(?:[\w-]+/)+[\w-]*\.[A-Za-z]{1,5}")
#: The last labels of host names people write (a dotted name of words ending otherwise,
#: ``velvet.tango.ember``, may be a password).
PUBLIC_SUFFIXES: Final = ("com|net|org|io|co|uk|de|fr|nl|es|it|pl|ru|cn|jp|br|in|ca|au|ch|se|no|dk|fi|be|at|cz|eu"
                          "|us|app|dev|cloud|ai|info|biz|me|edu|gov")
#: Tokens that are no password when no separator comes before them: acronyms with a number,
#: model and flight codes (``WPA2-PSK``, ``AES-256``, ``GPT-4o``, ``BA2490``), command-line
#: flags (``--user=bob``), code's keyword arguments (``keystore=None``).
_NOT_A_BARE_VALUE: Final = re.compile(r"[A-Z]{1,6}-?\d{1,5}[A-Za-z]{0,3}(?:-[A-Z]{2,6})?|--?[A-Za-z][\w-]*(?:=\S*)?"
                                      r"|[A-Za-z_][\w.]*=\S*"
                                      # a host name under a public suffix (db-7.eu-west-1.rds.amazonaws.com)
                                      r"|(?:[a-z0-9][a-z0-9-]{0,62}\.)+(?:" + PUBLIC_SUFFIXES + ")")
#: Symbols that a password holds and prose does not (dashes, slashes, dots and apostrophes
#: join words: ``wi-fi``, ``Jacob—delayed``, ``and/or``; underscores join a name's words).
_PASSWORD_SYMBOLS: Final = frozenset("!#$%^&*+=?@~|\\<>{}[]")
#: Sentence punctuation around a token, not part of it.
_TRIM: Final = "\"'“”‘’«»()[]{}<>,;:!?.。，、；：！？*`"


#: Three words or more of three letters or more joined by one dash or plus sign: a
#: generated passphrase (``lynx-violet-mango``); prose compounds have a short word
#: (``up-to-date``, ``mother-in-law``) or two parts (``well-known``).
_JOINED_WORDS: Final = re.compile(r"[^\W\d_]{3,}([-+])[^\W\d_]{3,}(?:\1[^\W\d_]{3,})+")


#: A name with plus signs after it (``Disney+``, ``Notepad++``): a brand, not a password.
_BRAND: Final = re.compile(r"[A-Z]?[a-z]+\+{1,2}")


def credential_like(token: str) -> bool:
    """Whether ``token``, found after a password label with no separator before it, looks
    like a password: six characters or more, letters with a digit or a symbol
    (``Kado-bisa-36``, ``tiwo30do``, ``Sukavi%138``) or letters of both cases that look
    random; not a word, a date, a time, a version, a price, a phone number, a number with
    its unit, a model code, an address, a path, a reference, code, a brand (``Disney+``).

    Example:
        >>> [credential_like(t) for t in ("Kado-bisa-36", "tiwo30do", "lynx-violet-mango", "BA2490", "12mm",
        ...                               "wi-fi", "up-to-date", "router")]
        [True, True, True, False, False, False, False, False]
    """
    token = token.strip(_TRIM)
    if not 6 <= len(token) <= 128 or not_a_value(token) or _BRAND.fullmatch(token) or _NOT_A_BARE_VALUE.fullmatch(token) or reference(token) \
            or code_value(token, "="):
        return False
    letters = any(c.isalpha() for c in token)
    if letters and any(c.isdigit() for c in token):
        return True
    if _JOINED_WORDS.fullmatch(token):
        return True  # a passphrase of words joined by dashes or plus signs (lynx-violet-mango)
    return letters and (not _PASSWORD_SYMBOLS.isdisjoint(token) or looks_random(token, min_length=8))


def not_a_value(token: str) -> bool:
    """Whether ``token`` is something else than a secret, whatever label comes before it: a
    date, a time, a version, a price, a phone number, a number with its unit (``24h``,
    ``3-digit``), an e-mail address, a URL, a path, also with a grammatical ending
    (``2024-03-01에``), the name of a kind of network (``Wi-Fi``). (``12-34-56`` may be a combination.)"""
    suffixed = _SUFFIXED_NUMBER.fullmatch(token)  # 2024-03-01에, 2025-09-16-án, 10:30h
    if suffixed is not None:
        token = suffixed.group(1)
    if _NUMBER_WRITTEN.fullmatch(token) and (token.startswith("+") or 9 <= sum(c.isdigit() for c in token) <= 15):
        return True  # a phone number: a country code, or nine to fifteen digits
    if token.lower() in load_rules().networks:
        return True  # "mot de passe Wi-Fi est …": the network the password is of
    return _NOT_A_VALUE.fullmatch(token) is not None


_NUMBER_WRITTEN: Final = re.compile(r"\+?[\d() .-]+")
#: A number with a grammatical ending in letters of a language (Korean 에, Hungarian -án).
_SUFFIXED_NUMBER: Final = re.compile(r"(\d[\d./:-]*\d)-?[^\W\d_]{1,4}")


def quantity(text: str, end: int) -> bool:
    """Whether the number that ends at ``end`` in ``text`` is a quantity: a unit, a currency
    or a count follows it ("1500 yen", "4 digits", "30 days", "89文字"), or a currency sign
    comes before it."""
    rules = load_rules()
    if text.startswith(rules.cjk_units, end):
        return True
    following = _NEXT_WORD.match(text, end)
    return following is not None and following.group(1).lower() in rules.units


_NEXT_WORD: Final = re.compile(r"[ \t]?([^\W\d_]+|%|[$€£¥₹₩₽])")

#: A house number and a street word side by side ("27 Park Lane", "Hauptstraße 14", "ul. 5").
_HOUSE: Final = re.compile(r"(?<![\w])(\d{1,4}[A-Za-z]?)(?![\w])")
_LINE_WORD: Final = re.compile(r"[^\W\d_]+")
#: A postcode's place: after a comma, the number and a town's name (``, 69003 Lyon``).
_AFTER_COMMA: Final = re.compile(r",[ \t]*$")
_TOWN_AFTER: Final = re.compile(r"[ \t]*(?:[A-Z]{2}[ \t]+)?[^\W\d_a-z][^\W\d_]+")


def _address_line(line: str) -> bool:
    """Whether ``line`` reads as a postal address: a postcode word in it, or a street
    word beside a house number."""
    lowered = line.lower()
    rules = load_rules()
    if any(word in lowered for word in rules.postal):
        return True
    for house in _HOUSE.finditer(line):
        around = _LINE_WORD.findall(lowered[max(0, house.start() - 20):house.end() + 24])
        if rules.streets.intersection(around):
            return True
    return False


#: Most characters of a number's line read on each side for an address.
_ADDRESS_WINDOW: Final = 160


def postcode(text: str, start: int, end: int) -> bool:
    """Whether the number at ``start:end`` of ``text`` is a postcode: its line (at most
    :data:`_ADDRESS_WINDOW` characters each side) is an address (:func:`_address_line`)
    and the number has five digits or more, or a town's name follows it; or, on any line,
    it follows a comma and a town's name follows it (``…, 69003 Lyon``).

    Example:
        >>> text = "Flat 4, 27 Park Lane, Mumbai, PIN code: 400001"
        >>> postcode(text, 40, 46), postcode("door code 4821", 10, 14)
        (True, False)
    """
    window_start, window_end = max(0, start - _ADDRESS_WINDOW), min(len(text), end + _ADDRESS_WINDOW)
    line_start = text.rfind("\n", window_start, start)
    line_end = text.find("\n", end, window_end)
    line = text[window_start if line_start < 0 else line_start + 1:window_end if line_end < 0 else line_end]
    town = _TOWN_AFTER.match(text, end) is not None
    if town and _AFTER_COMMA.search(text, max(0, start - 8), start):
        return True
    return (end - start >= 5 or town) and _address_line(line)


_GROUP: Final = re.compile(r"[A-Za-z0-9]{4}")
_GROUPS: Final = re.compile(r"(?:[ -][A-Za-z0-9]{4}){3,15}(?![A-Za-z0-9])")


def grouped_key(text: str, start: int, token: str) -> int | None:
    """Where a key written in groups of four characters ends, when ``token`` (at ``start``)
    is the first group and three or more follow, separated by a space or a dash, and all
    of them together look random (a 2FA setup key: ``jbsw y3dp ehpk 3pxp …``)."""
    if not _GROUP.fullmatch(token):
        return None
    groups = _GROUPS.match(text, start + len(token))
    if groups is None:
        return None
    whole = token + groups.group().replace(" ", "").replace("-", "")
    return groups.end() if looks_random(whole, min_length=16) else None


_DOTTED_WORD: Final = re.compile(r"(?:^|\.)[a-z]{3,}(?:\.|$)")


def named_value(value: str) -> bool:
    """Whether a value after a key's or token's label is a name rather than a key: code
    (a call, a subscript, a type: ``type[httpx2.Auth]``), or dotted with a word of lower-case
    letters among its parts (``np.random.MT19937``, ``api.example.com``); a JSON web token's
    parts are random."""
    if ("(" in value or "[" in value) and code_value(value, ""):
        return True
    return "." in value and _DOTTED_WORD.search(value) is not None


_ASCII_ALNUM: Final = re.compile(r"[A-Za-z0-9]")


def prose_clause(clause: str) -> bool:
    """Whether a clause given after ``password:`` is prose about the password rather than
    the password: two words or more, none like a password, with a word of running prose
    among them ("same as for the email", "see the onboarding doc", "wie beim letzten
    Mal"), or, in Chinese or Japanese, no Latin letter or digit at all ("跟路由器上的一样":
    passwords are typed in ASCII, "我爱北京2024" is one)."""
    tokens = [t.strip(_TRIM) for t in clause.split()]
    if not _ASCII_ALNUM.search(clause) and any(not t.isascii() for t in tokens):
        return True
    if len(tokens) < 2 or any(credential_like(t) for t in tokens):
        return False  # one token, or a password among the words ("email Ciho-weto-55 (the bank one later)")
    return not load_rules().function_words.isdisjoint(t.lower() for t in tokens)


#: Fewest characters of a secret setting's value (a password's may be shorter).
_MIN_SETTING: Final = 6
_SETTING_NULLISH: Final = frozenset({"none", "null", "nil", "true", "false", "yes", "no", "on", "off", "~", "[]",
                                     "{}", "''", '""', "undefined", "redacted", "n/a", "na", "-", "tbd"})
#: Punctuation of code in a value (a call, a string, a format): ``f"{a}:{b}"``, ``'D->DdD'``.
_CODE_PUNCTUATION: Final = re.compile(r"[(){}\[\]\"'<>`]|->|=>|::")
#: A name of words joined by ``_``, ``.`` or ``-``, each perhaps with a number after it.
_SNAKE_NAME: Final = re.compile(r"_*[A-Za-z]+\d*(?:[_.-][A-Za-z]+\d*)*_*")


def setting_value(value: str, kind: str) -> bool:
    """Whether ``value``, given to a setting named for a secret of class ``kind`` (a line of
    configuration, a setter's argument), is one, as structured data judges it: under a
    password's name any value but a reference or code; under a secret's name a token of six
    characters or more that looks random, or holds letters and digits and is no name made of
    words (``token_counter2``), number, address, path or code; under a lone key a
    random-looking one.

    Example:
        >>> [setting_value(v, "secret") for v in ("HaK6HN6Jd0", "token_counter", "vault", "${TOKEN}")]
        [True, False, False, False]
    """
    if not value or value.lower() in _SETTING_NULLISH or value.startswith("[REDACTED:") or reference(value) \
            or code_value(value, "="):
        return False  # password = os.environ["DB_PASSWORD"], token: settings.TOKEN
    if kind == "password":
        return True
    if named_value(value):
        return False
    if " " in value or len(value) < _MIN_SETTING or value.isdigit() or not_a_value(value) \
            or _CODE_PUNCTUATION.search(value):
        return False
    if kind == "weak":
        return looks_random(value, min_length=16)
    return looks_random(value, min_length=8) or (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
                                                  and _SNAKE_NAME.fullmatch(value) is None)
