"""The reads of grouped calls go out together (``store/batch/prefetch.py``): on
PostgreSQL in one pipelined round trip, with the answers each call would get alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from langgraph.store.base import BaseStore, GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from hy_memory_langgraph.store import HyMemoryStore

NS = ("test", "u1")


def _answers(results: list[Any]) -> list[Any]:
    out = []
    for result in results:
        if isinstance(result, list):
            out.append([(r.namespace, r.key, r.value) if hasattr(r, "key") else r for r in result])
        else:
            out.append(None if result is None else (result.namespace, result.key, result.value))
    return out


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_grouped_reads_answer_as_alone_in_one_round_trip(
        open_store: Callable[..., BaseStore], backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = open_store(index=None, ttl={"default_ttl": 10.0, "refresh_on_read": True})
    assert isinstance(store, HyMemoryStore)
    for i in range(6):
        store.put((*NS, f"n{i % 2}"), f"k{i}", {"i": i, "even": i % 2 == 0})
    ops: list[Any] = [
        GetOp((*NS, "n0"), "k0"), GetOp((*NS, "n1"), "k1"), GetOp((*NS, "n1"), "gone"),
        SearchOp(NS, None, 2, 1), SearchOp(("test",), None, 10, 0),
        SearchOp(NS, {"even": True}, 10, 0),  # a value filter: read on its own
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", NS),), max_depth=None),
        ListNamespacesOp(match_conditions=None, max_depth=2),
        PutOp((*NS, "n0"), "k9", {"i": 9}),  # written after the reads: none of them sees it
    ]
    alone = [store.batch([op])[0] for op in ops[:-1]]
    pipelines: list[int] = []
    original = psycopg.Connection.pipeline
    monkeypatch.setattr(psycopg.Connection, "pipeline",
                        lambda self, *a, **k: (pipelines.append(1), original(self, *a, **k))[1])
    grouped = store._batch_alone(ops, grouped=True)
    monkeypatch.undo()
    assert _answers(grouped[:-1]) == _answers(alone)
    assert [r.key for r in grouped[5]] == ["k4", "k2", "k0"]
    assert pipelines == ([1] if backend == "postgres" else [])
    assert store.get((*NS, "n0"), "k9") is not None


@pytest.mark.parametrize("backend", ["postgres"])
def test_a_failing_pipelined_read_is_sqlalchemys_error_and_the_store_goes_on(
        open_store: Callable[..., BaseStore], monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlalchemy as sa  # noqa: PLC0415

    from hy_memory_langgraph.store.db import direct  # noqa: PLC0415

    store = open_store(index=None)
    assert isinstance(store, HyMemoryStore)
    store.put(NS, "k", {"v": 1})
    with store._engine.connect() as conn:
        requests = [(sa.select(sa.literal_column("1")), {}), (sa.select(sa.literal_column("1/0")), {})]
        with pytest.raises(sa.exc.DataError, match="division by zero"):
            direct.fetch_many(conn, requests)
    assert store.batch([GetOp(NS, "k"), ListNamespacesOp(match_conditions=None)])[0].value == {"v": 1}
