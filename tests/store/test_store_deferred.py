"""PostgreSQL: statements without results travel with the commit, the transaction's
opening with the first statement (store/db/deferred.py).

Queued statements run in the writer's transaction, after what it sent meanwhile and
before ``COMMIT``; a rolled-back transaction runs none of them; a listened-to connection
and SQLite queue nothing. ``BEGIN`` and the scope locks go out with the first statement,
whichever path it takes. The store's own writes keep their effects (TTL refreshes,
vector drops, emptied lexical statistics) while a mixed batch costs fewer round trips.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
from langgraph.store.base import GetOp, ListNamespacesOp, PutOp, SearchOp

from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.store.db import deferred, direct
from hy_memory_langgraph.store.db.engine import create_store_engine, release_engine, write_tx
from hy_memory_langgraph.store.lexical.ops import LexicalOp


@pytest.fixture
def engine(pg_url: str) -> Iterator[sa.Engine]:
    engine, _ = create_store_engine(pg_url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (k int PRIMARY KEY, v int NOT NULL)")
        conn.exec_driver_sql("INSERT INTO t VALUES (1, 0), (2, 0)")
    yield engine
    release_engine(engine)


def _values(engine: sa.Engine) -> dict[int, int]:
    with engine.connect() as conn:
        return dict(conn.exec_driver_sql("SELECT k, v FROM t").all())


def test_queued_statements_run_in_order_before_the_commit(engine: sa.Engine) -> None:
    with write_tx(engine, scopes=["a"]) as conn:
        assert deferred.defer(conn, "UPDATE t SET v = %s WHERE k = %s", [5, 1])
        assert deferred.defer(conn, "UPDATE t SET v = v * %s WHERE k = ANY(%s::int[])", [3, [1, 2]])
        conn.exec_driver_sql("UPDATE t SET v = 7 WHERE k = 2")  # sent now: runs before the queue
        assert _values(engine) == {1: 0, 2: 0}  # nothing is visible before the commit
    assert _values(engine) == {1: 15, 2: 21}


def test_a_rolled_back_transaction_runs_nothing_queued(engine: sa.Engine) -> None:
    with pytest.raises(RuntimeError), write_tx(engine, scopes=["a"]) as conn:
        assert deferred.defer(conn, "UPDATE t SET v = %s", [9])
        raise RuntimeError("the writer failed")
    with write_tx(engine, scopes=["a"]) as conn:  # the connection starts clean
        assert deferred.take(conn) == ([], [])
    assert _values(engine) == {1: 0, 2: 0}


def test_a_failing_queued_statement_fails_the_commit_as_sqlalchemys_error(engine: sa.Engine) -> None:
    with pytest.raises(sa.exc.IntegrityError), write_tx(engine, scopes=["a"]) as conn:
        conn.exec_driver_sql("UPDATE t SET v = 3 WHERE k = 1")
        assert deferred.defer(conn, "UPDATE t SET v = NULL WHERE k = %s", [2])
    assert _values(engine) == {1: 0, 2: 0}
    for _ in range(3):  # the pool's connections were left clean: writes go on
        with write_tx(engine, scopes=["a"]) as conn:
            assert deferred.defer(conn, "UPDATE t SET v = v + %s WHERE k = 1", [1])
    assert _values(engine) == {1: 3, 2: 0}


def test_statements_are_not_queued_outside_a_begun_transaction_or_when_observed(
        engine: sa.Engine, tmp_path: Path) -> None:
    with engine.begin() as conn:
        assert not deferred.defer(conn, "UPDATE t SET v = 1", [])
    sa.event.listen(engine, "before_cursor_execute", lambda *args: None)
    with write_tx(engine, scopes=["a"]) as conn:
        assert not deferred.defer(conn, "UPDATE t SET v = 1", [])
    lite, _ = create_store_engine(tmp_path / "s.db")
    with write_tx(lite, scopes=["a"]) as conn:
        assert not deferred.defer(conn, "UPDATE t SET v = 1", [])
    release_engine(lite)


def _expiry(store: HyMemoryStore, key: str) -> int:
    with store._engine.connect() as conn:
        return int(conn.exec_driver_sql("SELECT expires_at FROM public.hy_store_items WHERE key = %(k)s",
                                        {"k": key}).scalar_one())


class _Trips:
    """The strings the driver sends (one client round trip each; client cursors too)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[str] = []
        monkeypatch.setattr(psycopg.Cursor, "execute", self._wrap(psycopg.Cursor.execute))

    def _wrap(self, execute: Any) -> Any:
        def counted(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            self.sent.append(str(query))
            return execute(cursor, query, *args, **kwargs)
        return counted


T = sa.table("t", sa.column("k", sa.Integer), sa.column("v", sa.Integer))
BY_KEY = sa.select(T.c.v).where(T.c.k == sa.bindparam("k", type_=sa.Integer()))
_OPENING = "BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE; SELECT count(pg_advisory_xact_lock("


def test_the_opening_travels_with_the_first_statement(engine: sa.Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """``BEGIN`` and the scope locks are sent with the block's first statement, in its
    round trip; a block that sends nothing begins nothing."""
    trips = _Trips(monkeypatch)
    with write_tx(engine, scopes=["a"]) as conn:
        assert trips.sent == []
        assert [r.v for r in direct.fetch(conn, BY_KEY, {"k": 2})] == [0]
        direct.run(conn, sa.update(T).where(T.c.k == sa.bindparam("b_k")).values(v=sa.bindparam("b_v")),
                   {"b_k": 1, "b_v": 4})
    assert trips.sent[0].startswith(_OPENING) and trips.sent[0].endswith("WHERE t.k = %s::INTEGER")
    assert len(trips.sent) == 3 and trips.sent[1].startswith("UPDATE") and trips.sent[2] == "COMMIT"
    assert _values(engine) == {1: 4, 2: 0}
    trips.sent.clear()
    with write_tx(engine, scopes=["a"]):
        pass
    assert trips.sent == []


@pytest.mark.parametrize("first", ["exec_driver_sql", "execute"])
def test_a_statement_through_sqlalchemy_sends_the_opening_first(engine: sa.Engine, first: str) -> None:
    """A block whose first statement goes through SQLAlchemy (``execute`` or
    ``exec_driver_sql``) still runs it inside the transaction: a failed block leaves
    nothing behind."""
    with pytest.raises(RuntimeError), write_tx(engine, scopes=["a"]) as conn:
        if first == "execute":
            conn.execute(sa.update(T).where(T.c.k == 1).values(v=8))
        else:
            conn.exec_driver_sql("UPDATE t SET v = 8 WHERE k = 1")
        assert _values(engine) == {1: 0, 2: 0}  # not committed on its own
        raise RuntimeError("the writer failed")
    assert _values(engine) == {1: 0, 2: 0}


def test_an_observed_transaction_begins_at_once(engine: sa.Engine) -> None:
    seen: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    with write_tx(engine, scopes=["a"]):
        assert len(seen) == 1 and seen[0].startswith(_OPENING)
    assert seen[-1] == "COMMIT"


def test_a_mixed_batch_keeps_its_effects_in_fewer_round_trips(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ns = ("test", "u1")
    with HyMemoryStore(pg_url, ttl={"default_ttl": 10.0, "refresh_on_read": True}) as store:
        for i in range(4):
            store.put(ns, f"k{i}", {"n": i})  # with the default TTL
        store.batch([LexicalOp(ns, "k3", {"tea": 1})])
        before = {i.key: i for i in store.search(ns, refresh_ttl=False)}
        expiry = _expiry(store, "k0")
        trips = _Trips(monkeypatch)
        store.batch([GetOp(ns, "k0"), PutOp(ns, "k1", {"n": 10}), PutOp(ns, "k2", None),
                     PutOp(ns, "k3", None), SearchOp(("test",), None, 10, 0),
                     ListNamespacesOp(match_conditions=None, max_depth=2)])
        sent = list(trips.sent)
        monkeypatch.undo()
        # the TTL refresh, the drop of the re-put item's vectors and of the emptied
        # namespace's statistics travel with the change log and COMMIT, in one string
        last, carried = sent[-1], ("SET expires_at = CAST", "DELETE FROM public.hy_store_vectors",
                                   "DELETE FROM public.hy_lexical_spaces")
        assert last.rstrip().endswith("COMMIT") and all(part in last for part in carried)
        assert not any(part in earlier for earlier in sent[:-1] for part in carried)
        assert sum(text.rstrip().endswith("COMMIT") for text in sent) == 1
        after = {i.key: i for i in store.search(ns, refresh_ttl=False)}
        assert set(after) == {"k0", "k1"} and after["k1"].value == {"n": 10}
        assert after["k0"].updated_at == before["k0"].updated_at and _expiry(store, "k0") > expiry
        assert store.lexical_status(("test", "u1")).docs == 0  # k3's document went with it
        with store._engine.connect() as conn:
            spaces = conn.exec_driver_sql("SELECT count(*) FROM public.hy_lexical_spaces").scalar()
        assert spaces == 0  # the emptied namespace's statistics are gone


def test_a_put_costs_two_round_trips_and_keeps_its_vectors(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A put on PostgreSQL: the opening travels with the upsert, the vector rows (the old
    ones dropped first on a re-put) with the change log and ``COMMIT``; the vectors are
    in the table, as a store opened afresh finds them."""
    from hy_memory_langgraph.testing import HashingEmbeddings  # noqa: PLC0415

    def index() -> Any:
        return {"dims": 16, "embed": HashingEmbeddings(dims=16), "fields": ["text"]}

    ns = ("test", "u1")
    with HyMemoryStore(pg_url, index=index()) as store:
        store.put(ns, "warm", {"text": "a first note"})
        for text in ("tea with lemon", "coffee with milk"):
            trips = _Trips(monkeypatch)
            store.put(ns, "k", {"text": text})
            sent = list(trips.sent)
            monkeypatch.undo()
            assert len(sent) == 2
            assert sent[0].startswith(_OPENING) and "INSERT INTO public.hy_store_items" in sent[0]
            assert "INSERT INTO public.hy_store_vectors" in sent[1] and sent[1].endswith("COMMIT")
        with store._engine.connect() as conn:
            stored = conn.exec_driver_sql("SELECT v.text FROM public.hy_store_vectors v JOIN "
                                          "public.hy_store_items i ON i.id = v.item_id WHERE i.key = 'k'").all()
        assert [row[0] for row in stored] == ["coffee with milk"]
    with HyMemoryStore(pg_url, index=index()) as fresh:
        assert fresh.search(ns, query="coffee with milk", limit=1)[0].key == "k"
