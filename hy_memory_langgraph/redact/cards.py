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

Example:
    >>> card_numbers("card 4111 1111 1111 1111, exp 12/27")
    [(5, 24, 'card_number')]
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


def card_numbers(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, "card_number")`` of each card number in ``text``."""
    if not _FOUR_DIGITS.search(text):
        return []
    return [(m.start(), m.end(), KIND) for m in _CANDIDATE.finditer(text) if _is_card(m.group())]


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
