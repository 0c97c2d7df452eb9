"""The redactor's rules, read from ``patterns.toml`` and compiled once, on first use.

Example:
    >>> rules = load_rules()
    >>> [kind for kind, *_ in rules.tokens][:2]
    ['private_key', 'anthropic_key']
    >>> name_class("db_password"), name_class("max_tokens"), name_class("X-API-Key")
    ('password', None, 'secret')
"""

from __future__ import annotations

import functools
import re
import tomllib
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

PATTERNS_PATH: Final = Path(__file__).with_name("patterns.toml")
#: No ASCII letter, digit or underscore on this side (Chinese text around a key is fine).
_EDGE_BEFORE: Final = r"(?<![A-Za-z0-9_])"
_EDGE_AFTER: Final = r"(?![A-Za-z0-9_])"
#: Where a name's words meet in camel case (``dbPassword``, ``XMLKey``).
CASE_CHANGE: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS: Final = re.compile(r"[\W_]+")

#: Words that may follow a loose password word in its name (``pin code``, ``pass_no``,
#: ``PIN-koodini``, ``PIN-koden``, ``PIN kodu``); any other makes it a verb or a prefix
#: (``pass_through``, ``pass_args``).
_LOOSE_NOUNS: Final = frozenset({"number", "num", "no", "word", "phrase", "nummer", "numero", "número", "nr",
                                 # an article or a case ending after a hyphen: PIN-ul, PIN-en, PIN-i
                                 "ul", "en", "et", "i", "a", "u"})
_LOOSE_NOUN_STEMS: Final = ("code", "cod", "kod", "kood", "kód")

NameClass = Literal["password", "secret", "weak"]

#: Most letters after a label word's stem (an inflection, a possessive ending, ``-ni``, ``-unk``).
STEM_ENDING: Final = 5
#: Names of groups whose members are secrets (the last word of the group's name).
GROUP_WORDS: Final = ("secrets", "credentials", "creds", "passwords")
#: Member names that are no secret inside such a group (beside the qualifiers).
_NOT_MEMBERS: Final = frozenset({"user", "username", "login", "email", "account", "host", "hostname", "port",
                                 "region", "database", "scope", "scopes", "description", "method", "provider",
                                 "created", "updated", "issuer", "audience"})


@dataclass(frozen=True)
class Rules:
    """Compiled rules.

    Attributes:
        tokens: ``(kind, pattern, needles)``: the whole match is a secret; every match
            holds one of the ``needles`` (in its case-folded form for a case-insensitive
            pattern), so a text without any skips the pattern.
        headers: ``(kind, pattern, needles, test)``: the ``secret`` group is, as far as its
            value test says (:func:`~.judge.marker_value`; ``""``: any value that is no reference).
        password, secret, weak: Label words of each class (lower case, no separators).
        password_stems, secret_stems: Stems of label words: a word holding one, with at most
            :data:`STEM_ENDING` letters after it, is of the class (``salasanani``, ``anahtarı``).
        loose: Password words that need a separator before their value.
        codes: Password words whose value may be digits alone (a PIN, a card's CVV).
        networks: Words naming a wireless network: a lone ``key`` in their sentence is its password.
        pairs: Word pairs naming a secret.
        phrase_password, phrase_secret: Labels of each class found as a run of characters
            (lower case): Chinese, other languages, names of several words.
        phrase_codes: Phrase labels whose value may be digits alone.
        qualifiers: Words that make a name describe a secret rather than hold one.
        open_keys: Words that make a key's label name no secret (a public key, a cache key),
            after it or just before it.
        key_words: The word "key" in languages, folded (stems too): what open keys qualify.
        copulas: Words between a label and its value that say "is" (``ist``, ``lautet``, ``là``).
        copula_adverbs: Words that may stand between a copula and the value ("is now", "ist jetzt").
        as_words: Words that say "as" between a value and its label ("X als Passwort").
        units, cjk_units: Words after a number that make it a quantity (``yen``, ``digits``, ``文字``).
        before_numbers: Words after which a number is a date or a count (``in``, ``since``).
        before_ids: Nouns an id follows (``model``, ``commit``, ``booking``): the next token is no value.
        function_words: Words of running prose (``the``, ``same``, ``see``, ``siehe``, ``même``).
        two_factor: Words that speak of two-factor setup (``2fa``, ``authenticator``, ``二段階認証``).
        code_lists: Labels of a list of backup codes (``backup codes``, ``резервные коды``).
        seed_labels: Words naming a seed phrase (``seed``, ``助记词``): before a run of list
            words, the run is a phrase whatever its checksum (:mod:`.seeds`).
        calls: Names and words of calls that take a credential by its place (:mod:`.calls`).
        pin_codes, pin_opens: Words for a code and for what a code opens (:mod:`.pins`).
        postal, streets: Words naming a postcode, and words of a street or a flat
            (:func:`~.judge.postcode`).
    """

    tokens: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...]
    headers: tuple[tuple[str, re.Pattern[str], tuple[str, ...], str], ...]
    password: frozenset[str]
    password_stems: tuple[str, ...]
    secret_stems: tuple[str, ...]
    loose: frozenset[str]
    codes: frozenset[str]
    secret: frozenset[str]
    weak: frozenset[str]
    networks: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    phrase_password: tuple[str, ...]
    phrase_secret: tuple[str, ...]
    phrase_codes: tuple[str, ...]
    qualifiers: frozenset[str]
    open_keys: frozenset[str]
    key_words: tuple[str, ...]
    copulas: tuple[str, ...]
    copula_adverbs: tuple[str, ...]
    as_words: frozenset[str]
    units: frozenset[str]
    cjk_units: tuple[str, ...]
    before_numbers: frozenset[str]
    before_ids: frozenset[str]
    function_words: frozenset[str]
    two_factor: tuple[str, ...]
    code_lists: tuple[str, ...]
    seed_labels: tuple[str, ...]
    calls: dict[str, frozenset[str]]
    pin_codes: tuple[str, ...]
    pin_opens: tuple[str, ...]
    postal: tuple[str, ...]
    streets: frozenset[str]


@functools.cache
def load_rules() -> Rules:
    """The rules of ``patterns.toml`` (read and compiled once per process)."""
    data = tomllib.loads(PATTERNS_PATH.read_text(encoding="utf-8"))
    tokens = []
    for entry in data["token"]:
        body = entry["pattern"]
        if entry.get("edges", True):
            body = f"{_EDGE_BEFORE}(?:{body}){_EDGE_AFTER}"
        tokens.append((entry["kind"], re.compile(body), tuple(entry["needles"])))
    labels = data["labels"]
    return Rules(
        tokens=tuple(tokens),
        headers=tuple((e["kind"], re.compile(e["pattern"]), tuple(e["needles"]), e.get("test", ""))
                      for e in data["header"]),
        password=frozenset(labels["password"]), loose=frozenset(labels["loose"]),
        password_stems=tuple(labels["password_stems"]), secret_stems=tuple(labels["secret_stems"]),
        codes=frozenset(labels["codes"]),
        secret=frozenset(labels["secret"]),
        weak=frozenset(labels["weak"]), networks=frozenset(labels["networks"]), pairs=frozenset(tuple(p) for p in labels["pairs"]),
        phrase_password=tuple(w.lower() for w in labels["phrase_password"]),
        phrase_secret=tuple(w.lower() for w in labels["phrase_secret"]),
        phrase_codes=tuple(w.lower() for w in labels["phrase_codes"]),
        qualifiers=frozenset(labels["qualifiers"]), open_keys=frozenset(labels["open_keys"]),
        key_words=tuple(labels["key_words"]), copulas=tuple(labels["copulas"]),
        copula_adverbs=tuple(labels["copula_adverbs"]), as_words=frozenset(labels["as_words"]),
        units=frozenset(labels["units"]), cjk_units=tuple(labels["cjk_units"]),
        before_numbers=frozenset(labels["before_numbers"]), before_ids=frozenset(labels["before_ids"]),
        function_words=frozenset(labels["function_words"]),
        two_factor=tuple(labels["two_factor"]), code_lists=tuple(labels["code_lists"]),
        seed_labels=tuple(labels["seed_labels"]),
        calls={name: frozenset(words) for name, words in data["calls"].items()},
        pin_codes=tuple(data["pins"]["codes"]), pin_opens=tuple(data["pins"]["opens"]),
        postal=tuple(w.lower() for w in data["addresses"]["postal"]),
        streets=frozenset(w.lower() for w in data["addresses"]["streets"]),
    )


def trie(words: Iterable[str]) -> str:
    """A regex alternation of ``words`` with common beginnings factored out (``pa(?:ss…)``):
    Python's engine tries an alternation's branches one by one, a trie's a letter at a
    time. A word that is a prefix of another is tried after it (longest first)."""
    by_first: dict[str, list[str]] = {}
    ends = False
    for word in words:
        if word:
            by_first.setdefault(word[0], []).append(word[1:])
        else:
            ends = True
    if not by_first:
        return ""
    branches = [re.escape(c) + trie(rest) for c, rest in sorted(by_first.items())]
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if not ends:
        return body
    return f"(?:{body})?" if len(branches) == 1 else body + "?"


#: Latin letters that no decomposition takes to ASCII letters.
_UNDECOMPOSED: Final = str.maketrans({"ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "ß": "ss", "ł": "l", "Ł": "L",
                                      "đ": "d", "Đ": "D", "ı": "i"})


def fold(text: str) -> str:
    """``text`` with Latin letters' marks taken off (``Nätverk`` → ``Natverk``, ``nøgle`` →
    ``nogle``), as the ASCII spellings of :data:`Rules.networks` and the label words read."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_UNDECOMPOSED))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


_WORD_BEFORE: Final = re.compile(r"(\w+)(?:[ \t]+\w+-)?[ \t]*$")  # "öffentlicher GPG-Schlüssel"


def key_word(label: str) -> bool:
    """Whether a label holds the word "key" of a language (``clé``, ``ключ``, ``Schlüssel``)."""
    return any(word.startswith(load_rules().key_words) for word in fold(label).lower().split())


def open_key(label: str, words: Iterable[str], text: str, start: int) -> bool:
    """Whether a key's ``label`` (its head word, at ``start`` in ``text``) names a key that is
    no secret: a word of ``open_keys`` just before it ("my public key:", "öffentlicher
    Schlüssel", "Cache key:") or among the ``words`` after it ("clé publique"), when the
    label holds the word "key" (never a password's or a token's label: "public wifi password")."""
    rules = load_rules()
    if not key_word(label):
        return False  # "mi clave" is a password's label in Spanish, "mi clave pública" a key's
    before = _WORD_BEFORE.search(text, max(0, start - 40), start)
    return (before is not None and before.group(1).lower() in rules.open_keys) \
        or not rules.open_keys.isdisjoint(w.lower().strip(".,;:!?：") for w in words)


def split_name(name: str) -> list[str]:
    """The lower-case words of a key or label: ``"X-API-Key"`` → ``["x", "api", "key"]``,
    ``"dbPassword"`` → ``["db", "password"]``; a run of letters of any script stays one
    word (``"支付密码"``, ``"contraseña"``)."""
    words = []
    for part in _SEPARATORS.split(name):
        words += [w.lower() for w in CASE_CHANGE.split(part) if w]
    return words


def _phrase_class(name: str, words: list[str], rules: Rules) -> NameClass | None:
    """The class of a phrase label held in ``name``: in its words re-joined
    (``mot_de_passe``) or in the name as written (scripts whose vowel signs are no word
    characters to ``re``: ``पासवर्ड``)."""
    texts = (" ".join(words), name.lower())
    if any(label in text for text in texts for label in rules.phrase_password):
        return "password"
    if any(label in text for text in texts for label in rules.phrase_secret):
        return "secret"
    return None


def _stemmed(word: str, stems: tuple[str, ...]) -> bool:
    """Whether ``word`` holds one of ``stems`` with at most :data:`STEM_ENDING` letters after it."""
    return any(stem in word and len(word) - word.rindex(stem) - len(stem) <= STEM_ENDING for stem in stems)


def _word_class(word: str, rules: Rules) -> NameClass | None:
    if word in rules.password or any(word.endswith(w) for w in rules.password if len(w) >= 6) \
            or _stemmed(word, rules.password_stems):
        return "password"
    if word in rules.secret or any(word.endswith(w) for w in rules.secret if len(w) >= 5) \
            or _stemmed(word, rules.secret_stems):
        return "secret"
    if word in rules.weak:
        return "weak"
    return None


@functools.lru_cache(maxsize=4096)
def name_class(name: str) -> NameClass | None:
    """Whether a key or label names a password, a secret, only maybe a secret
    (``"weak"``: a lone ``key``) or nothing secret (``None``).

    Words are compared whole (``passengers`` and ``compass`` are not ``pass``; a word
    ending in a long label such as ``dbpassword`` or ``authtoken`` counts), and a
    qualifier (``max_tokens``, ``token_type``, ``password_hint``) makes the name
    describe a secret rather than hold one. Of a dotted name the last part decides
    (``db.password`` is a password, ``changePassword.restype`` is not). A loose word
    (``pass``, ``pin``, ``pw``) followed by another word counts only before a noun such as
    ``code`` (``pin code``, not ``pass_through``).
    """
    rules = load_rules()
    words = split_name(name.rsplit(".", 1)[-1] or name)
    paired = {j for i, pair in enumerate(zip(words, words[1:])) if pair in rules.pairs for j in (i, i + 1)}
    if not words or any(w in rules.qualifiers for i, w in enumerate(words) if i not in paired):
        return None  # a pair's own words qualify nothing: id_token is a token, token_id is not
    phrase = _phrase_class(name, words, rules)
    found: set[NameClass] = {phrase} if phrase else set()
    for i, word in enumerate(words):
        folded = fold(word)  # parolası, wachtwörter: the stems are written without marks
        kind = _word_class(folded, rules) if folded.isascii() else None
        if kind and not (word in rules.loose and i + 1 < len(words) and words[i + 1] not in _LOOSE_NOUNS
                         and not words[i + 1].startswith(_LOOSE_NOUN_STEMS)):
            found.add(kind)
    if paired:
        found.add("secret")
    for kind in ("password", "secret", "weak"):
        if kind in found:
            return kind  # type: ignore[return-value]
    return None


def mentions_password(text: str) -> bool:
    """Whether ``text`` holds a word that names a password (``"the database password"``);
    loose words (``pass``) do not count."""
    rules = load_rules()
    words = split_name(text)
    return _phrase_class(text, words, rules) == "password" or \
        any(w not in rules.loose and _word_class(w, rules) == "password" for w in words)


def label_words() -> list[str]:
    """Every label word and stem (for the prose scanner's first pass), longest first."""
    rules = load_rules()
    words = {*rules.password, *rules.secret, *rules.weak, *(w for pair in rules.pairs for w in pair),
             *rules.password_stems, *rules.secret_stems}
    return sorted(words, key=len, reverse=True)


_SESSION_NAME: Final = re.compile(r"(?i)[\w.-]*sess(?:ion)?[\w.-]*|(?:connect\.)?sid")


def session_name(name: str) -> bool:
    """Whether ``name`` names a session cookie or id (``sessionid``, ``JSESSIONID``,
    ``PHPSESSID``, ``connect.sid``, ``_gh_sess``, ``laravel_session``): in text and in a
    cookie's name/value pair its value is a credential when it looks random. (A key named
    ``session_id`` in structured data is left to :func:`name_class`: the library's own
    session ids are no secret.)"""
    return _SESSION_NAME.fullmatch(name) is not None


@functools.lru_cache(maxsize=4096)
def code_label(label: str) -> bool:
    """Whether a label's value may be digits alone: a PIN, a card's security code, a code
    that opens something (``PIN``, ``CVV``, ``pincode``, ``暗証番号``, ``code confidentiel``)."""
    rules = load_rules()
    lowered = label.lower()
    return any(w in rules.codes or w.startswith(("pin", "passcode")) for w in split_name(label)) \
        or any(phrase in lowered for phrase in rules.phrase_codes)


def group_kind(name: Any) -> NameClass | None:
    """The class of the members of a group named ``name``: the values in
    ``{"secrets": {"stripe": "…", "db": "…"}}`` are secrets whatever their own names."""
    if not isinstance(name, str) or not name.lower().endswith(GROUP_WORDS):  # most names: one test
        return None
    words = split_name(name)
    return "secret" if words and words[-1] in GROUP_WORDS else None


def describes_member(name: str) -> bool:
    """Whether a group member's name says it is no secret: a user, a host, a type, an
    expiry … (``{"credentials": {"username": "bob", …}}`` keeps ``bob``)."""
    words = split_name(name)
    return not _NOT_MEMBERS.isdisjoint(words) or not load_rules().qualifiers.isdisjoint(words)
