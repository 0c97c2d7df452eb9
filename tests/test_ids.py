"""Ids: the ones this package makes (random version 4 UUIDs in hex, as
``uuid.uuid4().hex``) and the ones callers pass (taken as given, or refused naming the
field)."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.ids import require_id, random_id

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
