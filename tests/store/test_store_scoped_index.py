"""Per-scope vector indexes: reopen, lazy load, delta catch-up, LRU eviction, exactness.

Runs on SQLite files and PostgreSQL (``db`` gives a store target for either).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from langgraph.store.base import BaseStore, PutOp
from store_helpers import index_config, keys, scores_close

from hy_memory_langgraph.errors import ConfigError, InvalidInputError, StoreError
from hy_memory_langgraph.store import HyMemoryStore, IndexCache
from hy_memory_langgraph.store.schema.tables import changes

QUERIES = ["green tea", "mountain hiking trip", "python async code", "chocolate"]
TEXTS = [
    "green tea with jasmine", "mountain hiking trip in spring", "python async code review",
    "chocolate cake recipe", "black coffee", "river kayaking trip", "rust borrow checker",
    "matcha latte", "vanilla ice cream", "typescript generics",
]
Opener = Callable[..., HyMemoryStore]


@pytest.fixture(params=["sqlite", "postgres"])
def open_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """``open_db(name="mem", **kwargs)``: a HyMemoryStore on SQLite or PostgreSQL."""
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    opened: list[HyMemoryStore] = []

    def make(name: str = "mem", **kwargs: object) -> HyMemoryStore:
        kwargs.setdefault("index", index_config(["text"]))
        if url is None:
            store = HyMemoryStore(tmp_path / f"{name}.db", **kwargs)  # type: ignore[arg-type]
        else:
            store = HyMemoryStore.from_url(url, name=name, **kwargs)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


def _fill(store: BaseStore) -> None:
    for i, text in enumerate(TEXTS):
        store.put(("p", f"u{i % 3}"), f"k{i}", {"text": text, "i": i})
    store.put(("p", "u0"), "plain", {"text": "not indexed"}, index=False)
    store.delete(("p", "u1"), "k4")


def _snapshot(store: BaseStore) -> list[tuple[list[str], list[float | None]]]:
    out = []
    for q in QUERIES:
        for prefix in [("p",), ("p", "u0"), ()]:
            res = store.search(prefix, query=q, limit=20)
            out.append((keys(res), [r.score for r in res]))
    return out


def _same(a: list, b: list) -> bool:
    return all(ka == kb and scores_close(sa_, sb) for (ka, sa_), (kb, sb) in zip(a, b, strict=True))


def test_reopen_gives_the_same_results(open_db: Opener) -> None:
    store = open_db()
    _fill(store)
    before = _snapshot(store)
    store.close()
    assert _same(_snapshot(open_db()), before)


def test_scopes_load_lazily(open_db: Opener) -> None:
    store = open_db()
    _fill(store)
    other = open_db(index_cache=IndexCache(1 << 30))
    assert other.index_cache is not None and len(other.index_cache) == 0
    other.search(("p", "u0"), query="green tea")
    assert len(other.index_cache) == 1
    other.search(("p",), query="green tea")
    assert len(other.index_cache) == 3  # u0, u1, u2


def test_write_through_one_is_seen_by_the_next_search_of_another(open_db: Opener) -> None:
    a, b = open_db(), open_db()
    _fill(a)
    b.search(("p", "u1"), query="chocolate cake", limit=1)  # b now caches the scope
    a.put(("p", "u1"), "new", {"text": "dark chocolate truffles"})
    assert keys(b.search(("p", "u1"), query="dark chocolate truffles", limit=1)) == ["new"]
    a.delete(("p", "u1"), "new")
    assert "new" not in keys(b.search(("p", "u1"), query="dark chocolate truffles", limit=10))
    a.put(("p", "u1"), "k1", {"text": "dark chocolate truffles"})  # overwrite: vectors replaced
    assert keys(b.search(("p", "u1"), query="dark chocolate truffles", limit=1)) == ["k1"]


def _log_rows(store: HyMemoryStore) -> int:
    with store._engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(changes)).scalar_one())


def test_the_log_names_what_the_vector_indexes_may_hold(open_db: Opener) -> None:
    """Writes of items without vectors, before or after, add no change-log rows; an item
    that loses its vectors by a re-put without them is logged, and another instance's
    cached scope lets it go."""
    a, b = open_db(), open_db()
    _fill(a)
    b.search(("p", "u1"), query="chocolate cake", limit=1)  # b caches the scope
    before = _log_rows(a)
    a.batch([PutOp(("p", "u1", "log"), f"n{i}", {"text": f"note {i}"}, index=False) for i in range(5)])
    assert _log_rows(a) == before
    a.put(("p", "u1"), "k1", {"text": "python async code review"}, index=False)  # k1 had vectors
    assert _log_rows(a) == before + 1
    hits = b.search(("p", "u1"), query="python async code review", limit=10)
    assert "k1" not in [item.key for item in hits if item.score is not None]
    assert "k1" in [item.key for item in hits if item.score is None]  # still there, without vectors


@pytest.mark.parametrize("seed", range(4))
def test_random_histories_keep_every_cache_exact(open_db: Opener, seed: int) -> None:
    """Two instances write and search in random turns: puts with and without vectors (an
    item gaining or losing them), deletes, batches mixing them. After every search each
    cache answers as a fresh instance does, whatever the log left out."""
    import random  # noqa: PLC0415

    rng = random.Random(seed)
    a, b = open_db(), open_db()
    keys_ = [f"k{i}" for i in range(8)]
    for step in range(40):
        writer, reader = (a, b) if rng.random() < 0.5 else (b, a)
        ops = []
        for _ in range(rng.randint(1, 3)):
            namespace, key = ("p", rng.choice(["u0", "u1"])), rng.choice(keys_)
            roll = rng.random()
            if roll < 0.45:
                ops.append(PutOp(namespace, key, {"text": rng.choice(TEXTS)}))
            elif roll < 0.8:
                ops.append(PutOp(namespace, key, {"text": rng.choice(TEXTS)}, index=False))
            else:
                ops.append(PutOp(namespace, key, None))
        writer.batch(list({(op.namespace, op.key): op for op in ops}.values()))
        if step % 5 == 4:
            fresh = open_db()
            assert _same(_snapshot(reader), _snapshot(fresh)) and _same(_snapshot(writer), _snapshot(fresh))
            wanted = {"text": rng.choice(TEXTS)}  # a filtered search ranks the rows it selects
            for store in (reader, writer):
                got, want = (s.search(("p",), query="green tea", filter=wanted, limit=20) for s in (store, fresh))
                assert keys(got) == keys(want) and scores_close([i.score for i in got], [i.score for i in want])
            fresh.close()


def test_interleaved_writers_keep_each_cache_exact(open_db: Opener) -> None:
    """A write after another instance's writes applies itself at once and leaves theirs to
    the next search's catch-up (which must not undo the own write): each cache then equals
    a fresh instance's."""
    a, b = open_db(), open_db()
    _fill(a)
    for store in (a, b):
        store.search(("p",), query="green tea")  # both cache every scope
    b.put(("p", "u0"), "k0", {"text": "espresso with milk"})  # a is now behind
    a.put(("p", "u0"), "k3", {"text": "dark chocolate truffles"})  # deferred: b's change unread
    assert a._scoped is not None and a._scoped.pending
    assert keys(a.search(("p", "u0"), query="dark chocolate truffles", limit=1)) == ["k3"]
    b.put(("p", "u0"), "k3", {"text": "lemon sorbet"})  # b changes a's item after it
    b.put(("p", "u2"), "k2", {"text": "old espresso"})  # and one a is about to overwrite
    a.put(("p", "u2"), "k2", {"text": "espresso with milk"})
    b.delete(("p", "u1"), "k1")
    a.put(("p", "u1"), "fresh", {"text": "matcha ice cream"})
    fresh = open_db()
    assert _same(_snapshot(a), _snapshot(fresh)) and _same(_snapshot(b), _snapshot(fresh))
    assert a._scoped.pending == set()


def test_a_writer_that_never_searches_keeps_few_pending_positions(open_db: Opener,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import hy_memory_langgraph.store.vector.scoped as scoped

    monkeypatch.setattr(scoped, "PENDING_MAX", 3)
    a, b = open_db(), open_db()
    _fill(a)
    a.search(("p",), query="green tea")
    assert a._scoped is not None
    for i in range(10):  # b's writes put a behind before each of a's
        b.put(("p", "u0"), f"b{i}", {"text": f"kayak {i}"})
        a.put(("p", "u0"), f"a{i}", {"text": f"matcha {i}"})
        assert len(a._scoped.pending) <= 3
    assert _same(_snapshot(a), _snapshot(open_db()))


def test_tiny_cache_evicts_but_stays_exact(open_db: Opener) -> None:
    big = open_db()
    for user in range(12):
        big.batch([PutOp(("c", f"u{user}"), f"k{i}", {"text": f"note {i} of user {user} {TEXTS[i % 10]}"})
                   for i in range(15)])
    expected = {q: (keys(r := big.search(("c",), query=q, limit=7)), [x.score for x in r]) for q in QUERIES}
    tiny = IndexCache(max_bytes=1)
    small = open_db(index_cache=tiny)
    for q in QUERIES:
        found = small.search(("c",), query=q, limit=7)
        assert keys(found) == expected[q][0]
        assert scores_close([x.score for x in found], expected[q][1])
    assert len(tiny) == 1 and tiny.evictions >= 11
    one = small.search(("c", "u3"), query="note 2 of user 3", limit=3)
    assert keys(one) == keys(big.search(("c", "u3"), query="note 2 of user 3", limit=3))


def test_filters_apply_before_top_k_across_scopes(open_db: Opener) -> None:
    store = open_db(index_cache=IndexCache(max_bytes=1))
    for user in range(5):
        store.batch([PutOp(("f", f"u{user}"), f"k{i}", {"text": f"green tea {i}", "tag": i % 10})
                     for i in range(40)])
    hits = store.search(("f",), query="green tea", filter={"tag": 3}, limit=100)
    assert len(hits) == 20 and {h.value["tag"] for h in hits} == {3}


def test_pruned_change_log_reloads_scopes(open_db: Opener, caplog: pytest.LogCaptureFixture) -> None:
    reader = open_db(changelog_retention=1, index_cache=IndexCache(1 << 30))
    writer = open_db(changelog_retention=1)
    reader.put(("p", "x"), "seed", {"text": "seed"})
    assert reader.search(("p", "x"), query="seed")
    writer.put(("p", "x"), "w-last", {"text": "green tea writer"})
    writer.batch([PutOp(("p", "x"), f"bulk{i}", {"text": f"bulk {i}"}) for i in range(1001)])
    assert keys(reader.search(("p", "x"), query="green tea writer", limit=1)) == ["w-last"]


def test_dims_mismatch_is_config_error(open_db: Opener) -> None:
    open_db().put(("p",), "k", {"text": "x"})
    with pytest.raises(ConfigError, match="64-dim"):
        open_db(index=index_config(["text"], dims=32))


def test_a_damaged_vector_fails_the_scope_load_by_name(tmp_path: Path) -> None:
    import contextlib  # noqa: PLC0415
    import sqlite3  # noqa: PLC0415

    from hy_memory_langgraph.errors import StoreCorruptionError  # noqa: PLC0415

    path = tmp_path / "mem.db"
    with HyMemoryStore(path, index=index_config(["text"])) as store:
        _fill(store)
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:  # one blob cut to 3 dims (a torn write)
        conn.execute("UPDATE hy_store_vectors SET embedding = substr(embedding, 1, 12) "
                     "WHERE item_id = (SELECT min(item_id) FROM hy_store_vectors)")
    with HyMemoryStore(path, index=index_config(["text"])) as store:
        with pytest.raises(StoreCorruptionError, match="3 dims, the index has 64"):
            store.search(("p",), query="green tea")
        assert store.get(("p", "u0"), "k0") is not None  # the rows themselves stay readable


def test_closed_store_raises(open_db: Opener) -> None:
    store = open_db()
    store.close()
    store.close()  # idempotent
    assert store.closed
    with pytest.raises(StoreError):
        store.get(("p",), "k")


def test_in_memory_sqlite_url(tmp_path: Path) -> None:
    with HyMemoryStore("sqlite://", index=index_config(["text"])) as store:
        _fill(store)
        assert keys(store.search(("p",), query="green tea", limit=1)) == ["k0"]
    assert list(tmp_path.iterdir()) == []


def test_cache_accounting_follows_changes() -> None:
    from hy_memory_langgraph.store.vector.mirror import Mirror

    cache = IndexCache(max_bytes=10 << 20)
    mirror = Mirror(8)
    cache.put(("o", "s"), mirror)
    empty = cache.nbytes
    mirror.apply({1: ("s", np.ones((100, 8), np.float32))})
    cache.resize(("o", "s"))
    assert cache.nbytes > empty + 100 * 8 * 4
    cache.drop_owner("o")
    assert cache.nbytes == 0 and len(cache) == 0


def test_quiet_on_open(open_db: Opener, caplog: pytest.LogCaptureFixture) -> None:
    _fill(open_db())
    with caplog.at_level(logging.WARNING, logger="hy_memory_langgraph.store"):
        open_db().search(("p",), query="tea")
    assert not caplog.records


def test_nul_characters_are_refused_on_postgresql_only(open_db: Opener) -> None:
    store = open_db()
    on_postgres = store.url.startswith("postgresql")
    for value in ({"text": "a\x00b"}, {"other": ["x", "nul \x00 inside"]}):
        if on_postgres:
            with pytest.raises(InvalidInputError, match="NUL"):
                store.put(("p",), "k", value)
        else:
            store.put(("p",), "k", value)
            assert store.get(("p",), "k").value == value
    store.put(("p",), "fine", {"text": "a backslash \\u0000 is not a NUL"})
    assert store.get(("p",), "fine").value == {"text": "a backslash \\u0000 is not a NUL"}


@pytest.mark.parametrize("miscount", [-3, 0, 3])
def test_a_scope_loads_a_page_at_a_time_whatever_was_counted(open_db: Opener, monkeypatch: pytest.MonkeyPatch,
                                                            miscount: int) -> None:
    """A scope's vectors are read in pages of rows into an array sized by a count made
    first; rows written or removed between the count and the pages still load exactly."""
    from hy_memory_langgraph.store.sql import statements  # noqa: PLC0415
    from hy_memory_langgraph.store.vector import scoped  # noqa: PLC0415

    writer = open_db()
    for i in range(40):
        writer.put(("p", "u0"), f"k{i}", {"text": f"{TEXTS[i % len(TEXTS)]} {i}"})
    want = [(r.key, r.score) for r in open_db().search(("p", "u0"), query="green tea", limit=40)]
    size = statements.scope_size
    monkeypatch.setattr(statements, "scope_size", lambda *args: (size(*args)[0] + miscount, size(*args)[1]))
    monkeypatch.setattr(scoped, "_FILL_CHUNK", 7)  # pages end inside the scope, not at its end
    got = [(r.key, r.score) for r in open_db().search(("p", "u0"), query="green tea", limit=40)]
    assert [k for k, _ in got] == [k for k, _ in want] and len(got) == 40
    assert scores_close([s for _, s in got], [s for _, s in want])


def test_an_item_of_several_vectors_met_while_paging_loads_grouped(open_db: Opener,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """When the count said one vector per item but a page holds an item of several (written
    between the two), the scope is read again grouped per item."""
    from hy_memory_langgraph.store.sql import statements  # noqa: PLC0415

    writer = open_db(index=index_config(["text", "notes[*]"]))
    for i in range(12):
        writer.put(("p", "u0"), f"k{i}", {"text": TEXTS[i % len(TEXTS)], "notes": ["iced", "warm"] if i == 5 else []})
    want = [(r.key, r.score) for r in open_db(index=index_config(["text", "notes[*]"])).search(
        ("p", "u0"), query="iced warm", limit=12)]
    size = statements.scope_size
    monkeypatch.setattr(statements, "scope_size", lambda *args: (size(*args)[0], 0))
    reader = open_db(index=index_config(["text", "notes[*]"]))
    got = [(r.key, r.score) for r in reader.search(("p", "u0"), query="iced warm", limit=12)]
    assert got[0][0] == want[0][0] == "k5" and [k for k, _ in got] == [k for k, _ in want]
