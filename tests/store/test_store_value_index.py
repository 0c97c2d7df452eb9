"""Value filters that use an index: on PostgreSQL the GIN index over all item values, on
SQLite the expression indexes of declared ``filter_fields``; the results stay those of
the filter language (the exact test stays beside the indexed one)."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest
import sqlalchemy as sa
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from hy_memory_langgraph.errors import ConfigError, InvalidInputError
from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.store.schema.tables import items
from hy_memory_langgraph.store.sql.filters import compile_filter

VALUES = [
    {"cat": "c7", "ok": True, "n": 7, "meta": {"kind": "note", "tags": ["c7"]}},
    {"cat": "c8", "ok": False, "n": 7.0, "meta": {"kind": "note"}},
    {"cat": ["c7"], "ok": "true", "n": "7", "meta": {"kind": ["note"]}},
    {"cat": "C7", "ok": 1, "meta": "note"},
    {"cat": None, "other": "c7"},
    {"cat": "c7 ", "ok": True, "meta": {"kind": "note", "more": {"deep": "x"}}},
]
FILTERS = [
    {"cat": "c7"}, {"cat": {"$eq": "c7"}}, {"ok": True}, {"ok": False}, {"n": 7}, {"meta.kind": "note"},
    {"meta": {"kind": "note"}}, {"cat": "c7", "ok": True}, {"$or": [{"cat": "c8"}, {"ok": True}]},
    {"cat": {"$ne": "c7"}}, {"meta.more.deep": "x"}, {"cat": None},
]


def _keys(store: object, flt: dict) -> list[str]:
    return sorted(item.key for item in store.search(("docs",), filter=flt, limit=100))  # type: ignore[attr-defined]


def test_equality_filters_on_postgres_match_the_same_filters_on_sqlite(pg_url: str, tmp_path) -> None:
    """SQLite has no value index: its results are the filter language's own. Equal to
    InMemoryStore's as well except where ours is strict by design (``True`` is not ``1``)."""
    ops = [PutOp(("docs",), f"k{i}", value) for i, value in enumerate(VALUES)]
    oracle = InMemoryStore()
    oracle.batch(ops)
    with HyMemoryStore(pg_url) as store, HyMemoryStore(tmp_path / "plain.db") as plain:
        store.batch(ops)
        plain.batch(ops)
        for flt in FILTERS:
            assert _keys(store, flt) == _keys(plain, flt), flt
        assert _keys(store, {"cat": "c7"}) == _keys(oracle, {"cat": "c7"}) == ["k0"]
        assert _keys(store, {"ok": True}) == ["k0", "k5"]  # InMemoryStore adds k3 (ok: 1)


def test_a_damaged_value_does_not_fail_the_index_or_the_filter(pg_url: str) -> None:
    with HyMemoryStore(pg_url) as store:
        store.put(("docs",), "good", {"cat": "c7"})
        store.put(("docs",), "bad", {"cat": "c7"})
        engine = sa.create_engine(pg_url)
        with engine.begin() as conn:  # what a crashed foreign writer might leave behind
            conn.execute(sa.update(items).where(items.c.key == "bad").values(value='{"cat": "c7"'))
        engine.dispose()
        assert _keys(store, {"cat": "c7"}) == ["good"]


def test_the_planner_answers_a_selective_equality_filter_from_the_index(pg_url: str) -> None:
    with HyMemoryStore(pg_url) as store:
        for lo in range(0, 4000, 500):
            store.batch([PutOp(("docs",), f"k{i}", {"cat": f"c{i % 100}", "i": i}) for i in range(lo, lo + 500)])
        where = compile_filter({"cat": "c7"}, store._json)
        engine = sa.create_engine(pg_url)
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("ANALYZE hy_store_items")
                compiled = sa.select(items.c.id).where(where).compile(
                    dialect=engine.dialect, compile_kwargs={"render_postcompile": True})
                plan = "\n".join(row[0] for row in conn.exec_driver_sql("EXPLAIN " + str(compiled), compiled.params))
                count = conn.execute(sa.select(sa.func.count()).select_from(items).where(where)).scalar()
        finally:
            engine.dispose()
        assert "ix_hy_store_items_value" in plan, plan
        assert count == 40


# ---------------------------------------------------------------- SQLite: declared fields


def test_declared_fields_on_sqlite_give_the_same_results(tmp_path) -> None:
    ops = [PutOp(("docs",), f"k{i}", value) for i, value in enumerate(VALUES)]
    with HyMemoryStore(tmp_path / "plain.db") as plain, \
            HyMemoryStore(tmp_path / "fields.db", filter_fields=["cat", "meta.kind", "ok"]) as fields:
        plain.batch(ops)
        fields.batch(ops)
        for flt in FILTERS:
            assert _keys(fields, flt) == _keys(plain, flt), flt


def test_a_declared_field_is_searched_through_its_index(tmp_path) -> None:
    path = tmp_path / "fields.db"
    with HyMemoryStore(path, filter_fields=["meta.kind"]) as store:
        store.batch([PutOp(("docs",), f"k{i}", {"meta": {"kind": f"c{i % 50}"}}) for i in range(500)])
        statements: list[tuple[str, object]] = []
        sa.event.listen(store._engine, "before_cursor_execute",
                        lambda conn, cursor, stmt, params, ctx, many: statements.append((stmt, params)))
        assert len(store.search(("docs",), filter={"meta.kind": "c7"}, limit=100)) == 10
    filtered = [(s, p) for s, p in statements if "json_extract(CASE" in s]
    assert filtered
    with contextlib.closing(sqlite3.connect(path)) as conn:
        plans = [str(conn.execute("EXPLAIN QUERY PLAN " + s, p).fetchall()) for s, p in filtered]
    assert any("ix_hy_store_items_f_meta_kind" in plan for plan in plans), plans


def test_a_damaged_value_fails_neither_the_declared_index_nor_the_filter(tmp_path) -> None:
    path = tmp_path / "fields.db"
    with HyMemoryStore(path, filter_fields=["cat"]) as store:
        store.put(("docs",), "good", {"cat": "c7"})
        store.put(("docs",), "bad", {"cat": "c7"})
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        conn.execute(sa.update(items).where(items.c.key == "bad").values(value='{"cat": "c7"'))
    engine.dispose()
    with HyMemoryStore(path, filter_fields=["cat"]) as store:  # reopening re-declares the index
        store.put(("docs",), "later", {"cat": "c7"})
        assert _keys(store, {"cat": "c7"}) == ["good", "later"]


def test_a_bad_declared_field_is_refused_with_its_name(tmp_path) -> None:
    with pytest.raises(InvalidInputError, match="a b"):
        HyMemoryStore(tmp_path / "x.db", filter_fields=["a b"])
    with pytest.raises(ConfigError, match="list of field names"):
        HyMemoryStore(tmp_path / "y.db", filter_fields="cat")  # type: ignore[arg-type]
