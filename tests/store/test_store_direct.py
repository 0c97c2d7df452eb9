"""The driver path for prebuilt statements (``store/db/direct.py``) gives what SQLAlchemy
gives: rows, processed values, errors; and the store's statements take it on SQLite and
PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.store.db import direct
from hy_memory_langgraph.store.db.engine import create_store_engine, write_tx
from hy_memory_langgraph.testing import HashingEmbeddings
from tests.reliability.pg_admin import admin_scalar

META = sa.MetaData()
THINGS = sa.Table(
    "things", META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.Text, nullable=False, unique=True),
    sa.Column("weight", sa.Float, nullable=True),
    sa.Column("ready", sa.Boolean, nullable=False),
)
DEFAULTED = sa.Table(
    "defaulted", META,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("label", sa.Text, nullable=False, default="unnamed"),
)
INSERT = sa.insert(THINGS)
INSERT_RETURNING = sa.insert(THINGS).returning(THINGS.c.id, THINGS.c.name)
BY_NAMES = sa.select(THINGS.c.name, THINGS.c.weight, THINGS.c.ready).where(
    THINGS.c.name.in_(sa.bindparam("names", expanding=True)),
    sa.func.coalesce(THINGS.c.weight, 99.0) > sa.bindparam("low"),
).order_by(THINGS.c.name)
SET_READY = sa.update(THINGS).where(THINGS.c.name == sa.bindparam("b_name")).values(
    ready=sa.bindparam("b_ready"))


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[sa.Engine]:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'direct.db'}")
    META.create_all(engine)
    yield engine
    engine.dispose()


def _rows(n: int) -> list[dict[str, Any]]:
    return [{"name": f"n{i:04d}", "weight": None if i % 3 == 0 else i / 2, "ready": i % 2 == 0}
            for i in range(n)]


def _through_sqlalchemy(engine: sa.Engine, stmt: Any, params: Any) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(stmt, params)]


def test_rows_and_values_match_sqlalchemys(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        direct.run(conn, INSERT, _rows(10))
        direct.run(conn, SET_READY, [{"b_name": "n0001", "b_ready": True}])
    params = {"names": ["n0001", "n0003", "n0004", "missing"], "low": 0.1}
    with engine.connect() as conn:
        rows = direct.fetch(conn, BY_NAMES, params)
    assert [tuple(r) for r in rows] == _through_sqlalchemy(engine, BY_NAMES, params)
    assert [(r.name, r.weight, r.ready) for r in rows] == [
        ("n0001", 0.5, True), ("n0003", None, False), ("n0004", 2.0, True)]
    assert all(type(r.ready) is bool for r in rows)  # the Boolean result processor ran


def test_one_shape_per_in_list_length(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        direct.run(conn, INSERT, _rows(6))
    with engine.connect() as conn:
        for names in (["n0002"], ["n0002", "n0005"], ["n0001", "n0002", "n0005"], ["n0002"]):
            got = [r.name for r in direct.fetch(conn, BY_NAMES, {"names": names, "low": 0.0})]
            assert got == sorted(n for n in names if n != "n0000")


def test_an_empty_in_list_matches_nothing(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        direct.run(conn, INSERT, _rows(3))
    with engine.connect() as conn:
        assert direct.fetch(conn, BY_NAMES, {"names": [], "low": 0.0}) == []


def test_insert_returning_spans_several_statements(engine: sa.Engine,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(direct, "ROWS_PER_INSERT", 7)
    with engine.begin() as conn:
        returned = direct.insert_returning(conn, INSERT_RETURNING, _rows(30))
    assert sorted(r.name for r in returned) == [f"n{i:04d}" for i in range(30)]
    with engine.connect() as conn:
        stored = dict(conn.execute(sa.select(THINGS.c.name, THINGS.c.id)).all())
    assert {r.name: r.id for r in returned} == stored


@pytest.mark.parametrize(("which", "message"), [("engine", "UNIQUE"), ("pg_engine", "duplicate key")])
def test_driver_errors_are_sqlalchemys_and_roll_back(request: pytest.FixtureRequest, which: str,
                                                     message: str) -> None:
    engine: sa.Engine = request.getfixturevalue(which)
    with pytest.raises(sa.exc.IntegrityError, match=message):
        with engine.begin() as conn:
            direct.run(conn, INSERT, _rows(2))
            direct.insert_returning(conn, INSERT_RETURNING, [_rows(2)[1]])
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(THINGS)).scalar() == 0


def test_cursor_listeners_see_every_statement(engine: sa.Engine) -> None:
    seen: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    with engine.begin() as conn:
        direct.run(conn, INSERT, _rows(3))
        rows = direct.fetch(conn, BY_NAMES, {"names": ["n0001"], "low": 0.0})
    assert [r.name for r in rows] == ["n0001"]
    assert sum(s.startswith("INSERT") for s in seen) == 1
    assert sum(s.startswith("SELECT") for s in seen) == 1


def test_column_defaults_are_filled(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        direct.run(conn, sa.insert(DEFAULTED), [{"id": 1}, {"id": 2}])
        rows = direct.fetch(conn, sa.select(DEFAULTED.c.label).order_by(DEFAULTED.c.id))
    assert [r.label for r in rows] == ["unnamed", "unnamed"]


@pytest.fixture
def pg_engine(pg_url: str) -> Iterator[sa.Engine]:
    """A PostgreSQL engine whose tables live in schema ``tenant`` (named by the
    connection's ``schema_translate_map``, as the store's engines do)."""
    engine = sa.create_engine(pg_url, execution_options={"schema_translate_map": {None: "tenant"}})
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE SCHEMA tenant")
        META.create_all(conn)
    yield engine
    engine.dispose()


@pytest.fixture
def sqlalchemy_calls(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Statements that went through ``Connection.execute`` while the test ran."""
    calls: list[Any] = []
    original = sa.engine.Connection.execute

    def spy(self: sa.engine.Connection, statement: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(statement)
        return original(self, statement, *args, **kwargs)

    monkeypatch.setattr(sa.engine.Connection, "execute", spy)
    return calls


def test_postgresql_takes_the_driver_path_with_sqlalchemys_values(
        pg_engine: sa.Engine, sqlalchemy_calls: list[Any]) -> None:
    """On psycopg the prebuilt statements skip ``Connection.execute``, in the schema the
    connection names, and give what SQLAlchemy gives (typed casts of ``IN`` elements,
    float and boolean results, multi-row ``RETURNING``)."""
    with pg_engine.begin() as conn:
        returned = direct.insert_returning(conn, INSERT_RETURNING, _rows(4))
        direct.run(conn, INSERT, _rows(9)[4:])
        direct.run(conn, SET_READY, [{"b_name": "n0001", "b_ready": True}, {"b_name": "n0003", "b_ready": True}])
    params = {"names": ["n0001", "n0002", "n0003", "n0007", "missing"], "low": 0.1}
    with pg_engine.connect() as conn:
        rows = direct.fetch(conn, BY_NAMES, params)
    assert sqlalchemy_calls == []
    assert sorted(r.name for r in returned) == ["n0000", "n0001", "n0002", "n0003"]
    assert [(r.name, r.weight, r.ready) for r in rows] == [
        ("n0001", 0.5, True), ("n0002", 1.0, True), ("n0003", None, True), ("n0007", 3.5, False)]
    assert [tuple(r) for r in rows] == _through_sqlalchemy(pg_engine, BY_NAMES, params)
    with pg_engine.connect() as conn:  # the rows are in the translated schema, not in public
        assert conn.exec_driver_sql("SELECT count(*) FROM tenant.things").scalar() == 9
        assert conn.exec_driver_sql("SELECT to_regclass('public.things')").scalar() is None


def test_a_lost_server_connection_is_invalidated(pg_engine: sa.Engine) -> None:
    """A statement on a connection the server closed raises SQLAlchemy's error marked
    ``connection_invalidated``, and the pool opens a new connection for the next caller."""
    with pg_engine.connect() as conn:
        pid = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        with pg_engine.connect() as admin:
            admin.exec_driver_sql(f"SELECT pg_terminate_backend({int(pid)})")
        with pytest.raises(sa.exc.DBAPIError) as caught:
            direct.fetch(conn, BY_NAMES, {"names": ["n0001"], "low": 0.0})
        assert caught.value.connection_invalidated
        assert conn.invalidated
    with pg_engine.connect() as conn:
        assert direct.fetch(conn, BY_NAMES, {"names": ["n0001"], "low": 0.0}) == []


def test_a_lost_connection_retires_the_pools_older_ones(pg_engine: sa.Engine, pg_url: str) -> None:
    """When the server drops every connection (a restart), the first statement to fail
    also retires the other pooled connections, as SQLAlchemy does: the next caller gets
    a new connection instead of another dead one."""
    with pg_engine.connect() as first, pg_engine.connect() as second:  # two pooled connections
        pids = [int(c.exec_driver_sql("SELECT pg_backend_pid()").scalar()) for c in (first, second)]
    for pid in pids:  # from outside the pool
        assert admin_scalar(pg_url, f"SELECT pg_terminate_backend({pid})")
    with pg_engine.connect() as conn, pytest.raises(sa.exc.DBAPIError) as caught:
        direct.fetch(conn, BY_NAMES, {"names": ["n0001"], "low": 0.0})
    assert caught.value.connection_invalidated
    with pg_engine.connect() as conn:
        assert direct.fetch(conn, BY_NAMES, {"names": ["n0001"], "low": 0.0}) == []
        assert int(conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()) not in pids


def test_sqlite_under_a_schema_translation_runs_through_sqlalchemy(
        engine: sa.Engine, sqlalchemy_calls: list[Any]) -> None:
    with engine.connect() as conn:
        conn = conn.execution_options(schema_translate_map={None: None})
        assert direct.fetch(conn, BY_NAMES, {"names": ["n0001"], "low": 0.0}) == []
    assert len(sqlalchemy_calls) == 1


def test_a_grouped_postgresql_batch_runs_no_statement_through_sqlalchemy(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Puts, a delete, a get, a listing and a search grouped in one batch on PostgreSQL
    all take the driver path (reads, the locks with ``BEGIN``, the writes, the commit)."""
    from langgraph.store.base import GetOp, ListNamespacesOp, PutOp, SearchOp

    from hy_memory_langgraph.store import HyMemoryStore

    ttl = {"default_ttl": 5.0, "refresh_on_read": True}
    with HyMemoryStore.from_conn_string(pg_url, ttl=ttl) as store:  # type: ignore[arg-type]
        ns = ("test", "foo", "0")
        for i in range(5):
            store.put(ns, f"key{i}", {"foo": i})
        through: list[Any] = []
        for name in ("execute", "exec_driver_sql"):
            original = getattr(sa.engine.Connection, name)
            monkeypatch.setattr(sa.engine.Connection, name, lambda self, stmt, *a, _o=original, **k:
                                (through.append(stmt), _o(self, stmt, *a, **k))[1])
        results = store.batch([PutOp(ns, "key1", {"foo": "one"}), GetOp(ns, "key2"),
                               ListNamespacesOp(match_conditions=None, max_depth=2),
                               SearchOp(("test",), None, 3, 1), PutOp(ns, "key4", None)])
        monkeypatch.undo()
        assert through == []
        assert results[1] is not None and results[1].value == {"foo": 2}
        assert results[2] == [("test", "foo")]
        assert [item.key for item in results[3]] == ["key3", "key2", "key1"]  # newest first, offset 1
        assert store.get(ns, "key1").value == {"foo": "one"}  # type: ignore[union-attr]
        assert store.get(ns, "key4") is None
        assert [item.key for item in store.search(("test",), limit=10)] == ["key1", "key3", "key2", "key0"]


def test_a_lite_add_runs_no_statement_through_sqlalchemy_execute(
        tmp_path: Path, sqlalchemy_calls: list[Any]) -> None:
    """The statements of a lite chat add on SQLite all take the driver path (the one
    left to ``Connection`` is the ``BEGIN`` it emits itself)."""
    client = HyMemoryClient(mode="lite", data_dir=tmp_path, embeddings=HashingEmbeddings())
    try:
        for i in range(3):
            client.add(f"Warm-up note {i} about the garden.", user_id="u1", session_id="s1")
        sqlalchemy_calls.clear()
        result = client.add("My sister planted a lemon tree last May.", user_id="u1", session_id="s1")
        executed = list(sqlalchemy_calls)
        assert result["ops_summary"]["ADD"] == 1
        assert executed == []
        assert client.search("lemon tree", user_ids=["u1"])["memories"][0]["content"].startswith("My sister")
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


def test_an_echoing_engine_logs_every_statement(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'echo.db'}", echo=True)
    META.create_all(engine)
    try:
        with caplog.at_level("INFO", logger="sqlalchemy.engine"), engine.begin() as conn:
            direct.run(conn, INSERT, _rows(2))
            assert [r.name for r in direct.fetch(conn, BY_NAMES, {"names": ["n0001"], "low": 0.0})] == ["n0001"]
        logged = [r.getMessage() for r in caplog.records]
        assert any(m.startswith("INSERT INTO things") for m in logged)
        assert any(m.startswith("SELECT things.name") for m in logged)
    finally:
        engine.dispose()


def test_a_busy_database_fails_a_write_with_sqlalchemys_error(tmp_path: Path) -> None:
    """``BEGIN IMMEDIATE`` runs on the driver; a writer that cannot get the lock gets
    ``sqlalchemy.exc.OperationalError`` as before, and the holder's write is kept."""
    engine, _ = create_store_engine(tmp_path / "busy.db")
    try:
        with write_tx(engine) as holder:
            holder.exec_driver_sql("CREATE TABLE t (x INTEGER)")
            with engine.connect() as other:
                other.connection.driver_connection.execute("PRAGMA busy_timeout = 20")
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
    from langgraph.store.base import GetOp, PutOp

    from hy_memory_langgraph.store import HyMemoryStore

    with HyMemoryStore(tmp_path / "gets.db", index=None) as store:
        store.batch([PutOp(("a", "u"), "k1", {"v": 1}), PutOp(("b", "u"), "k2", {"v": 2}),
                     PutOp(("a", "u"), "k2", {"v": 3})])
        sent: list[str] = []
        sa.event.listen(store._engine, "checkout", lambda dbapi, *_: dbapi.set_trace_callback(sent.append))
        got = store.batch([GetOp(("a", "u"), "k1"), GetOp(("b", "u"), "k2"), GetOp(("b", "u"), "k1")])
        assert [None if item is None else (item.namespace, item.key, item.value) for item in got] == [
            (("a", "u"), "k1", {"v": 1}), (("b", "u"), "k2", {"v": 2}), None]
        assert len(sent) == 1 and sent[0].startswith("SELECT")
        sent.clear()
        many = [GetOp((f"n{i}", "u"), f"k{j}") for i in range(5) for j in range(5)]  # 25 pairs: 5 statements
        assert store.batch(many) == [None] * 25
        assert [s.split()[0] for s in sent] == ["BEGIN", *["SELECT"] * 5, "COMMIT"]
