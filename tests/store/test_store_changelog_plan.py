"""Regression: reading the change-log bounds must not scan the log on every write.

``SELECT min(seq), max(seq)`` in one statement defeats SQLite's min/max optimisation
and scans ``hy_store_changes``; the vector indexes' catch-up (``store/vector/scoped.py``)
reads the bounds whenever the log moved, so put latency grew with the log. Each statement
run by :func:`change_bounds` must be answered by a primary-key seek.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.store.db.engine import read_tx
from hy_memory_langgraph.store.sql import statements as sql


def _plans_of_change_bounds(store: HyMemoryStore) -> tuple[tuple[int, int], list[tuple[str, str]]]:
    engine = store._engine
    seen: list[tuple[str, Any]] = []

    def capture(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any,
                executemany: bool) -> None:
        seen.append((statement, parameters))

    with read_tx(engine) as conn:
        sa.event.listen(engine, "before_cursor_execute", capture)
        try:
            bounds = sql.change_bounds(conn)
        finally:
            sa.event.remove(engine, "before_cursor_execute", capture)
        plans = []
        for statement, parameters in seen:
            rows = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).fetchall()
            plans.append((statement, " | ".join(str(r[-1]) for r in rows)))
    return bounds, plans


def test_change_bounds_uses_primary_key_not_scan(hy_factory: Callable[..., HyMemoryStore]) -> None:
    store = hy_factory(index=None)
    for i in range(20):  # a delete is logged (a write without vectors, before or after, is not)
        store.put(("x",), f"k{i}", {"text": "hi"}, index=False)
        store.delete(("x",), f"k{i}")
    bounds, plans = _plans_of_change_bounds(store)
    assert bounds[0] >= 1 and bounds[1] >= bounds[0]
    assert plans, "change_bounds ran no statement"
    for statement, plan in plans:
        if "hy_store_changes" not in statement:
            continue
        assert "SCAN" not in plan.upper(), (statement, plan)


def test_change_bounds_empty_log_is_zero(hy_factory: Callable[..., HyMemoryStore]) -> None:
    store = hy_factory(index=None)
    bounds, _ = _plans_of_change_bounds(store)
    assert bounds == (0, 0) or bounds[0] <= bounds[1]
