"""The ids this package makes: random version 4 UUIDs in hex, as ``uuid.uuid4().hex``."""

from __future__ import annotations

import uuid
from collections import Counter

from hy_memory_langgraph.ids import random_id


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
