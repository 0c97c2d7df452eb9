"""PostgreSQL: equality filters are answered by the GIN index over the item values, with
the same results as before (the exact test stays beside the containment test)."""

from __future__ import annotations

import sqlalchemy as sa
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

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
