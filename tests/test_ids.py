"""Ids: the ones this package makes (random version 4 UUIDs in hex, as
``uuid.uuid4().hex``) and the ones callers pass (taken as given, or refused naming the
field)."""

from __future__ import annotations

import re
import sys
import unicodedata
import uuid
from collections import Counter

import pytest

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.ids import invisible_character, random_id, require_id, require_ids

# One of each kind of invisible character that would let two ids print alike.
_INVISIBLE = ["\u200b", "\u200e", "\u200f", "\u202a", "\u202e", "\u2066", "\u2069", "\u2060",
              "\u2063", "\ufeff", "\u00ad", "\u061c", "\u180e", "\U000e0041", "\ufff9"]


def test_random_ids_are_uuid4_hex() -> None:
    for _ in range(2000):
        made = random_id()
        parsed = uuid.UUID(made)
        assert parsed.hex == made and len(made) == 32
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_random_ids_do_not_repeat_and_every_free_digit_varies() -> None:
    made = [random_id() for _ in range(4000)]
    assert len(set(made)) == len(made)
    # every hex position except the version digit (12) takes many values; the variant
    # digit (16) takes exactly the four RFC 4122 allows
    for position in range(32):
        seen = Counter(m[position] for m in made)
        if position == 12:
            assert set(seen) == {"4"}
        elif position == 16:
            assert set(seen) == set("89ab")
        else:
            assert len(seen) == 16, position


@pytest.mark.parametrize("mark", _INVISIBLE)
@pytest.mark.parametrize("where", ["end", "middle", "start"])
def test_ids_with_an_invisible_character_are_refused_naming_it(mark: str, where: str) -> None:
    value = {"end": "alice" + mark, "middle": "al" + mark + "ice", "start": mark + "alice"}[where]
    with pytest.raises(InvalidInputError, match=rf"user_id=.*U\+{ord(mark):04X}.*user_id='user_123'"):
        require_id(value, "user_id")


@pytest.mark.parametrize("value", ["ali\u0085ce", "ali\x9bce", "alice\x7f"])
def test_ids_with_a_c1_control_character_are_refused(value: str) -> None:
    with pytest.raises(InvalidInputError, match="control character"):
        require_id(value, "session_id")


@pytest.mark.parametrize("value", [
    "user_123", "alice@example.com", "علی", "می\u200cخواهم",  # Persian spelling uses the non-joiner
    "\U0001f468\u200d\U0001f469\u200d\U0001f467", "Zoë", "ユーザー", "org/team:42",
])
def test_ids_of_any_script_with_joiners_are_taken_as_given(value: str) -> None:
    assert require_id(value, "user_id") == value


# Characters that print as nothing, by class (none of them is in the module's code as an
# example: the rule is Unicode's properties).
_LOOK_ALIKES = {
    "variation selector": ["\ufe0f", "\ufe00", "\U000e0100", "\U000e01ef"],
    "Mongolian selector": ["\u180b", "\u180c", "\u180d", "\u180f"],
    "Hangul filler": ["\u3164", "\uffa0", "\u115f", "\u1160"],
    "combining grapheme joiner": ["\u034f"],
    "Khmer inherent vowel": ["\u17b4", "\u17b5"],
    "Braille blank": ["\u2800"],
    "space other than U+0020": ["\u00a0", "\u2007", "\u202f", "\u3000", "\u2028", "\u2029"],
    "format character": ["\u2061", "\U0001d173", "\U0001bca0", "\U000e0020"],
    "reserved default-ignorable": ["\u2065", "\ufff0", "\U000e0002", "\U000e0fff"],
    "blank by definition": ["\U0001d159", "\U00016fe4"],
    "private use": ["\ue000", "\uf8ff", "\U000f0000", "\U0010fffd"],
    "unassigned or noncharacter": ["\u0378", "\ufdd0", "\uffff", "\U0010ffff"],
}


@pytest.mark.parametrize("mark", [m for marks in _LOOK_ALIKES.values() for m in marks])
def test_ids_that_print_alike_are_refused_naming_the_character(mark: str) -> None:
    name = unicodedata.name(mark, "(unassigned)")
    with pytest.raises(InvalidInputError, match=rf"U\+{ord(mark):04X} {re.escape(name)}"):
        require_id("ali" + mark + "ce", "user_id")


def test_every_format_character_is_refused() -> None:
    formats = [chr(c) for c in range(sys.maxunicode + 1)
               if unicodedata.category(chr(c)) == "Cf" and chr(c) not in "\u200c\u200d"]
    assert len(formats) > 150  # the whole category, not a sample
    assert [f"U+{ord(c):04X}" for c in formats if invisible_character("a" + c + "b") is None] == []


@pytest.mark.parametrize("value", ["al\u200dice", "alice\u200d", "\u200calice", "a\u200cb",
                                   "\U0001f468\u200d", "\u0301alice"])
def test_joiners_where_they_join_nothing_and_leading_marks_are_refused(value: str) -> None:
    with pytest.raises(InvalidInputError, match=r"invisible character U\+"):
        require_id(value, "user_id")


@pytest.mark.parametrize("value", [
    "\u0dc1\u0dca\u200d\u0dbb\u0dd3",  # Sinhala conjunct: joiner after a virama
    "\u0915\u094d\u200c\u0937",  # Devanagari half form: non-joiner after a virama
    "\U0001f469\U0001f3fd\u200d\U0001f4bb",  # skin-toned emoji sequence: after a modifier
])
def test_joiners_where_they_change_the_drawing_are_kept(value: str) -> None:
    assert require_id(value, "user_id") == value


def test_canonically_equivalent_spellings_are_one_id() -> None:
    composed, decomposed = "Zo\u00eb", "Zoe\u0308"
    assert require_id(decomposed, "user_id") == composed == require_id(composed, "user_id")
    hangul = unicodedata.normalize("NFD", "\ud55c\uad6d")  # conjoining jamo
    assert require_id(hangul, "user_id") == "\ud55c\uad6d"


def test_require_ids_takes_a_string_as_one_id() -> None:
    assert require_ids("bob", "user_ids") == ["bob"]
    assert require_ids(("bob", "Zoe\u0308", "bob"), "user_ids") == ["bob", "Zo\u00eb"]
    with pytest.raises(InvalidInputError, match=r"user_ids\[1\]"):
        require_ids(["bob", "b\u200bob"], "user_ids")
    with pytest.raises(InvalidInputError, match="an id or a list of ids"):
        require_ids({"bob": 1}, "user_ids")
