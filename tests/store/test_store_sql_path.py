"""Every statement of the stores runs one way, through SQLAlchemy's ``Connection``: what
the driver runs is what cursor listeners (statement counters, query-plan tests) see.
SQLite's own behaviour under it: statement journals in memory, ``BEGIN IMMEDIATE``
failing with SQLAlchemy's error, gets of a few namespaces in one statement; on
PostgreSQL a mixed batch keeps every effect and a failed write block leaves nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from langgraph.store.base import GetOp, ListNamespacesOp, PutOp, SearchOp
from sqlalchemy.engine.interfaces import ExecuteStyle

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.store import HyMemoryStore, LexicalOp
from hy_memory_langgraph.store.db.engine import create_store_engine, write_tx
from hy_memory_langgraph.testing import HashingEmbeddings


class _Both:
    """Statement executions seen by SQLAlchemy's cursor events and by the SQLite driver
    itself (its trace callback: one line per execution, each row of an ``executemany``
    included), in the calling thread (not the store's background upkeep)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.listened = 0
        self.traced: list[str] = []
        self._caller = threading.get_ident()
        sa.event.listen(engine, "before_cursor_execute", self._listened)
        sa.event.listen(engine, "checkout", lambda dbapi, *_: dbapi.set_trace_callback(self._traced))

    def _listened(self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any,
                  executemany: bool) -> None:
        if threading.get_ident() == self._caller:  # a DBAPI executemany runs once per row
            self.listened += len(parameters) if context.execute_style is ExecuteStyle.EXECUTEMANY else 1

    def _traced(self, line: str) -> None:
        if threading.get_ident() == self._caller:
            self.traced.append(line)

    def driver_statements(self) -> int:
        """What the driver ran, but the ``COMMIT`` / ``ROLLBACK`` SQLAlchemy asks of the
        DBAPI connection (``connection.commit()``), which are no cursor statements."""
        return sum(1 for line in self.traced if line not in ("COMMIT", "ROLLBACK"))


def test_every_statement_of_a_lite_add_and_search_reaches_sqlalchemys_listeners(tmp_path: Path) -> None:
    client = HyMemoryClient(mode="lite", data_dir=tmp_path, embeddings=HashingEmbeddings())
    try:
        for i in range(3):
            client.add(f"Warm-up note {i} about the garden.", user_id="u1", session_id="s1")
        store = client.context.stores.chat().store  # inside the privacy gate (SealedStore)
        assert isinstance(store, HyMemoryStore)
        both = _Both(store._engine)
        result = client.add("My sister planted a lemon tree last May.", user_id="u1", session_id="s1")
        found = client.search("lemon tree", user_ids=["u1"])["memories"]
        assert result["ops_summary"]["ADD"] == 1 and found[0]["content"].startswith("My sister")
        assert both.listened > 5  # the add and the search wrote and read
        assert both.driver_statements() == both.listened
    finally:
        client.close()


def test_temporary_data_stays_in_memory(tmp_path: Path) -> None:
    """Statement journals and sorts of the store's SQLite connections never go to a
    temporary file (one was created and unlinked in every add)."""
    engine, _ = create_store_engine(tmp_path / "settings.db")
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text("PRAGMA temp_store")).scalar() == 2  # MEMORY
    finally:
        engine.dispose()


def test_a_busy_database_fails_a_write_with_sqlalchemys_error(tmp_path: Path) -> None:
    """A writer that cannot get the lock at ``BEGIN IMMEDIATE`` gets
    ``sqlalchemy.exc.OperationalError``, and the holder's write is kept."""
    engine, _ = create_store_engine(tmp_path / "busy.db")
    try:
        with write_tx(engine) as holder:
            holder.exec_driver_sql("CREATE TABLE t (x INTEGER)")
            with engine.connect() as other:
                other.exec_driver_sql("PRAGMA busy_timeout = 20")
                other.commit()
                other.execution_options(hy_begin="IMMEDIATE")
                with pytest.raises(sa.exc.OperationalError, match="locked"):
                    other.begin()
        with engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM t").scalar() == 0
    finally:
        engine.dispose()


def test_gets_of_a_few_namespaces_are_one_statement_without_a_transaction(tmp_path: Path) -> None:
    """Two namespaces' keys in one statement (no BEGIN on SQLite): rows of pairs nobody
    asked for (``a``/``k2`` here) stay out; many pairs fall back to one statement per
    namespace, inside a transaction."""
    with HyMemoryStore(tmp_path / "gets.db", index=None) as store:
        store.batch([PutOp(("a", "u"), "k1", {"v": 1}), PutOp(("b", "u"), "k2", {"v": 2}),
                     PutOp(("a", "u"), "k2", {"v": 3})])
        both = _Both(store._engine)
        got = store.batch([GetOp(("a", "u"), "k1"), GetOp(("b", "u"), "k2"), GetOp(("b", "u"), "k1")])
        assert [None if item is None else (item.namespace, item.key, item.value) for item in got] == [
            (("a", "u"), "k1", {"v": 1}), (("b", "u"), "k2", {"v": 2}), None]
        assert len(both.traced) == 1 and both.traced[0].startswith("SELECT")
        both.traced.clear()
        many = [GetOp((f"n{i}", "u"), f"k{j}") for i in range(5) for j in range(5)]  # 25 pairs: 5 statements
        assert store.batch(many) == [None] * 25
        assert [s.split()[0] for s in both.traced] == ["BEGIN", *["SELECT"] * 5, "COMMIT"]


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[HyMemoryStore]:
    with HyMemoryStore.from_conn_string(pg_url, ttl={"default_ttl": 5.0, "refresh_on_read": True}) as store:
        yield store


def test_a_mixed_postgresql_batch_answers_and_writes_as_its_operations_alone(pg_store: HyMemoryStore) -> None:
    """Puts, a delete, a get, a listing and a search in one batch on PostgreSQL."""
    ns = ("test", "foo", "0")
    for i in range(5):
        pg_store.put(ns, f"key{i}", {"foo": i})
    results = pg_store.batch([PutOp(ns, "key1", {"foo": "one"}), GetOp(ns, "key2"),
                              ListNamespacesOp(match_conditions=None, max_depth=2),
                              SearchOp(("test",), None, 3, 1), PutOp(ns, "key4", None)])
    assert results[1] is not None and results[1].value == {"foo": 2}
    assert results[2] == [("test", "foo")]
    assert [item.key for item in results[3]] == ["key3", "key2", "key1"]  # newest first, offset 1
    assert pg_store.get(ns, "key1").value == {"foo": "one"}  # type: ignore[union-attr]
    assert pg_store.get(ns, "key4") is None
    assert [item.key for item in pg_store.search(("test",), limit=10)] == ["key1", "key3", "key2", "key0"]


@pytest.mark.parametrize("first", ["exec_driver_sql", "execute"])
def test_a_failed_postgresql_write_block_leaves_nothing(pg_url: str, first: str) -> None:
    """A scoped write transaction is one transaction: what its block ran before it
    failed is rolled back, and the pool's connections stay usable."""
    engine, _ = create_store_engine(pg_url)
    table = sa.table("t", sa.column("k", sa.Integer), sa.column("v", sa.Integer))
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE t (k int PRIMARY KEY, v int NOT NULL)")
            conn.exec_driver_sql("INSERT INTO t VALUES (1, 0)")
        with pytest.raises(RuntimeError), write_tx(engine, scopes=["a"]) as conn:
            if first == "execute":
                conn.execute(sa.update(table).where(table.c.k == 1).values(v=8))
            else:
                conn.exec_driver_sql("UPDATE t SET v = 8 WHERE k = 1")
            raise RuntimeError("the writer failed")
        for _ in range(3):
            with write_tx(engine, scopes=["a"]) as conn:
                conn.execute(sa.update(table).where(table.c.k == 1).values(v=table.c.v + 1))
        with engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT v FROM t").scalar() == 3
    finally:
        engine.dispose()


def test_a_mixed_postgresql_batch_keeps_every_effect(pg_url: str) -> None:
    """On PostgreSQL (its own TTL-refresh statement, ``SKIP LOCKED``): a get refreshes its
    item's TTL, a re-put replaces the item's vectors, a delete takes the item's lexical
    document and the statistics of the namespace it emptied."""
    ns = ("test", "u1")
    index: Any = {"dims": 16, "embed": HashingEmbeddings(dims=16), "fields": ["text"]}
    with HyMemoryStore(pg_url, index=index, ttl={"default_ttl": 10.0, "refresh_on_read": True}) as store:
        for i in range(4):
            store.put(ns, f"k{i}", {"text": f"note {i}"})
        store.batch([LexicalOp(ns, "k3", {"tea": 1})])
        with store._engine.connect() as conn:
            expiry = conn.exec_driver_sql(
                "SELECT expires_at FROM public.hy_store_items WHERE key = 'k0'").scalar_one()
        store.batch([GetOp(ns, "k0"), PutOp(ns, "k1", {"text": "coffee with milk"}), PutOp(ns, "k2", None),
                     PutOp(ns, "k3", None), SearchOp(("test",), None, 10, 0)])
        with store._engine.connect() as conn:
            refreshed = conn.exec_driver_sql(
                "SELECT expires_at FROM public.hy_store_items WHERE key = 'k0'").scalar_one()
            texts = conn.exec_driver_sql("SELECT v.text FROM public.hy_store_vectors v JOIN public.hy_store_items i "
                                         "ON i.id = v.item_id WHERE i.key = 'k1'").scalars().all()
            spaces = conn.exec_driver_sql("SELECT count(*) FROM public.hy_lexical_spaces").scalar()
        assert refreshed > expiry and texts == ["coffee with milk"] and spaces == 0
        assert {item.key for item in store.search(ns)} == {"k0", "k1"}
    with HyMemoryStore(pg_url, index=index) as fresh:  # the vectors a new store loads
        assert fresh.search(ns, query="coffee with milk", limit=1)[0].key == "k1"
