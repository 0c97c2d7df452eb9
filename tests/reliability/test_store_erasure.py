"""``HyMemoryStore`` erases as the client does: after ``delete``, ``put(None)``, a TTL sweep
and the background sweeper, no byte of the removed text remains in any file beside the
database (the SQLite file, its write-ahead log, index snapshots), and on PostgreSQL in no
row of the store's schema (its change log and lexical statistics included). The text is
matched case-insensitively, so lexical terms count too.

On PostgreSQL, freeing the table pages themselves is an operator's ``VACUUM (FULL)``
(docs/design.md, Erasure); rows are what the store controls.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from langgraph.store.base import TTLConfig

from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.store.sql import statements as sql
from hy_memory_langgraph.testing import HashingEmbeddings

SECRET = "Quokka7731 Zephyrine4410"
KEPT = "green tea every morning"
SHORT = 0.5 / 60  # half a second, in minutes (the test moves the store's clock past it)


class Clock:
    """The store's clock, standing still until the test moves it."""

    def __init__(self) -> None:
        self.now = sql.now_us()

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    fake = Clock()
    monkeypatch.setattr(sql, "now_us", fake)
    yield fake


def _store(target: str | Path, schema: str | None = None, ttl: TTLConfig | None = None) -> HyMemoryStore:
    index = {"dims": 32, "embed": HashingEmbeddings(dims=32), "fields": ["text"]}
    return HyMemoryStore(target, schema=schema or "public", index=index, ttl=ttl)  # type: ignore[arg-type]


def _files_holding(root: Path) -> list[str]:
    """The files under ``root`` holding any word of :data:`SECRET`, in any case."""
    words = [w.lower().encode() for w in SECRET.split()]
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and any(w in p.read_bytes().lower() for w in words))


def _rows_holding(url: str, schema: str) -> list[str]:
    """The tables of ``schema`` with a row holding any word of :data:`SECRET`, in any case."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    found = []
    try:
        with engine.connect() as conn:
            tables = conn.execute(sa.text("SELECT table_name FROM information_schema.tables "
                                          "WHERE table_schema = :s"), {"s": schema}).scalars().all()
            assert tables
            for table in tables:
                rows = conn.execute(sa.text(f'SELECT lower(t::text) FROM "{schema}"."{table}" t')).scalars()
                if any(w.lower() in row for row in rows for w in SECRET.split()):
                    found.append(table)
    finally:
        engine.dispose()
    return found


REMOVALS: dict[str, Callable[[HyMemoryStore, Clock], None]] = {
    "delete": lambda store, clock: store.delete(("u", "alice"), "secret"),
    "put None": lambda store, clock: store.put(("u", "alice"), "secret", None),  # type: ignore[arg-type]
    "ttl sweep": lambda store, clock: _expire_and_sweep(store, clock),
}


def _expire_and_sweep(store: HyMemoryStore, clock: Clock) -> None:
    clock.now += 60_000_000
    assert store.sweep_ttl() == 1


def _fill(store: HyMemoryStore) -> None:
    store.put(("u", "alice"), "secret", {"text": f"my locker code is {SECRET}"}, ttl=SHORT)
    store.put(("u", "alice"), "kept", {"text": KEPT})
    assert store.get(("u", "alice"), "secret", refresh_ttl=False) is not None


@pytest.mark.parametrize("removal", sorted(REMOVALS))
def test_sqlite_files_keep_no_byte_of_a_removed_item(tmp_path: Path, clock: Clock, removal: str) -> None:
    with _store(tmp_path / "store.db", ttl={"default_ttl": 60}) as store:
        _fill(store)
        assert _files_holding(tmp_path)  # stored: in the database or its write-ahead log
        REMOVALS[removal](store, clock)
        assert _files_holding(tmp_path) == []  # while the store is open: the WAL too
        assert store.get(("u", "alice"), "kept").value == {"text": KEPT}
        assert [i.key for i in store.search(("u", "alice"), query=KEPT)] == ["kept"]
    assert _files_holding(tmp_path) == []


def test_the_background_sweeper_erases_too(tmp_path: Path, clock: Clock) -> None:
    with _store(tmp_path / "store.db", ttl={"default_ttl": 60, "sweep_interval_minutes": 0.2 / 60}) as store:
        _fill(store)
        assert _files_holding(tmp_path)
        clock.now += 60_000_000
        store.start_ttl_sweeper()
        deadline = time.monotonic() + 120  # waits for the erasure; the deadline guards a hang
        while _files_holding(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _files_holding(tmp_path) == []
        assert store.stop_ttl_sweeper(timeout=60) is True
        assert store.get(("u", "alice"), "kept") is not None


@pytest.mark.parametrize("removal", sorted(REMOVALS))
def test_postgresql_rows_keep_no_trace_of_a_removed_item(pg_url: str, clock: Clock, removal: str) -> None:
    with _store(pg_url, schema="erasure", ttl={"default_ttl": 60}) as store:
        _fill(store)
        assert _rows_holding(pg_url, "erasure")  # stored
        REMOVALS[removal](store, clock)
        assert _rows_holding(pg_url, "erasure") == []
        assert store.get(("u", "alice"), "kept").value == {"text": KEPT}
