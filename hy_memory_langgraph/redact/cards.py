"""Payment card numbers: a card's number is what lets anyone charge it, and a memory
store is no place to keep one (card data may not be stored in clear text).

A run of digits is a card number when all of these hold:

* 15 or 16 digits written together (other lengths together are more often integers: a
  seed, an id), or 13 to 19 in the groups cards print (4-4-4-4, 4-4-4-4-3, American
  Express' 4-6-5), with one kind of separator (space or ``-``);
* the issuer's prefix fits the length: Visa ``4`` (13, 16, 19), Mastercard ``51``–``55`` and
  ``2221``–``2720`` (16), American Express ``34`` / ``37`` (15), Discover ``6011``,
  ``644``–``649``, ``65`` (16–19), JCB ``3528``–``3589`` (16–19), Diners Club ``36``,
  ``300``–``305``, ``38``–``39`` (14–19), UnionPay ``62`` (16–19);
* the Luhn check digit is right (one random number in ten passes it);
* it does not touch other digits, ASCII letters, or a decimal point (``4111…1111.5``).

Order numbers, phone numbers and timestamps rarely meet all four: none of LoCoMo's,
τ-bench's or BFCL's texts does (``bench/secret_scan.py``).

A card's details follow its number in one order everywhere: the expiry (``MM/YY`` or
``MM/YYYY``), then the security code. So within a short reach after a card number (or
its placeholder, when the number was taken from an earlier message), a number of 3 or 4
digits a few words after an expiry is the card's code, whatever word labels it
("exp 11/26, code 9218", "gültig bis 07/30, Prüfziffer 380", "有効期限 01/29 セキュリティコード 958").

Example:
    >>> card_numbers("card 4111 1111 1111 1111, exp 12/27")
    [(5, 24, 'card_number')]
    >>> card_numbers("card 4111 1111 1111 1111, exp 12/27, Prüfziffer 380")
    [(5, 24, 'card_number'), (48, 51, 'password')]
    >>> card_numbers("order 4111 1111 1111 1112"), card_numbers("1 2 3 4 5 6 7 8 9 0 1 2 3")
    ([], [])
"""

from __future__ import annotations

import re
from typing import Final

KIND: Final = "card_number"
# ASCII edges: a number right after Chinese text (卡号4111…) is found
_CANDIDATE: Final = re.compile(r"(?<![A-Za-z0-9_.,/-])\d(?:[ -]?\d){12,18}(?![A-Za-z0-9_-]|[.,]\d)")
_FOUR_DIGITS: Final = re.compile(r"\d{4}")
#: Group sizes a printed card number uses, by its length.
_GROUPS: Final = {(4, 4, 4, 4), (4, 4, 4, 4, 3), (4, 6, 5), (4, 4, 4, 3), (4, 6, 4)}
#: (prefix range low, high, lengths) of each issuer; prefixes compared as integers of
#: the bound's own number of digits.
_ISSUERS: Final = (
    ("4", "4", (13, 16, 19)), ("51", "55", (16,)), ("2221", "2720", (16,)), ("34", "34", (15,)),
    ("37", "37", (15,)), ("6011", "6011", (16, 17, 18, 19)), ("644", "649", (16, 17, 18, 19)),
    ("65", "65", (16, 17, 18, 19)), ("3528", "3589", (16, 17, 18, 19)), ("36", "36", (14, 15, 16, 17, 18, 19)),
    ("300", "305", (14, 15, 16, 17, 18, 19)), ("38", "39", (16, 17, 18, 19)), ("62", "62", (16, 17, 18, 19)),
)


#: How far after a card's number its expiry and code may come.
_DETAILS_REACH: Final = 120
_PLACEHOLDER: Final = "[REDACTED:card_number]"
#: An expiry, then within a few words without digits a code of 3 or 4 digits.
_EXPIRY_THEN_CODE: Final = re.compile(
    r"(?<![\d/])(?:0[1-9]|1[0-2])\s?/\s?(?:20\d{2}|\d{2})(?![\d/])[^\d\n]{0,30}?(?<![\d/.,:-])(\d{3,4})(?![\d/.,:-])")


def card_numbers(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, "card_number")`` of each card number in ``text``, and ``(start, end,
    "password")`` of the security code that follows a card's expiry."""
    if not _FOUR_DIGITS.search(text) and _PLACEHOLDER not in text:
        return []
    cards = [(m.start(), m.end(), KIND) for m in _CANDIDATE.finditer(text) if _is_card(m.group())]
    ends = [end for _, end, _ in cards]
    at = text.find(_PLACEHOLDER)
    while at >= 0:
        ends.append(at + len(_PLACEHOLDER))
        at = text.find(_PLACEHOLDER, at + 1)
    codes = []
    for end in ends:
        details = _EXPIRY_THEN_CODE.search(text, end, end + _DETAILS_REACH)
        if details is not None:
            codes.append((details.start(1), details.end(1), "password"))
    return sorted(set(cards + codes))


def _is_card(written: str) -> bool:
    separators = set(re.findall(r"[ -]", written))
    if len(separators) > 1:
        return False
    digits = re.sub(r"[ -]", "", written)
    if separators and tuple(len(g) for g in re.split(r"[ -]", written)) not in _GROUPS:
        return False
    if not separators and len(digits) not in (15, 16):
        return False
    return _issued(digits) and _luhn(digits) and len(set(digits)) > 1


def _issued(digits: str) -> bool:
    return any(low <= digits[:len(low)] <= high and len(digits) in lengths for low, high, lengths in _ISSUERS)


def _luhn(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = int(char) * (2 if i % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0
