"""Values moved from LangGraph's SQL stores keep working: what ``SqliteStore`` accepts is
stored as the very text ``SqliteStore`` stores (datetimes as ISO strings, NaN as null,
UUIDs, dataclasses, enums, tuples), and read back as it reads it back; what only
``PostgresStore`` accepts (keys that are not strings, integers beyond 64 bits) reads back
as ``PostgresStore`` reads it; what neither accepts is an ``InvalidInputError`` naming the
field. Both references are LangGraph's own stores, run side by side with ours."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import decimal
import enum
import math
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.store.schema.tables import items


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    at: datetime.date


ZONE = datetime.timezone(datetime.timedelta(hours=2))

#: Values ``SqliteStore`` stores; each is a whole item value.
SQLITE_VALUES: dict[str, dict[str, Any]] = {
    "aware datetime": {"at": datetime.datetime(2024, 5, 1, 9, 30, tzinfo=ZONE)},
    "utc datetime with microseconds": {"at": datetime.datetime(2024, 5, 1, 9, 30, 1, 250,
                                                               tzinfo=datetime.timezone.utc)},
    "naive datetime": {"at": datetime.datetime(2024, 5, 1, 9, 30)},
    "date and time": {"day": datetime.date(2024, 5, 1), "clock": datetime.time(9, 30, 5)},
    "nan and infinities": {"score": math.nan, "hi": math.inf, "lo": -math.inf},
    "uuid": {"id": uuid.UUID("12345678-1234-5678-1234-567812345678")},
    "dataclass": {"point": Point(3, datetime.date(2024, 1, 2))},
    "enum": {"colour": Colour.RED},
    "tuple and nesting": {"pair": (1, "a"), "deep": {"list": [{"t": (datetime.date(2020, 2, 29),)}]}},
    "plain json": {"text": "thé vert 緑茶 🍵", "n": 2**63 - 1, "f": 0.1, "ok": True, "none": None},
}

#: Values only ``PostgresStore`` stores (orjson refuses them, ``json.dumps`` does not).
POSTGRES_VALUES: dict[str, dict[Any, Any]] = {
    "integer key": {"by_id": {1: "a", 2: "b"}},
    "integer beyond 64 bits": {"big": 2**70},
}

#: Neither store accepts these; the error names the field.
REFUSED: dict[str, tuple[dict[str, Any], str]] = {
    "bytes": ({"blob": b"raw"}, "'blob' holds a value of type bytes"),
    "set": ({"a": {"b": {1, 2}}}, "'a.b' holds a value of type set"),
    "decimal": ({"price": [decimal.Decimal("1.5")]}, r"'price\[0\]' holds a value of type Decimal"),
    "object": ({"x": object()}, "'x' holds a value of type object"),
}


def test_keys_that_become_one_json_name_are_refused_not_merged(stores: tuple[HyMemoryStore, SqliteStore]) -> None:
    """``PostgresStore`` would keep only the last of ``1`` and ``"1"``; nothing is lost here."""
    ours, _ = stores
    with pytest.raises(InvalidInputError, match="two keys written as the JSON name '1'"):
        ours.put(("moved",), "k", {"m": {1: "a", "1": "b"}})
    assert ours.get(("moved",), "k") is None


def _raw_value(db: Path, table: str, key: str) -> str:
    """The stored JSON text (``SqliteStore`` binds orjson's bytes: SQLite keeps a blob)."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        raw = conn.execute(f"SELECT value FROM {table} WHERE key = ?", (key,)).fetchone()[0]
    return raw.decode() if isinstance(raw, bytes) else str(raw)


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[HyMemoryStore, SqliteStore]]:
    with SqliteStore.from_conn_string(str(tmp_path / "langgraph.db")) as reference:
        reference.setup()
        with HyMemoryStore(tmp_path / "hy.db") as ours:
            yield ours, reference


@pytest.mark.parametrize("case", sorted(SQLITE_VALUES))
def test_a_value_sqlite_store_accepts_is_stored_as_it_stores_it(
        stores: tuple[HyMemoryStore, SqliteStore], tmp_path: Path, case: str) -> None:
    ours, reference = stores
    value = SQLITE_VALUES[case]
    ours.put(("moved",), case, value)
    reference.put(("moved",), case, value)
    assert _raw_value(tmp_path / "hy.db", items.name, case) == _raw_value(tmp_path / "langgraph.db", "store", case)
    read, expected = ours.get(("moved",), case), reference.get(("moved",), case)
    assert read is not None and expected is not None
    assert read.value == expected.value
    found = ours.search(("moved",))
    assert [item.value for item in found] == [expected.value]


def test_a_datetime_is_its_iso_string(stores: tuple[HyMemoryStore, SqliteStore]) -> None:
    ours, _ = stores
    ours.put(("moved",), "k", SQLITE_VALUES["aware datetime"] | SQLITE_VALUES["nan and infinities"])
    item = ours.get(("moved",), "k")
    assert item is not None
    assert item.value == {"at": "2024-05-01T09:30:00+02:00", "score": None, "hi": None, "lo": None}


@pytest.mark.parametrize("case", sorted(POSTGRES_VALUES))
def test_a_value_only_postgres_store_accepts_reads_back_as_it_reads_it(pg_url: str, tmp_path: Path,
                                                                       case: str) -> None:
    value = POSTGRES_VALUES[case]
    conninfo = sa.make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with PostgresStore.from_conn_string(conninfo) as reference:
        reference.setup()
        reference.put(("moved",), case, value)
        expected = reference.get(("moved",), case)
    assert expected is not None
    for target, schema in ((pg_url, "moved"), (tmp_path / "hy.db", None)):
        with HyMemoryStore(target, schema=schema or "public") as ours:
            ours.put(("moved",), case, value)
            read = ours.get(("moved",), case)
            assert read is not None and read.value == expected.value, target


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_value_neither_accepts_is_refused_naming_the_field(stores: tuple[HyMemoryStore, SqliteStore],
                                                             case: str) -> None:
    ours, reference = stores
    value, message = REFUSED[case]
    with pytest.raises(Exception):  # noqa: B017,PT011 - the reference's own error, whatever it is
        reference.put(("moved",), case, value)
    with pytest.raises(InvalidInputError, match=message):
        ours.put(("moved",), case, value)
    assert ours.get(("moved",), case) is None
