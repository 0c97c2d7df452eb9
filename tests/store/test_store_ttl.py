"""TTL: expiry, refresh on read, per-op refresh_ttl, sweeping, background sweeper.

The store reads the time through ``sql.now_us``; these tests move that clock themselves
(:class:`Clock`), so a slow or busy machine never lets an item expire before the test
looks at it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa
from langgraph.store.base import GetOp, PutOp, SearchOp
from store_helpers import key_set

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.store.schema.tables import items, vectors
from hy_memory_langgraph.store.sql import statements as sql

SHORT = 0.5 / 60  # half a second, in minutes

Factory = Callable[..., HyMemoryStore]


class Clock:
    """The store's clock, standing still until a test moves it."""

    def __init__(self) -> None:
        self.now = sql.now_us()

    def __call__(self) -> int:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += int(seconds * 1_000_000)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    fake = Clock()
    monkeypatch.setattr(sql, "now_us", fake)
    yield fake


def _count(store: HyMemoryStore, table: sa.Table) -> int:
    with store._engine.connect() as conn:  # test-only peek at the source of truth
        return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar())


def test_expired_items_are_invisible(hy_factory: Factory, clock: Clock) -> None:
    store = hy_factory(ttl={"default_ttl": SHORT})
    store.put(("t",), "short", {"text": "fleeting green tea"})
    store.put(("t",), "forever", {"text": "lasting green tea"}, ttl=None)
    assert store.get(("t",), "short", refresh_ttl=False) is not None
    clock.sleep(0.6)
    assert store.get(("t",), "short") is None
    assert key_set(store.search(("t",), limit=10)) == {"forever"}
    assert key_set(store.search(("t",), query="fleeting green tea")) == {"forever"}
    assert key_set(store.search(("t",), query="tea", filter={"text": {"$exists": True}})) == {"forever"}
    store.put(("gone",), "k", {"v": 1}, ttl=SHORT)
    clock.sleep(0.6)
    assert ("gone",) not in store.list_namespaces()
    assert store.list_namespaces() == [("t",)]


def test_refresh_on_read_extends_life(hy_factory: Factory, clock: Clock) -> None:
    store = hy_factory(ttl={"default_ttl": 1.0 / 60, "refresh_on_read": True})
    store.put(("r",), "k", {"text": "kept alive"})
    store.put(("r",), "idle", {"text": "left alone"})
    for _ in range(4):  # 4 x 0.4 s > 1 s TTL, but each read refreshes
        clock.sleep(0.4)
        assert store.get(("r",), "k") is not None
    assert store.get(("r",), "idle", refresh_ttl=False) is None


def test_refresh_ttl_per_op_and_search_refresh(hy_factory: Factory, clock: Clock) -> None:
    store = hy_factory(ttl={"default_ttl": 1.0 / 60, "refresh_on_read": False})
    store.put(("r",), "searched", {"text": "refresh me by search"})
    store.put(("r",), "plain", {"text": "do not refresh"})
    for _ in range(4):
        clock.sleep(0.4)
        store.batch([SearchOp(("r",), filter={"text": "refresh me by search"}, refresh_ttl=True)])
        store.get(("r",), "plain")  # store default: no refresh
    assert store.get(("r",), "searched") is not None
    assert store.get(("r",), "plain") is None


def test_put_ttl_override_and_validation(hy_factory: Factory, clock: Clock) -> None:
    store = hy_factory(ttl={"default_ttl": SHORT})
    store.put(("v",), "long", {"x": 1}, ttl=60)
    store.batch([PutOp(("v",), "none", {"x": 1})])  # direct PutOp: ttl=None, no expiry
    clock.sleep(0.6)
    assert store.get(("v",), "long") is not None
    assert store.get(("v",), "none") is not None
    with pytest.raises(InvalidInputError):
        store.put(("v",), "bad", {"x": 1}, ttl=-1)


def test_sweep_deletes_rows_and_vectors(hy_factory: Factory, clock: Clock) -> None:
    store = hy_factory()
    store.put(("s",), "a", {"text": "soon gone"}, ttl=SHORT)
    store.put(("s",), "b", {"text": "stays here"})
    assert _count(store, items) == 2 and _count(store, vectors) == 2
    assert store.sweep_ttl() == 0
    clock.sleep(0.6)
    assert store.sweep_ttl() == 1
    assert _count(store, items) == 1 and _count(store, vectors) == 1
    assert key_set(store.search(("s",), query="soon gone")) == {"b"}


def test_expired_then_rewritten_gets_fresh_created_at(hy_factory: Factory, clock: Clock) -> None:
    store = hy_factory()
    store.put(("c",), "k", {"v": 1}, ttl=SHORT)
    first = store.batch([GetOp(("c",), "k", refresh_ttl=False)])[0]
    clock.sleep(0.6)
    store.put(("c",), "k", {"v": 2})
    again = store.get(("c",), "k")
    assert again.value == {"v": 2} and again.created_at > first.created_at


def test_background_sweeper(hy_factory: Factory, clock: Clock) -> None:
    store = hy_factory(ttl={"default_ttl": SHORT, "sweep_interval_minutes": 0.2 / 60})
    store.put(("bg",), "k", {"text": "temporary"})
    clock.sleep(0.6)
    future = store.start_ttl_sweeper()
    assert store.start_ttl_sweeper() is future  # idempotent while running
    deadline = time.monotonic() + 120  # waits for the sweep; the deadline guards a hang
    while _count(store, items) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _count(store, items) == 0
    assert store.stop_ttl_sweeper(timeout=60) is True
    future.result(timeout=60)


def test_sweeper_without_ttl_config_is_noop(hy_factory: Factory) -> None:
    store = hy_factory(index=None)
    assert store.start_ttl_sweeper().done()
    assert store.stop_ttl_sweeper() is True


def test_close_stops_sweeper(hy_factory: Factory) -> None:
    store = hy_factory(ttl={"default_ttl": 1, "sweep_interval_minutes": 1})
    future = store.start_ttl_sweeper()
    store.close()
    assert future.result(timeout=60) is None
