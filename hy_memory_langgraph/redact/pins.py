"""Codes that open something: a door's, a gate's, an alarm's, a safe's, a phone's, a SIM's
or a card's code, named in any of about forty languages, and its digits.

A label of this class is two words, not one phrase: a word for a code (``code``, ``kod``,
``código``, ``код``, ``PIN``, ``PUK``, ``combination``, ``รหัส`` …) and a word for what it
opens (``door``, ``Tor``, ``portail``, ``cancello``, ``сейф``, ``kapı``, ``ประตู``, ``金庫``
…), in either order, at most :data:`_APART` short words apart (``code van het alarm``,
``kod do drzwi``) or in one compound word (``Türcode``, ``ovikoodi``, ``Entsperrcode``).
Both lists are data (``patterns.toml``, ``[pins]``), so a language is added as words, not
as phrasings. After the label, a few short words (``c'est``, ``min er``) and the value: 4 to
8 digits standing alone. A number is no code when it is a quantity ("4 digits", "1500
yen"), part of a phone number, a date or a decimal, or a postal code
(:func:`~.judge.postcode`). Words that put a number in another sense (``sent``,
``ending``, ``since``) end the label.

Example:
    >>> text = "le code du portail c'est 8674"
    >>> [text[s:e] for s, e, _ in pin_spans(text)]
    ['8674']
    >>> pin_spans("the gate opens at 0700, door code sent to +44 20 7946 0958")
    []
"""

from __future__ import annotations

import functools
import re
from typing import Final

from hy_memory_langgraph.redact.judge import postcode, quantity
from hy_memory_langgraph.redact.rules import load_rules, trie


#: A value: 4 to 8 digits, no digit, letter, ``+`` or decimal point touching them (a run
#: of four digits found first, its edges looked at then: most texts have none).
_DIGITS: Final = re.compile(r"\d{4,}")
_NOT_BEFORE: Final = re.compile(r"[\w+.,/-]")
_NOT_AFTER: Final = re.compile(r"[\w-]|[.,:/]\d|\s\d")
#: A word (a run of anything but spaces, digits and punctuation: Thai and Hindi vowel
#: signs are no letters to ``\w``) or a number, as the label's words are read.
_TOKEN: Final = re.compile(r"\d+|[^\s\d!-/:-@\[-`{-~，。：；、！？（）「」…—–]+")
#: Most characters before a value read for its label.
_WINDOW: Final = 80
#: Most words between the code word and the object's; most short words before the value.
_APART: Final = 3
_BEFORE_VALUE: Final = 3
#: Longest word that may stand between label and value without naming anything ("c'est", "min").
_SHORT: Final = 5
#: Most letters of ending after a stem (``drzwi`` after ``drzw``, ``sejfu`` after ``sejf``).
_ENDING: Final = 5
#: Scripts written without spaces: a word is found anywhere in a run of them.
_UNSPACED: Final = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


@functools.cache
def _words() -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...], frozenset[str]]:
    """The code words, the object words (split into their words), and the words that end a
    label (a number after them is in another sense)."""
    rules = load_rules()
    breakers = rules.before_ids | rules.before_numbers
    opens = sorted((tuple(w.lower().split()) for w in rules.pin_opens), key=len, reverse=True)  # longest first
    return (tuple(w.lower() for w in rules.pin_codes), tuple(opens),
            frozenset(breakers - set(rules.copulas)))


def _stem(token: str, word: str) -> bool:
    """Whether ``token`` is ``word`` with at most :data:`_ENDING` letters of ending (a word
    of three letters or fewer only as itself or with an ``s``)."""
    if _UNSPACED.search(word):
        return word in token
    if len(word) <= 3:
        return token in (word, word + "s")
    return token.startswith(word) and len(token) - len(word) <= _ENDING


def _code(token: str, codes: tuple[str, ...], opens: tuple[tuple[str, ...], ...]) -> tuple[bool, bool]:
    """Whether ``token`` is a code word, and whether it is a compound naming what it opens too."""
    for code in codes:
        if _stem(token, code):
            return True, False
        at = token.find(code, 1)
        if at > 0 and len(token) - at - len(code) <= _ENDING - 1 \
                and any(_stem(token[:at], o[0]) or token.startswith(o[0]) for o in opens if len(o) == 1):
            return True, True
    return False, False


def _opens(tokens: list[str], i: int, opens: tuple[tuple[str, ...], ...]) -> int:
    """Where the words that end at ``tokens[i]`` and name what a code opens start (``-1``:
    they name nothing such)."""
    for words in opens:
        first = i - len(words) + 1
        if first >= 0 and all(_stem(t, w) for t, w in zip(tokens[first:i + 1], words)):
            return first
    return -1


def pin_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, "password")`` of each code that opens something in ``text``."""
    found = []
    for value in _DIGITS.finditer(text):
        if value.end() - value.start() > 8 or (value.start() and _NOT_BEFORE.match(text, value.start() - 1)) \
                or _NOT_AFTER.match(text, value.end()):
            continue
        before = text[max(0, value.start() - _WINDOW):value.start()].lower()
        if _hint().search(before) is None or quantity(text, value.end()):
            continue  # no code word before the number (most numbers: a year, a count)
        if _labelled(before) and not postcode(text, value.start(), value.end()):
            found.append((value.start(), value.end(), "password"))
    return found


@functools.cache
def _hint() -> re.Pattern[str]:
    """Any code word, anywhere (a cheap first look before a number)."""
    return re.compile(trie(_words()[0]))


def _labelled(before: str) -> bool:
    """Whether ``before`` (the text right before a value) ends with a code's label: a code
    word and an object word at most :data:`_APART` words apart, and at most
    :data:`_BEFORE_VALUE` short words after the later of them."""
    codes, opens, breakers = _words()
    tokens = [t.lower() for t in _TOKEN.findall(before)]
    code_at = object_at = -1
    for i in range(len(tokens) - 1, max(-1, len(tokens) - 2 - _BEFORE_VALUE - _APART), -1):
        token = tokens[i]
        if token.isdigit():
            return False
        is_code, compound = _code(token, codes, opens)
        if is_code and code_at < 0:
            code_at, object_at = i, i if compound else object_at
        if object_at < 0 and (not is_code or _UNSPACED.search(token)):
            object_at = _opens(tokens, i, opens)
        if code_at < 0 and object_at < 0:
            if (len(token) > _SHORT and not _UNSPACED.search(token)) or len(tokens) - i > _BEFORE_VALUE \
                    or token in breakers:
                return False  # a long word, or one that puts the number in another sense: no label's value
        elif code_at >= 0 and object_at >= 0:
            return abs(code_at - object_at) <= _APART
    return False
