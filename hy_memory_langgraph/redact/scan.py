"""Find secrets in text: spans to replace, each with its kind.

Passes over the text, all linear in its length:

1. shapes and structures: credentials recognisable by their shape (``sk-…``, ``AKIA…``,
   JSON web tokens, …) and values behind fixed markers (``Authorization:`` of any scheme,
   ``Cookie:``, session cookies by name, the password of ``scheme://user:password@host``,
   command-line password flags, passwords passed to connect and login calls, ``.pgpass``
   and ``.netrc`` lines, ODBC ``{…}`` values), each marker's value judged by its rule's
   test (:func:`~.judge.marker_value`: a reference such as ``$PASS`` or ``<token>`` is
   none); each rule only on texts that hold one of the needles it declares; any vendor's key of the common shape (:mod:`.prefixed`), payment
   cards (:mod:`.cards`), seed phrases (:mod:`.seeds`), private key blocks (:mod:`.keys`),
   blocks of secrets in configuration text (:mod:`.blocks`);
2. the labelled-value grammar: values after a label that names a secret (a word, a stem
   with its ending, a phrase of ``patterns.toml`` in many languages) with ``:``, ``=``,
   full-width ``：``, a copula (``is`` / ``ist`` / ``是`` / ``là``…), an arrow, a dash, a
   table's or HTML's cell between them, markup around (``password: …``, ``支付密码：…``,
   ``**Passwort:** …``): a password label's value always counts unless it is code,
   a reference, a quantity or prose (:mod:`.judge`; after ``:`` to the end of its clause,
   so a passphrase of several words goes too), a secret label's only when it looks
   random; and, with no separator the lists know, the value judged in a window of words
   after the label (:mod:`.bridge`: "мой пароль от вайфая …", "salasanani on …");
3. the same over the text with JSON ``\\uXXXX`` escapes decoded, so ``"\\u5bc6\\u7801"``
   is seen as ``"密码"``; spans map back to the original text.

A value behind a marker or a label that reaches 200 characters is taken to the end of its
token (a 700-character session token goes whole). Existing placeholders
(``[REDACTED:kind]``) are never touched again.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from hy_memory_langgraph.redact.blocks import block_spans, may_hold_blocks
from hy_memory_langgraph.redact.bridge import ALIASING, bridged_spans, names_network
from hy_memory_langgraph.redact.calls import call_spans
from hy_memory_langgraph.redact.cards import card_numbers
from hy_memory_langgraph.redact.judge import (code_value, credential_like, grouped_key, holds_credential, looks_random,
                                              marker_value, named_value, not_a_value, plain_word, postcode, prose_clause,
                                              quantity, reference)
from hy_memory_langgraph.redact.keys import may_hold_keys, private_key_blocks
from hy_memory_langgraph.redact.lines import line_spans
from hy_memory_langgraph.redact.otp import otp_spans
from hy_memory_langgraph.redact.pins import pin_spans
from hy_memory_langgraph.redact.prefixed import prefixed_tokens
from hy_memory_langgraph.redact.public import public_spans
from hy_memory_langgraph.redact.rules import (NameClass, code_label, label_words, load_rules, mentions_password,
                                              name_class, open_key, split_name, trie)
from hy_memory_langgraph.redact.seeds import seed_phrases
from hy_memory_langgraph.redact.tables import table_spans

Span = tuple[int, int, str]
#: Which of two spans starting at one place wins: a credential's own shape (it knows
#: where the secret ends), then the common shape of vendor keys, then a value behind a
#: marker, then a labelled value.
_SHAPE, _PREFIXED, _MARKER, _LABEL = 0, 1, 2, 3

_PLACEHOLDER: Final = re.compile(r"\[REDACTED:[a-z_]+\]")
#: Words in angle brackets standing for a value (``<your password here>``, ``<db password>``).
_WORDS_PLACEHOLDER: Final = re.compile(r"<[A-Za-z][A-Za-z_-]*(?: [A-Za-z_-]+){1,6}>")
#: What comes right before a variable's name (``${DB_PASSWORD:-x}``, ``%(SECRET_KEY)s``).
_SIGILS: Final = ("$", "${", "%(", "%{", "{{")
#: Eight or more of a filler (``x``, ``X``, ``0``, ``*``): a credential's shape filled in by
#: hand (``ghp_xxxx…``, ``AKIA0000…``), no one's key; and the documentation's own samples
#: (``AKIAIOSFODNN7EXAMPLE``).
_FILLER_RUN: Final = re.compile(r"([xX0*])\1{7,}|EXAMPLE")
_ESCAPE: Final = re.compile(r"\\u([0-9a-fA-F]{4})")
#: Separators between a label and its value; the colon family allows a clause as value.
_COLONS: Final = (":", "=", "：", "＝", "|", "→", "=>", "->", "-", "–", "—", "::")
#: A note in brackets after a label that gives a type: the label is a documented parameter.
_TYPE_NOTE: Final = re.compile(r"(?i)\b(?:str|string|bool|boolean|int|integer|float|bytes|dict|list|tuple|set|"
                               r"optional|any|none|callable|sequence|mapping|secretstr|secretbytes)\b")
#: Markup around a label or a value: markdown emphasis and code, a closing bracket.
_MARKUP: Final = r"""[*_`\]\)"'”’]{0,4}"""
#: An HTML table's next cell, and the end of an element's opening tag (``<password>…``):
#: separators after which the value is one token.
_TOKEN_SEPARATORS: Final = r"</t[dh]>\s*<t[dh][^<>\n]{0,40}>|>"
_NULLISH: Final = frozenset({"none", "null", "nil", "true", "false", "yes", "no", "xxx", "***", "******", "n/a",
                             "undefined", "empty", "redacted"})
#: A line that sets something of its own (``DB_USER=app``, ``port: 8080``): no value of a
#: label whose line ends empty (``DB_PASSWORD=``).
_SETTING_LINE: Final = re.compile(r"[ \t]*(?:export[ \t]+)?[\"']?[A-Za-z_][\w.-]{0,80}[\"']?[ \t]*[=:]")
#: ``&`` ends a value only before the next parameter of a query (``&user=…``, ``&amp;``).
_NEXT_PARAM: Final = r"&(?=[A-Za-z_][\w.-]{0,40}=|amp;)"
#: A clause ends at a quote, except an apostrophe inside a word (``mother's``).
_CLAUSE_END: Final = re.compile(r"""["”;<>|`]|(?<![^\W\d_])['’]|['’](?![^\W\d_])|\*\*|""" + _NEXT_PARAM
                                + r"""|[,，。；、]|\.(?:\s|$)|\s{2,}|$""", re.M)
_MAX_CLAUSE: Final = 200
#: The longest value a pattern reads (``{1,200}``, a clause of 200 characters); a value that
#: long is taken on to the end of its token (:func:`_whole_token`).
_MAX_VALUE: Final = 200
#: A code's digits right after its label ("CVV 123", "安全碼812", "code confidentiel 5398").
_CODE_DIGITS: Final = re.compile(r"\d{3,8}")
#: "(was reset) to" before a value that is not all letters (``changed my password to
#: Blue$ky9``; "the password to the router is …" keeps ``is`` as its separator).
_TO_SEPARATOR: Final = (r"(?:(?:was|is|has\s+been|got|been)\s+)?(?:(?:re)?set|changed|updated)?\s*to"
                        r"(?=\s+\S*[^A-Za-z\s.,;:!?)])")
#: Separators that only a password label may take (a key's name "as" another is an import).
_PASSWORD_ONLY_SEPARATORS: Final = frozenset({"as", "be", "je", "'s", "’s"})
#: The next token holds a digit or a symbol, not only punctuation at its end ("well,").
_SYMBOL_NEXT: Final = r"""[ \t]+["'“‘]?[A-Za-z]*(?:[0-9#$%&*+/<=>@^_|~-]|[.,;:!?](?=[^\s"'“”‘’)]))"""
#: Words that separate a label from its value only before a value with a digit or a symbol
#: ("the new password will be Bl4ck-C0ffee", "set the password as GreenTea#42", Czech
#: "heslo je Praha2024"; also "password's Tangerine!9"): before a word, punctuation after
#: it included, they are prose ("the password as of today is …", "as well, …").
_VALUE_WORD_SEPARATOR: Final = r"""(?:be|as|je)(?=""" + _SYMBOL_NEXT + ")"
#: A word between a label and its separator: a word (``mom's`` too), an e-mail address or a
#: number ("password for jane@corp.com: …", "the PIN for my card ending 4242 is …").
_MORE_WORD: Final = r"(?:[^\W\d_][\w'’-]{0,20}|[\w.+-]{1,40}@[\w-]{1,40}(?:\.[\w-]{1,20}){1,4}|\d{1,8})"
#: An aside between commas after a label, or before its colon ("my router password, if you
#: need it, is …", "my cash card PIN, in case I forget: …").
_ASIDE: Final = r",[ \t]*[^\W\d_][^,\n:=：|]{0,30}(?:,|(?=[:：]))"
#: Labels of several codes ("backup codes", "recovery codes"), and the codes that follow the
#: first one: separated by commas, slashes or "and", each holding a digit.
_PLURAL_CODES: Final = re.compile(r"(?i)codes\b")
_CODE_LIST: Final = re.compile(r"(?:(?:[ \t]*[,;/][ \t]*|[ \t]+(?:and|or)[ \t]+|[ \t]+)(?=[^\s,;]*\d)[^\s,;]{3,39}[^\s,;.!?)])*")
#: Loose password words that are nouns: followed by words in prose, still a label ("pass"
#: only before a value that reads as a password: "pass for the shared account → Zedo#018").
_LOOSE_NOUN_LABELS: Final = frozenset({"pin", "pw", "otp", "pass"})
_WORD_TOKEN: Final = re.compile(r"[^\W\d_][\w-]*")
#: Chinese, Japanese and Korean separators: after them the value is the ASCII run that follows.
_CJK_SEPARATORS: Final = ("是", "为", "為", "は", "는", "은")
#: Quotes that may open a value, and the quote that closes each.
_CLOSING: Final = {'"': '"', "'": "'", "“": "”", "‘": "’", "「": "」", "『": "』", "`": "`"}
#: A value's characters: no space, quote, ``<`` (markup), backtick, ``|``, CJK punctuation,
#: ``,`` or ``;``, and ``&`` only inside it (not before a query's next parameter); any script.
#: A comma or semicolon between two of its characters is one too (``u,h?SE_6k``), unless a
#: parameter follows (``pwd=abc;uid=sa``) or it separates digits (``16,100``); so is a quote
#: next to a symbol (``Brioche"&681``, ``#'banjo``), and a double quote between letters
#: that no other closes on its line (``h"bmdr3m4*``; not ``r"…"``), not an apostrophe
#: between letters (``it's``).
_VALUE: Final = (r"""(?:[^\s"'“”‘’「」『』,;，。；、：！？（）【】&<`|]|&(?![A-Za-z_][\w.-]{0,40}=|amp;)"""
                 r"""|(?<=[^\s"'“”‘’,;])(?!(?<=\d)[,;]\d)[,;](?=[^\s"'“”‘’,;.!?)\]}>])(?![A-Za-z_][\w.-]{0,40}=)"""
                 r"""|(?:(?<=[^\w\s"'“”‘’,;])|(?<=\w)(?=.[^\w\s]))["'](?=[^\s"'“”‘’,;.!?)\]}>])|(?<=\w)"(?=\w[^"\n]*(?:\n|\Z)))""")
#: Labels whose value is words by nature: after them the whole clause is the secret.
#: A value that opens a template's field, a YAML tag or a placeholder (``{{ secrets.X }}``,
#: ``{% … %}``, ``${ … }``, ``!vault …``, ``!secret wifi_pw``, ``<your password here>``): it
#: stands for the secret.
_TEMPLATE_FIELD: Final = re.compile(r"\{\{[^{}\n]{1,80}\}\}|\{%[^\n]{1,80}%\}|\$\{[^{}\n]{1,80}\}|![A-Za-z][\w-]{0,30}[ \t]+\S"
                                     r"|<[^<>\n]{1,80}>")
_PASSPHRASE: Final = re.compile(r"(?i)pass\s*phrase|口令|seed phrase|recovery phrase|mnemonic phrase|助记词|助記詞|security answer"
                                r"|phrase secrète|phrase de passe|frase|wachtzin|lösenfras|passordfras|adgangssætning"
                                r"|salasanalause|фраз|fraza|パスフレーズ|암호 문구")
_ASCII_RUN: Final = re.compile(r"[ -~]{1,200}")
#: An ending a phrase label may take in alphabetic scripts (``codes``, ``пароля``, ``סיסמה``,
#: ``jelszavam``, a compound's ``ПИН-код``); not Chinese, Japanese or Korean (a particle there is a separator).
_INFLECTION: Final = r"(?:-(?=[^\W\d_]))?(?:(?![\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])[^\W\d_]){0,5}"


@functools.cache
def _phrases() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The phrase labels (lower case) written in ASCII (other languages' words, names of
    several words: found where no letter or digit comes before them, ``API-Key``) and the
    others (Chinese, Cyrillic, Latin letters with marks: found anywhere, so also at the end
    of a compound, ``Netzschlüssel``, ``wifilösenordet``)."""
    rules = load_rules()
    labels = sorted({*rules.phrase_password, *rules.phrase_secret}, key=len, reverse=True)
    return tuple(w for w in labels if w.isascii()), tuple(w for w in labels if not w.isascii())


def _phrase_group() -> str:
    """The phrase labels as a group of the label patterns (compiled ``IGNORECASE``)."""
    latin, other = _phrases()
    return (r"(?P<phrase>(?<![A-Za-z0-9])(?:" + "|".join(map(re.escape, latin)) + r")|(?:"
            + "|".join(map(re.escape, other)) + r"))")


def _folded_forms(word: str) -> set[str]:
    """The spellings of ``word`` that ``re.IGNORECASE`` matches, as they read once folded
    with :data:`_FOLD` (ASCII letters lower case, other letters in either case)."""
    forms = [""]
    for c in word:
        cases = {c.translate(_FOLD)} if c.isascii() else {c, c.lower(), c.upper()}
        forms = [f + x for f in forms for x in cases if len(x) == 1]
    return set(forms)


def _label_head() -> str:
    """The start both label patterns share: a whole ASCII token holding a label word
    (``name``), or a phrase label with its ending (``phrase``)."""
    return (r"(?:(?<![A-Za-z0-9_.-])(?P<name>[A-Za-z0-9_.-]{0,40}?" + trie(label_words()) + r"[A-Za-z0-9_.-]{0,40})"
            r"(?![A-Za-z0-9_.-])|" + _phrase_group() + _INFLECTION + r")")


@functools.cache
def _label_pattern() -> re.Pattern[str]:
    """A label (a whole ASCII token holding a label word, or a phrase label), up to six
    more words and a note in brackets, markup (``**Password:**``), a separator (``:``,
    ``=``, ``|``, an arrow, a dash, a word, an HTML cell or tag) and the value's first token."""
    return re.compile(
        _label_head() + r"(?P<more>(?:[ \t]+" + _MORE_WORD + r"){0,6}?(?:" + _ASIDE + r")?)"
        r"(?:[ \t]*\((?P<note>[^()\n]{0,40})\))?" + _MARKUP +
        r"\s{0,3}(?P<sep>:=|::|=>|->|[:=：＝|→–—]|(?<=\s)-(?=\s)|" + _TOKEN_SEPARATORS +
        r"|(?<=\s)" + _TO_SEPARATOR + r"|(?<=\s)" + _VALUE_WORD_SEPARATOR + r"|['’]s(?=" + _SYMBOL_NEXT + ")" +
        # a copula of patterns.toml ("is", "ist", "lautet", "là", …); a colon may follow it
        r"|(?<=\s)(?P<copula>" + "|".join(map(re.escape, load_rules().copulas)) + r")(?=[\s:：])|"
        + "|".join(_CJK_SEPARATORS) + r")"
        # after a copula, an adverb ("is now", "ist jetzt")
        r"[:：]?\*{0,3}\s{0,3}(?(copula)(?:(?:" + "|".join(map(re.escape, load_rules().copula_adverbs)) + r")[ \t]+)?)"
        r"(?P<quote>[\"'“‘「『`]?)"
        # the value is looked at, not consumed: a label inside it is found too
        r"(?=(?P<value>" + _VALUE + r"{1,200}))",  # _MAX_VALUE
        re.IGNORECASE)


@functools.cache
def _near_pattern() -> re.Pattern[str]:
    """A label and, with no separator, a value close after it: a few spaces or a few
    Chinese or Thai characters between (``secret wJalr…``, ``WiFi 密码 Home#1``, ``token 改成了
    t0k…``, ``รหัสผ่านคือ abc…``), a Chinese clause ending in a copula or "changed to"
    (``密码忘了，后来改成 Login_888``, ``社保密码，记得是 880115``), or none after a Chinese
    label (``支付密码123456``)."""
    return re.compile(
        _label_head() + r"(?:[ \t]{1,3}|[ \t]?[\u3040-\u30ff\u4e00-\u9fff\u0e00-\u0e7f\uac00-\ud7af]{1,6}[ \t]?"
        r"|[ \t]?[\u4e00-\u9fff，、]{1,9}(?:是|为|為|成|成了|为了)[ \t]?|(?<=[\u4e00-\u9fff]))"
        r"(?=(?P<value>[!#-&(-+\--:<-~]{3,200}))",
        re.IGNORECASE)


#: A range of numbers ("8-64 characters"): short numbers, the first the smaller (a PIN written
#: in two groups, "4827-1190", is none).
_RANGE: Final = re.compile(r"(\d{1,3})[-–](\d{1,3})")


def _number_not_code(text: str, start: int, value: str) -> bool:
    """Whether the ``value`` at ``start`` is digits or a range of numbers that are a
    quantity ("1500 yen", "8-64 characters") or a postcode."""
    end = start + len(value)
    ranged = _RANGE.fullmatch(value)
    if not (value.isdigit() or (ranged and int(ranged.group(1)) < int(ranged.group(2)))):
        return False
    return quantity(text, end) or postcode(text, start, end)


def _near_span(text: str, match: re.Match[str]) -> Span | None:
    value = match.group("value").rstrip(".,;:!?)]}")
    label = match.group("phrase") or match.group("name")
    kind = name_class(label)
    if kind in ("weak", "secret") and names_network(text, match.start(), []):
        kind = "password"  # "Netzwerk Home_5G, netwerksleutel Mercedes62@"
    start = match.start("value")
    if code_value(value, "") or value.startswith(("(", ":", "=", "|", "-", ">", "<")):
        return None  # a call, markup; or a separator, which makes it the label pattern's to judge
    if reference(value) or reference(match.group("value")) or not_a_value(value) \
            or _number_not_code(text, start, value):
        return None
    if kind == "password" and code_label(label) and _CODE_DIGITS.fullmatch(value):
        return start, start + len(value), "password"
    if kind == "password" and label.lower() not in load_rules().loose and len(value) >= 4 \
            and not plain_word(value) and any(not c.isalpha() for c in value):
        return start, start + len(value), "password"
    if (kind == "secret" and looks_random(value, min_length=12)) or \
            (kind in ("weak", "password") and looks_random(value, min_length=16)):
        return start, start + len(value), "secret_value"
    return None


def _clause_end(text: str, start: int) -> int:
    """Where the clause starting at ``start`` ends (a passphrase of several words)."""
    match = _CLAUSE_END.search(text, start, start + _MAX_CLAUSE)
    end = match.start() if match else min(len(text), start + _MAX_CLAUSE)
    return len(text[start:end].rstrip()) + start


def _password_end(text: str, match: re.Match[str], label: str, value: str) -> int | None:
    """Where the value of a password label ends, or ``None`` when it is no password
    (:func:`_refused`): a quoted value at its closing quote, else :func:`_unquoted_end`."""
    start = match.start("value")
    first = split_name(label)[:1]
    # pass, pin, pw, and codes (a PIN, a card's or a door's code): the token only, no words
    loose = (bool(first) and first[0] in load_rules().loose) or code_label(label)
    close = _closing_quote(text, start, match.group("quote"))
    if close is not None and reference(text[start:close]):
        return None  # "{{ vault_db_password }}", "$(cat ~/.secrets/pw)": a template, a command
    if _refused(match, label, value if close is None else text[start:close], loose, quoted=close is not None):
        return None
    return close if close is not None else _unquoted_end(text, match, label, value, loose)


def _closing_quote(text: str, start: int, quote: str) -> int | None:
    """Where the quote that opened a value closes, on the same line; ``None``: not quoted."""
    if not quote:
        return None
    close = text.find(_CLOSING[quote], start, start + _MAX_CLAUSE)
    return close if close > start and "\n" not in text[start:close] else None


def _refused(match: re.Match[str], label: str, value: str, loose: bool, *, quoted: bool) -> bool:
    """Whether a password label's value is no password: too short, code, a documented
    parameter (``password (str, optional): …``), a number after "to" ("the password to 100
    users"; a PIN's is its value), or, unquoted, prose after ``is`` or a loose label."""
    sep = match.group("sep")
    if (match.group("note") and _TYPE_NOTE.search(match.group("note"))) or len(value) < 3 \
            or code_value(value, sep):
        return True
    if sep.endswith("to") and value.isdigit() != (loose or "passcode" in label.lower()):
        return True
    if value.isdigit() and "pass" in split_name(label):
        return True  # a pass's number is its price or its count ("the pass is 1500 at the gate")
    if not quoted and value.lower() in load_rules().before_ids:
        return True  # "… on the router's sticker — model 9821": an id named by its noun
    words = _PASSPHRASE.search(label) is not None  # its value is words
    return not quoted and (loose or sep.lower() in load_rules().copulas) and plain_word(value) and not words


def _unquoted_end(text: str, match: re.Match[str], label: str, value: str, loose: bool) -> int | None:
    """Where an unquoted password ends (:func:`_first_value_end`); after a label of several
    codes, the codes that follow the first ("backup codes are 1234-5678, 9012-3456")."""
    end = _first_value_end(text, match, label, value, loose)
    if end is not None and _PLURAL_CODES.search(text, match.start(), match.start("sep")):
        listed = _CODE_LIST.match(text, end)
        end += len(listed.group()) if listed else 0
    return end


def _first_value_end(text: str, match: re.Match[str], label: str, value: str, loose: bool) -> int | None:
    """Where an unquoted password ends: after a colon (not of a loose label) or a
    passphrase label the clause, unless it names a password itself ("password: the
    database password"); in an element or a table cell, after a CJK separator the ASCII
    run, else the token."""
    sep, start = match.group("sep"), match.start("value")
    if sep == ">":  # an element, <password>value</password>; not <password>@host or (?P<password>…)
        return start + len(value) if text.startswith("</", start + len(value)) else None
    if sep.startswith("<"):  # an HTML table's next cell
        return start + len(value)
    if (sep in _COLONS and not loose) or _PASSPHRASE.search(label):
        end = max(_clause_end(text, start), start + len(value))
        if end > start + len(value) and mentions_password(text[start:end]):
            return None  # "password: the database password"
        copula = sep.lower() in load_rules().copulas
        if _PASSPHRASE.search(label):
            return _said_words_end(text, start, end) if copula else end  # "passphrase: the cat sat on the mat"
        return None if prose_clause(text[start:end]) else end
    if sep in _CJK_SEPARATORS:  # 密码是abc def：the ASCII run after the label
        run = _ASCII_RUN.match(text, start)
        if not run or not run.group().strip() or (run.group().isdigit() and quantity(text, run.end())):
            return None  # パスワードは8文字以上: a count
        return start + len(run.group().rstrip())
    return start + len(value)


def _said_words_end(text: str, start: int, end: int) -> int | None:
    """Where the words of a passphrase said after a copula end ("the passphrase is thunder
    velvet lantern and the target is …"): before the first word of running prose; ``None``
    when that is the first word ("… is in the safe") or one word is all there is ("… is long")."""
    words = list(re.finditer(r"\S+", text[start:end]))
    prose = load_rules().function_words
    kept = next((i for i, w in enumerate(words) if w.group().lower().strip(".,;:!?") in prose), len(words))
    return None if kept < 2 else start + words[kept - 1].end()


def _label_kind(match: re.Match[str], value: str) -> tuple[str, NameClass | None]:
    """A label with the words after it (addresses and numbers among them left out: they
    name whose secret it is) and its class. A loose noun followed by words is a label in
    prose, unless a qualifier follows ("the PIN length is 6"): ``pw`` always, ``PIN`` and
    ``OTP`` before digits ("the PIN for my card ending 4242 is 9931"; "the pin for the
    shelf is 12mm" is hardware)."""
    head = match.group("phrase") or match.group("name")
    words = [w for w in re.split(r"[\s,]+", match.group("more") or "") if _WORD_TOKEN.fullmatch(w)]
    label = " ".join([head, *words])
    kind = name_class(label)
    if kind in ("weak", "secret") and name_class(head) is not None \
            and names_network(match.string, match.start(), words):
        kind = "password"  # "the guest network is HomeNet-5G and the key is …": the network's password
    if kind is not None and open_key(head, words, match.string, match.start()):
        return label, None  # "my public key:", "clé publique", "Cache key:": no secret
    if kind is None and words and head.lower() in _LOOSE_NOUN_LABELS and name_class(" ".join(words)) is None \
            and not load_rules().qualifiers.intersection(w.lower() for w in words) \
            and (head.lower() == "pw" or (value.isdigit() if head.lower() != "pass" else credential_like(value))):
        kind = "password"
    return label, kind


#: A query string of parameters (``?sv=2022-11-02&ss=b&sig=…``).
_QUERY: Final = re.compile(r"\??[A-Za-z_][\w.-]{0,40}=[^\s&]*&\S+")


def _label_span(text: str, match: re.Match[str]) -> Span | None:
    value, sep = match.group("value").rstrip(".,;:!?)]}"), match.group("sep")
    if not value or value.lower() in _NULLISH or _PLACEHOLDER.match(text, match.start("value")) \
            or text.endswith(_SIGILS, 0, match.start()):
        return None  # ${DB_PASSWORD:?missing}: a variable's name, not a label
    between = text[match.end("sep"):match.start("value")]
    if "*" in between and between[-1].isspace() and not text.endswith("**", 0, match.start()):
        return None  # "password=*** mfa=true": the stars are a masked value (not markup: **Password:** …)
    if _TEMPLATE_FIELD.match(text, match.start("value")):
        return None  # "password: {{ secrets.DEPLOY }}", "password: !vault prod/db": a reference
    label, kind = _label_kind(match, value)
    start = match.start("value")
    line_start = text.rfind("\n", match.end("sep"), start) + 1
    if line_start and _SETTING_LINE.match(text, line_start):
        return None  # "DB_PASSWORD=" empty, then "DB_USER=app": the next line is a setting of its own
    grouped = grouped_key(text, start, value) if kind is not None else None
    if grouped is not None:  # a 2FA key in groups of four: "setup key: jbsw y3dp ehpk 3pxp …"
        return start, grouped, "password" if kind == "password" else "secret_value"
    if reference(value) or reference(match.group("value")) or not_a_value(value) \
            or _number_not_code(text, start, value):
        return None  # "password: $DB_PASS", "Season pass: $129", "pass is 1500 yen", "code sent to +44 …"
    if sep == "|" and "|" not in text[text.rfind("\n", 0, match.start()) + 1:match.start()]:
        return None  # "|" separates a table's cells, not "a: A | B" (a union of types)
    if sep.lower() == "as" and ("_" in value or ALIASING.search(text, text.rfind("\n", 0, start) + 1, start)):
        return None  # an alias in code: "import password as pw2", "SELECT password AS pw_2"
    if kind == "password":
        end = _password_end(text, match, label, value)
        return None if end is None else (start, end, "password")
    if sep.lower() in _PASSWORD_ONLY_SEPARATORS:  # "import token_provider as k8s_provider" is code
        return None
    query = _QUERY.match(text, start) if kind in ("secret", "weak") else None
    if query is not None:  # "SAS token: ?sv=…&sig=…": a query string given as the token is the token whole
        return (start, query.end(), "secret_value") if holds_credential(query.group()) else None
    if kind in ("secret", "weak") and named_value(value):
        return None  # a call: token = base64.b64encode(mac.digest()); a dotted name (a dotted token may be a key)
    if kind == "secret" and looks_random(value, min_length=8):
        return start, start + len(value), "secret_value"
    if kind == "weak" and looks_random(value, min_length=16):
        return start, start + len(value), "secret_value"
    return None


#: Case folding as ``re.IGNORECASE`` applies it to ASCII letters, one character for one
#: (so positions stay): A-Z, and the four non-ASCII letters that match one of them.
_FOLD: Final = str.maketrans({**{c: c.lower() for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
                              "\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
_FOLDED_TOKEN: Final = re.compile(r"[a-z0-9_.-]+")
#: A label word that is a flag's or a setting's value, no label: "=password" then a space
#: (``vault kv get -field=password secret/app/db``; ``--from-literal=password=…`` is one).
_VALUE_OF_FLAG: Final = re.compile(r"=[A-Za-z0-9_.-]+(?:\s|$)")


@functools.cache
def _label_hints() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The label words and the phrase labels that begin with an ASCII character, as they
    read in the folded text; the other phrase labels (any case)."""
    latin, other = _phrases()
    words = {w.lower() for w in label_words()}
    return (re.compile(trie(words)), re.compile(trie({f for w in latin for f in _folded_forms(w)})),
            re.compile(trie(other), re.IGNORECASE))


def _label_starts(text: str, folded: str | None = None) -> list[int]:
    """Every place a label pattern can match: the start of an ASCII token holding a label
    word (any case), and every phrase label (Latin letters in any case, Chinese, Cyrillic,
    …); the patterns' own look-behind allows no other. Words and Latin phrases are found
    in the case-folded text, case-sensitively: a case-insensitive regex alternation of
    them costs hundreds of microseconds on ordinary prose. A word never spans two tokens,
    so the first word found in a token is enough."""
    words, latin, phrases = _label_hints()
    folded = text.translate(_FOLD) if folded is None else folded
    hits = [m.start() for m in words.finditer(folded)]
    # the other phrase labels begin with a character that is not ASCII
    starts = set() if text.isascii() else {m.start() for m in phrases.finditer(text)}
    starts.update(m.start() for m in latin.finditer(folded))
    if hits:
        for token in _FOLDED_TOKEN.finditer(folded):
            i = bisect.bisect_left(hits, token.start())
            if i < len(hits) and hits[i] < token.end() and not _VALUE_OF_FLAG.match(text, token.start() - 1):
                starts.add(token.start())
    return sorted(starts)


@functools.cache
def _head_pattern() -> re.Pattern[str]:
    """A label alone (its head: a word, a stem, a phrase with its ending)."""
    return re.compile(_label_head(), re.IGNORECASE)


def label_heads(text: str, starts: list[int] | None = None) -> list[re.Match[str]]:
    """The labels in ``text`` (matches with a ``name`` or a ``phrase`` group), tried at
    ``starts`` (by default every place a label may start)."""
    return _matches_at(_head_pattern(), text, _label_starts(text) if starts is None else starts)


def label_starts(text: str) -> list[int]:
    """Where a label may start in ``text`` (a token holding a label word, a phrase label),
    in order: a text without any holds no labelled secret."""
    return _label_starts(text)


def _matches_at(pattern: re.Pattern[str], text: str, starts: list[int]) -> list[re.Match[str]]:
    """What ``pattern.finditer(text)`` finds, trying only ``starts`` (non-overlapping, in
    order); a label pattern scanned at every position costs hundreds of microseconds on
    ordinary prose, this a few."""
    found: list[re.Match[str]] = []
    end = 0
    for start in starts:
        if start < end:
            continue
        match = pattern.match(text, start)
        if match is not None:
            found.append(match)
            end = max(match.end(), start + 1)
    return found


def _judged(pattern: re.Pattern[str], judge: Callable[[str, re.Match[str]], Span | None], text: str,
            starts: list[int]) -> list[Span]:
    """The spans ``judge`` gives the matches of ``pattern`` at ``starts``; a match judged to
    hold no value does not hide the labels inside it ("Authy manual entry code: …": the
    match from ``Authy`` holds none, the one from ``entry code`` does); labels inside a
    value taken are not read again (linear time)."""
    found: list[Span] = []
    end = 0
    for start in starts:
        if start < end:
            continue
        match = pattern.match(text, start)
        span = judge(text, match) if match is not None else None
        if span is not None:
            found.append(span)
            end = max(match.end(), span[1], start + 1)  # type: ignore[union-attr]
    return found


#: A rule: its kind, pattern, needles (one of them is in every text it matches), whether
#: they are looked for in the case-folded text, and a marker's value test
#: (:func:`~.judge.marker_value`).
_Rule = tuple[str, re.Pattern[str], tuple[str, ...], bool, str]


@functools.cache
def _sized_rules() -> tuple[tuple[_Rule, ...], tuple[_Rule, ...]]:
    """The shape and marker rules, each with its needles (a text holding none of them
    skips the rule: most texts try only a few of the 90 patterns)."""
    rules = load_rules()
    tokens = [(kind, p, needles, bool(p.flags & re.IGNORECASE), "") for kind, p, needles in rules.tokens]
    headers = [(kind, p, needles, bool(p.flags & re.IGNORECASE), test) for kind, p, needles, test in rules.headers]
    return tuple(tokens), tuple(headers)


@functools.cache
def _all_needles() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every rule's needles, once each: those looked for in the text, and in the folded text."""
    rules = [rule for group in _sized_rules() for rule in group]
    plain = {n for _, _, needles, fold, _ in rules if not fold for n in needles}
    folded = {n for _, _, needles, fold, _ in rules if fold for n in needles}
    return tuple(sorted(plain)), tuple(sorted(folded))


def _tried(rules: tuple[_Rule, ...], present: tuple[set[str], set[str]]) -> Iterator[_Rule]:
    """The rules that may match a text holding the ``present`` needles (in the text, in
    the folded text): one of their needles is there."""
    for rule in rules:
        _, _, needles, fold, _ = rule
        if not present[fold].isdisjoint(needles):
            yield rule


def marker_spans(rules: Iterable[_Rule], text: str) -> list[Span]:
    """The values the marker ``rules`` find in ``text``: each rule's ``secret`` group, as
    far as its value test takes it (:func:`~.judge.marker_value`)."""
    found = []
    for kind, pattern, *_, test in rules:
        for match in pattern.finditer(text):
            start = match.start("secret")
            size = marker_value(test, match.group("secret"))
            if size:
                found.append((start, start + size, kind))
    return found


def _spans(text: str) -> list[tuple[int, int, str, int]]:
    tokens, headers = _sized_rules()
    folded = text.translate(_FOLD)
    plain, fold = _all_needles()  # each needle looked for once, not once per rule
    present = ({n for n in plain if n in text}, {n for n in fold if n in folded})
    spans = [(m.start(), m.end(), kind, _SHAPE) for kind, pattern, *_ in _tried(tokens, present)
             for m in pattern.finditer(text) if not _FILLER_RUN.search(m.group())]
    spans += [(start, end, kind, _PREFIXED) for start, end, kind in prefixed_tokens(text)]
    spans += [(start, end, kind, _SHAPE) for start, end, kind in card_numbers(text)]
    spans += [(start, end, kind, _SHAPE) for start, end, kind in seed_phrases(text)]
    spans += [(start, end, kind, _SHAPE) for start, end, kind in otp_spans(text, folded)]
    spans += [(start, end, kind, _LABEL) for start, end, kind in pin_spans(text)]
    if may_hold_keys(text, folded):
        spans += [(start, end, kind, _SHAPE) for start, end, kind in private_key_blocks(text)]
    spans += [(*span, _MARKER) for span in marker_spans(_tried(headers, present), text)]
    spans += [(*span, _MARKER) for span in call_spans(text, folded)]
    spans += [(*span, _MARKER) for span in line_spans(text)]
    spans += [(*span, _MARKER) for span in table_spans(text)]
    if may_hold_blocks(folded):  # secrets:, credentials:, a Kubernetes Secret's data:
        spans += [(start, end, kind, _MARKER) for start, end, kind in block_spans(text)]
    # a word inside a credential's own shape (a seed phrase's "parole"), a placeholder's kind
    # ("password") or a placeholder of words ("<your password here>") is no label
    taken = [(start, end) for start, end, _, rank in spans if rank == _SHAPE]
    taken += [(m.start(), m.end()) for m in _PLACEHOLDER.finditer(text)] if "[REDACTED:" in text else []
    taken += [(m.start(), m.end()) for m in _WORDS_PLACEHOLDER.finditer(text)] if "<" in text else []
    starts = _outside(taken, _label_starts(text, folded))
    spans += [(*span, _LABEL) for span in _judged(_label_pattern(), _label_span, text, starts)]
    spans += [(*span, _LABEL) for span in _judged(_near_pattern(), _near_span, text, starts)]
    spans += [(*span, _LABEL) for span in bridged_spans(text, label_heads(text, starts))]
    return spans


def _outside(ranges: list[tuple[int, int]], positions: list[int]) -> list[int]:
    """The ``positions`` in none of the ``ranges`` (merged once, each position bisected)."""
    if not ranges:
        return positions
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    firsts = [start for start, _ in merged]
    return [p for p in positions if (i := bisect.bisect_right(firsts, p) - 1) < 0 or merged[i][1] <= p]


def _decoded(text: str) -> tuple[str, list[int]] | None:
    """``text`` with ``\\uXXXX`` escapes decoded, and each decoded character's start in
    ``text`` (plus the end), or ``None`` when it has none."""
    if "\\u" not in text:
        return None
    out: list[str] = []
    origin: list[int] = []
    pos = 0
    for match in _ESCAPE.finditer(text):
        out.append(text[pos:match.start()])
        origin.extend(range(pos, match.start()))
        out.append(chr(int(match.group(1), 16)))
        origin.append(match.start())
        pos = match.end()
    out.append(text[pos:])
    origin.extend(range(pos, len(text) + 1))
    return "".join(out), origin


_VALUE_RUN: Final = re.compile(_VALUE + "*")


def _whole_token(text: str, end: int) -> int:
    """Where the token that a value cut at :data:`_MAX_VALUE` characters really ends: a
    labelled value is removed whole (an AWS session token is 700 characters and more)."""
    match = _VALUE_RUN.match(text, end)
    return match.end() if match else end


def scan(text: str) -> list[Span]:
    """Non-overlapping ``(start, end, kind)`` spans of the secrets in ``text``, in order; a
    value behind a marker or a label that reached :data:`_MAX_VALUE` characters goes on to
    the end of its token (each character looked at once: spans that start inside one taken
    are dropped before they are extended)."""
    spans = _spans(text)
    decoded = _decoded(text)
    if decoded is not None:
        view, origin = decoded
        spans += [(origin[s], origin[e], kind, rank) for s, e, kind, rank in _spans(view)]
    protected = [(m.start(), m.end()) for m in _PLACEHOLDER.finditer(text)]
    starts = [start for start, _ in protected]
    # public keys by their shape: a label before one ("my public key:") or the common shape of
    # vendors' keys (pk_live_…) takes it for a secret
    public = public_spans(text) if spans else []
    public_starts = [start for start, _ in public]
    kept: list[Span] = []
    for start, end, kind, rank in sorted(spans, key=lambda s: (s[0], s[3], -(s[1] - s[0]))):
        if kept and start < kept[-1][1]:
            continue
        if rank >= _MARKER and end - start >= _MAX_VALUE:
            end = _whole_token(text, end)
        span = (start, end, kind)
        if not _overlaps(protected, starts, span) and not (rank in (_PREFIXED, _LABEL) and _overlaps(public, public_starts, span)):
            kept.append(span)
    return kept


def _overlaps(protected: list[tuple[int, int]], starts: list[int], span: Span) -> bool:
    """Whether ``span`` touches one of the sorted, disjoint ``protected`` ranges."""
    i = bisect.bisect_right(starts, span[0])  # protected[i - 1] starts at or before the span
    return (i > 0 and protected[i - 1][1] > span[0]) or (i < len(protected) and starts[i] < span[1])
