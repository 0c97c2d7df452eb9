"""Labelled values in ordinary grammar: words between the label and the value, in any order.

People name a secret and give it in their own language's grammar: "мой пароль от вайфая
Zx!9…", "salasanani on …", "wifin salasana on …", "Hesabın şifresi …", "ο κωδικός μου για το
wifi είναι …", "رمز عبور وای‌فای … است", "PIN ATM saya 123456". No list of separators follows
every copula, case ending and word order, so this pass judges the value instead of the
words before it. After a label (a word, stem or phrase of ``patterns.toml``, with the rest
of its token: ``ПИН-код``, ``PIN-koodini``, ``şifresi``) the next :data:`WINDOW` tokens of
the same sentence are read, and a token that looks like the label's value is its value:

* after a password label, a token that looks like a password (:func:`~.judge.credential_like`:
  letters with a digit or a symbol, six characters or more; no word, date, price, phone
  number, number with its unit, path, address, reference or code);
* after a PIN or card-code label, also digits alone, three to eight of them, unless a
  unit follows ("4 digits", "30 days"), a word before them governs them ("expires in
  2027"), or digits stand next to them (a phone number: "sent to +44 7700 900123");
* after a secret label (a key, a token), a token that looks random, 16 characters or
  more, or groups of four characters that do together (a 2FA key: ``jbsw y3dp ehpk 3pxp``),
  within four words (a lone ``key``: right after it).

When the window holds a separator (``:``, ``=``, a dash, a copula of ``patterns.toml``), the
first such token after it is the value (``password for my iPhone15 is …``); else the first
one. The window ends at a sentence's end, a line break, a qualifier (``password manager``,
``PIN length``) or another label. Loose words take no value this way (``pass``); their
abbreviations only the token right after them ("Netflix: maria.l pw Kf@#egPB##").

Example:
    >>> from hy_memory_langgraph.redact.scan import label_heads
    >>> text = "мой пароль от вайфая Zx9!kq2P, не забудь"
    >>> [text[s:e] for s, e, _ in bridged_spans(text, label_heads(text))]
    ['Zx9!kq2P']
    >>> text = "the password must have at least 12 characters"
    >>> bridged_spans(text, label_heads(text))
    []
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from hy_memory_langgraph.redact.judge import (credential_like, grouped_key, long_digits, looks_random, not_a_value,
                                             postcode, quantity, reference)
from hy_memory_langgraph.redact.rules import NameClass, code_label, fold, key_word, load_rules, name_class, open_key

Span = tuple[int, int, str]
#: Most tokens read after a label (within its sentence).
WINDOW: Final = 12
#: The rest of a label's token (``ПИН`` + ``-код``, ``PIN`` + ``-koodini``).
_TOKEN_REST: Final = re.compile(r"[^\s:：=,，、;；.。!?！？()（）\"'“”]{0,40}")
#: A token of the window, and what ends the window (a sentence's end, a line break).
_WINDOW_TOKEN: Final = re.compile(r"\n|[.!?。！？](?=\s|$)|[^\s、，,;；()（）]+")
_ENDS_SENTENCE: Final = re.compile(r"\s|$")
_TRIM: Final = "\"'“”‘’«»()[]{}<>,;:!?.。，、；：！？*`"
_SEPARATOR_TOKEN: Final = re.compile(r"[:=：＝\-–—→]+|=>|->")
_DIGITS: Final = re.compile(r"\d{3,8}")
_KEY_TOKEN: Final = re.compile(r"[A-Za-z0-9+/=_.~%-]+")
_SEPARATORS: Final = (":", "=", "：", "＝", "-", "–", "—", "→")
_CJK_IDEOGRAPH: Final = re.compile(r"[\u3400-\u9fff]")
_CODE_AFTER: Final = ("(", '"', "'", "`", "[", ".")
_QUOTES: Final = frozenset("\"'`")
#: Characters before a name in code (an argument, an attribute, an item).
_IN_CODE: Final = frozenset("({.,_>$")
#: Words of code and SQL before an alias ("SELECT sha2_256 AS password", "import password as pw2").
ALIASING: Final = re.compile(r"(?i)\b(?:import|select|join|cast)\b")
_WORD_BEFORE: Final = re.compile(r"\S{0,40}\Z")
#: Label words whose value is digits alone (in code they are often a name: ``pin``).
_DIGITS_ONLY: Final = frozenset({"pin", "cvv", "cvv2", "cvc", "cvc2", "csc"})
#: Most words between a label and its value, by the label's class: a lone "key" takes the
#: next token only ("setup key jbsw …"; "the key insight from 3f2a…" is prose), a secret's
#: label four ("secret for the admin account …"); a password's label the whole window. A
#: token right after a noun an id follows ("commit", "order") is that id, never a value.
_FILLERS: Final[dict[str, int]] = {"weak": 0, "secret": 4}
#: Password words' abbreviations: their value is the next token or none ("pw Kf@#egPB##").
_ABBREVIATIONS: Final = frozenset({"pw", "ww"})
_NUMBER: Final = re.compile(r"\+?\(?\d+\)?[.,]?")
#: Most words between a copula and the label after it, when the value comes first.
_BEFORE_WORDS: Final = 4
_WORD_AFTER: Final = re.compile(r"[\s_-]*([^\W\d_]+)")


#: Most characters of a label's sentence read before it for a network's name.
_NETWORK_WINDOW: Final = 120
_SENTENCE_END: Final = re.compile(r"[.!?\n]\s")
#: Most characters of a compound read on each side of a label (``Nätverksnyckeln``).
_COMPOUND_REACH: Final = 40


def _network_compound(text: str, start: int) -> bool:
    """Whether the word a label ends begins with a network's name (``Netzschlüssel``,
    ``Nätverksnyckeln``, ``WLAN-Schlüssel``): the network's password."""
    begin, floor = start, max(0, start - _COMPOUND_REACH)  # bounded: a run of labels costs linear time
    while begin > floor and (text[begin - 1].isalpha() or text[begin - 1] == "-"):
        begin -= 1
    if begin == floor > 0 and text[begin - 1].isalpha():
        begin = start  # no word start within reach: not a compound a network's name begins
    end, ceiling = start, min(len(text), start + _COMPOUND_REACH)
    while end < ceiling and text[end].isalpha():
        end += 1
    word = fold(text[begin:end]).lower().replace("-", "")
    return any(word.startswith(network) and len(word) > len(network) for network in load_rules().networks)


def names_network(text: str, start: int, words: list[str]) -> bool:
    """Whether the words after a label, or its sentence before it (the line before too
    when the label starts a line: "SSID: HomeNet" / "Key: …"), name a wireless network,
    or the label's own word does (:func:`_network_compound`)."""
    if _network_compound(text, start):
        return True
    before = text[max(0, start - _NETWORK_WINDOW):start]
    ends = [m.end() for m in _SENTENCE_END.finditer(before)]
    if len(ends) > 1 and not before[ends[-1]:].strip():
        ends.pop()  # the label starts its line: the line before is its block's
    tokens = [*re.split(r"[^\w!-]+", before[ends[-1] if ends else 0:].lower()), *(w.lower() for w in words)]
    return not load_rules().networks.isdisjoint(tokens)


def bridged_spans(text: str, labels: Iterable[re.Match[str]]) -> list[Span]:
    """The values found after each of the ``labels`` (matches of the label head: groups
    ``name`` or ``phrase``) in ``text``."""
    found: list[Span] = []
    for label in labels:
        span = _bridged(text, label) or _before(text, label)
        if span is not None:
            found.append(span)
    return found


def _before(text: str, label: re.Match[str]) -> Span | None:
    """A password given before its label: "mivo36ze is the new wifi password", "X ist das
    neue Passwort", "set X as my password": a token that looks like a password, a copula
    (``=``, a dash, an "as" word), then at most :data:`_BEFORE_WORDS` words of no digit and
    the label, in one sentence, and no qualifier after the label ("… is the password hint")."""
    rules = load_rules()
    head = (label.group("name") or label.group("phrase") or "").lower()
    if head in rules.loose or name_class(label.group()) != "password" or text[label.start() - 1:label.start()] in _IN_CODE:
        return None  # hashed = hash_pw(password): an argument, not "X is the password"
    after = _WORD_AFTER.match(text, label.end(), label.end() + 40)
    if after is not None and after.group(1).lower() in rules.qualifiers:
        return None
    reach = max(0, label.start() - 30 * (_BEFORE_WORDS + 2))
    line = max(text.rfind("\n", reach, label.start()), reach - 1)
    tokens = [(m.start(), m.end()) for m in _WINDOW_TOKEN.finditer(text, line + 1, label.start())]
    as_ends = ALIASING.search(text, line + 1, label.start()) is None  # not an alias in code
    for i in range(len(tokens) - 1, max(-1, len(tokens) - _BEFORE_WORDS - 3), -1):
        word = text[tokens[i][0]:tokens[i][1]]
        as_word = word.lower() in rules.as_words
        if i == len(tokens) - 1 and not as_word:
            continue  # "X come password"; not "hashed = password" (code) or "X is password"
        if word.lower() in rules.copulas or (as_word and as_ends) or _SEPARATOR_TOKEN.fullmatch(word):
            value = text[tokens[i - 1][0]:tokens[i - 1][1]].strip(_TRIM) if i else ""
            if value and credential_like(value):
                offset = tokens[i - 1][0] + text[tokens[i - 1][0]:tokens[i - 1][1]].index(value)
                return offset, offset + len(value), "password"
            if not as_word:
                return None  # "X was set as the password": the copula before the "as" is read on
        if any(c.isdigit() for c in word) or word in ".!?。！？" or word.endswith((".", "!", "?", ",")):
            return None
    return None


def _bridged(text: str, label: re.Match[str]) -> Span | None:
    rest = _TOKEN_REST.match(text, label.end())
    end = rest.end() if rest else label.end()
    name = text[label.start():end]
    kind = name_class(name) or name_class(label.group("phrase") or label.group("name") or "")
    head = (label.group("name") or label.group("phrase") or "").lower()
    rules = load_rules()
    if kind is None or head in ("pass", "otp") or (head in _ABBREVIATIONS and (
            text[label.start() - 1:label.start()] in _IN_CODE or not label.group().islower())):
        return None  # checkpw(pw, stored_hash1): an argument; "Kindle PW 11th-gen": a name
    fillers_most = 0 if head in _ABBREVIATIONS else _FILLERS.get(kind, WINDOW)  # as its own class reads
    network_key = kind in ("weak", "secret") and key_word(head) and names_network(text, label.start(), [])
    if network_key:
        kind = "password"  # "сеть Home, ключ безопасности 6fyv808jq718": the network's password
    codes = kind == "password" and code_label(name)
    if head == "pin" and not codes:
        return None
    digits_only = head in _DIGITS_ONLY  # a PIN, a card's code: never a word of code (cid, pin)
    if _CJK_IDEOGRAPH.search(text, label.end(), end):
        return None  # 密码错误: the label is part of a longer word, not followed by its value
    if text.startswith(_CODE_AFTER, end) or text[label.start() - 1:label.start()] in _QUOTES \
            or _in_address(text, label.start(), end):
        return None  # a call or a definition (encrypt_password(…)), a name in a string, a part of a URL or path
    tokens = _window(text, end)
    if open_key(head, [text[a:b] for a, b in tokens[:1]], text, label.start()):
        return None  # "öffentlicher GPG-Schlüssel hat …", "clé publique : …": a key meant to be shared
    if tokens and text.startswith(_SEPARATORS, tokens[0][0]):
        return None  # "password: …", "password=…": the label pattern's to judge
    separated = governed = False
    first: Span | None = None
    fillers = 0  # words between the label and a value: a key's or a token's takes few (_FILLERS)
    for i, (start, stop) in enumerate(tokens):
        raw = text[start:stop]
        token = raw.strip(_TRIM)
        lowered = token.lower()
        if lowered in rules.qualifiers:
            return None  # "token sha256: …", "password length: 12"
        if _SEPARATOR_TOKEN.fullmatch(raw) or raw.endswith((":", "：")) or lowered in rules.copulas:
            separated = True
            if raw.endswith((":", "：")) and len(token) > 1 and name_class(token):
                return None  # the next label's own separator
            continue
        if name_class(token) is not None and first is None:
            return None
        phrase = _quoted_phrase(text, start) if kind == "password" else None
        if phrase is not None:
            return phrase
        neighbours = [text[a:b] for a, b in tokens[max(0, i - 1):i] + tokens[i + 1:i + 2]]
        before = text[tokens[i - 1][0]:tokens[i - 1][1]].strip(_TRIM).lower() if i > 0 else ""
        named = before in rules.before_ids or (before in rules.before_numbers and token.isdigit())
        value = None if named else _value(text, start, raw, token, kind, codes, network_key,
                                          governed or any(map(_NUMBER.fullmatch, neighbours)))
        governed = governed or lowered in rules.before_numbers or lowered in rules.before_ids
        if value is not None and digits_only and not token.isdigit():
            value = None
        if value is not None:
            if separated:
                return value
            first = first or value
        elif not separated:
            fillers += 1
            if fillers > fillers_most:
                return first
    return first


#: Quotes that open a passphrase and the quote that closes each.
_PHRASE_QUOTES: Final = {'"': '"', "“": "”", "„": "“", "«": "»", "»": "«", "‘": "’", "「": "」", "'": "'"}
_LONGEST_PHRASE: Final = 200


def _quoted_phrase(text: str, start: int) -> Span | None:
    """A passphrase in quotes at ``start`` (the quotes delimit it, spaces and all):
    several words with a digit or a symbol, or four words or more ("tundra lynx lantern
    otter 69", «fjord willow tundra nimbus»); not one word, a reference or prose in quotes
    of two or three plain words ("too short")."""
    close = _PHRASE_QUOTES.get(text[start:start + 1])
    if close is None:
        return None
    end = text.find(close, start + 1, start + 1 + _LONGEST_PHRASE)
    inner = text[start + 1:end].strip() if end > 0 else ""
    words = inner.split()
    if "\n" in inner or len(words) < 2 or reference(inner):
        return None
    marked = any(c.isdigit() or not (c.isalpha() or c.isspace()) for c in inner)
    if not marked and len(words) < 4:
        return None
    offset = start + 1 + text[start + 1:end].index(inner)
    return offset, offset + len(inner), "password"


def _in_address(text: str, start: int, end: int) -> bool:
    """Whether the label at ``start`` (its token to ``end``) is part of a URL, a path or an
    e-mail address (``postgres://user:password@…``, ``~/.config/token``)."""
    before = _WORD_BEFORE.search(text, max(0, start - 40), start)
    word = (before.group() if before else "") + text[start:end]
    return any(c in word for c in "/@\\")


def _window(text: str, pos: int) -> list[tuple[int, int]]:
    """``(start, end)`` of the tokens after ``pos``, up to :data:`WINDOW`, in one sentence."""
    tokens = []
    for match in _WINDOW_TOKEN.finditer(text, pos, min(len(text), pos + 30 * WINDOW)):
        token = match.group()
        if token == "\n" or (len(token) == 1 and token in ".!?。！？"):
            break
        tokens.append((match.start(), match.end()))
        ends_sentence = token[-1] in "!?。！？" or (token[-1] == "." and _ENDS_SENTENCE.match(text, match.end()))
        if len(tokens) == WINDOW or ends_sentence:
            break  # the window's last token, or one that ends a sentence ("ASAP.")
    return tokens


def _value(text: str, start: int, raw: str, token: str, kind: NameClass, codes: bool, network_key: bool,
           counted: bool) -> Span | None:
    """The span of ``token`` (``raw`` as written, at ``start``) when it is the label's value;
    ``counted``: a number here is a count, a date or part of a longer number (a word
    before it governs it, or digits stand next to it: a phone number)."""
    offset = start + raw.index(token) if token else start
    stop = offset + len(token)
    if not token or reference(token) or '"' in token or text.startswith("(", stop):
        return None  # JSON around it, or a call: code
    if kind == "password":
        if codes and _DIGITS.fullmatch(token):
            if counted or quantity(text, stop) or postcode(text, offset, stop):
                return None
            return offset, stop, "password"
        return (offset, stop, "password") if credential_like(token) or (network_key and long_digits(token)) else None
    grouped = grouped_key(text, offset, token)  # a key written in groups of four
    if grouped is not None:
        return offset, grouped, "secret_value"
    return (offset, stop, "secret_value") if _KEY_TOKEN.fullmatch(token) and looks_random(token, min_length=16) \
        and not not_a_value(token) else None  # "S3 object key uploads/2025/03/9f3a….jpg": a path
