"""HyMemoryStore-specific behaviour: timestamps, ordering, exact search, validation."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from langgraph.store.base import GetOp, PutOp, SearchOp
from store_helpers import index_config, keys

from hy_memory_langgraph.errors import ConfigError, InvalidInputError, StoreError
from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.store.vector import index as vectors

Factory = Callable[..., HyMemoryStore]


def test_created_at_preserved_on_overwrite(hy_factory: Factory) -> None:
    store = hy_factory()
    store.put(("c",), "k", {"text": "v1"})
    first = store.get(("c",), "k")
    time.sleep(0.002)
    store.put(("c",), "k", {"text": "v2"})
    second = store.get(("c",), "k")
    assert second.value == {"text": "v2"}
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at
    store.delete(("c",), "k")
    store.put(("c",), "k", {"text": "v3"})
    assert store.get(("c",), "k").created_at > first.created_at  # a delete starts over


def test_no_query_search_is_newest_first(hy_factory: Factory) -> None:
    store = hy_factory()
    for key in ["a", "b", "c", "d"]:
        store.put(("o",), key, {"text": key})
        time.sleep(0.002)
    store.put(("o",), "b", {"text": "b2"})
    assert keys(store.search(("o",))) == ["b", "d", "c", "a"]
    assert keys(store.search(("o",), limit=2, offset=1)) == ["d", "c"]


def test_scoreless_items_follow_scored_with_offset(hy_factory: Factory) -> None:
    store = hy_factory()
    store.put(("s",), "scored1", {"text": "alpha beta"})
    store.put(("s",), "scored2", {"text": "gamma delta"})
    for key in ["n1", "n2", "n3"]:
        store.put(("s",), key, {"other": key})
        time.sleep(0.002)
    full = store.search(("s",), query="alpha beta", limit=10)
    assert keys(full)[:2] == ["scored1", "scored2"] and keys(full)[2:] == ["n3", "n2", "n1"]
    for offset in range(6):
        for limit in range(1, 4):
            page = store.search(("s",), query="alpha beta", limit=limit, offset=offset)
            assert keys(page) == keys(full)[offset : offset + limit]


def _precomputed_store(
    hy_factory: Factory, n_big: int, dims: int = 16
) -> tuple[HyMemoryStore, dict[str, np.ndarray]]:
    rng = np.random.default_rng(7)
    table: dict[str, np.ndarray] = {}

    def embed(texts: list[str]) -> list[list[float]]:
        return [table[t].tolist() for t in texts]

    store = hy_factory("exact.db", index={"dims": dims, "embed": embed, "fields": ["t"]})
    ops = []
    for i in range(n_big):
        text = f"big-{i}"
        table[text] = rng.normal(size=dims).astype(np.float32)
        ops.append(PutOp(("big", f"g{i % 10}"), f"b{i}", {"t": text, "rare": i % 100 == 0}))
    for i in range(6):
        text = f"tiny-{i}"
        table[text] = rng.normal(size=dims).astype(np.float32)
        ops.append(PutOp(("tiny",), f"t{i}", {"t": text}))
    store.batch(ops)
    return store, table


def _exact(table: dict[str, np.ndarray], texts: list[str], query: np.ndarray, k: int) -> list[str]:
    mat = np.stack([table[t] for t in texts])
    scores = (mat / np.linalg.norm(mat, axis=1, keepdims=True)) @ (query / np.linalg.norm(query))
    return [texts[i] for i in np.argsort(-scores)[:k]]


@pytest.mark.parametrize("brute_force_max", [vectors.BRUTE_FORCE_MAX, 0])
def test_filtered_search_is_exact_top_k(
    hy_factory: Factory, monkeypatch: pytest.MonkeyPatch, brute_force_max: int
) -> None:
    monkeypatch.setattr(vectors, "BRUTE_FORCE_MAX", brute_force_max)  # 0: FAISS selector path
    store, table = _precomputed_store(hy_factory, n_big=3000)
    rng = np.random.default_rng(1)
    for _ in range(3):
        query = rng.normal(size=16).astype(np.float32)
        table["q"] = query
        tiny = store.search(("tiny",), query="q", limit=3)
        assert [r.value["t"] for r in tiny] == _exact(table, [f"tiny-{i}" for i in range(6)], query, 3)
        rare = store.search(("big",), query="q", filter={"rare": True}, limit=5)
        rare_texts = [f"big-{i}" for i in range(0, 3000, 100)]
        assert [r.value["t"] for r in rare] == _exact(table, rare_texts, query, 5)
        ns = store.search(("big", "g3"), query="q", limit=4, offset=2)
        ns_texts = [f"big-{i}" for i in range(3, 3000, 10)]
        assert [r.value["t"] for r in ns] == _exact(table, ns_texts, query, 6)[2:]
        everything = store.search((), query="q", limit=10)
        all_texts = [f"big-{i}" for i in range(3000)] + [f"tiny-{i}" for i in range(6)]
        assert [r.value["t"] for r in everything] == _exact(table, all_texts, query, 10)


def test_multi_vector_items_max_pool(hy_factory: Factory) -> None:
    store = hy_factory()
    store.put(("m",), "multi", {"keys": ["zebra stripes", "quantum entanglement"]}, index=["keys[*]"])
    store.put(("m",), "single", {"text": "quantum entanglement basics"})
    hits = store.search(("m",), query="zebra stripes", limit=2)
    assert keys(hits)[0] == "multi" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert keys(store.search(("m",), query="quantum entanglement", limit=1)) == ["multi"]


def test_input_validation(hy_factory: Factory) -> None:
    store = hy_factory()
    with pytest.raises(InvalidInputError):
        store.put(("v",), "k", {"bad": object()})
    with pytest.raises(InvalidInputError, match="field 'a.b' holds a value of type set"):
        store.put(("v",), "k", {"a": {"b": {1, 2}}})
    with pytest.raises(InvalidInputError):
        store.search(("v",), limit=-1)
    with pytest.raises(InvalidInputError):
        store.batch([("not", "an", "op")])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError):
        store.batch([PutOp(("v",), "k", ["not", "a", "mapping"])])  # type: ignore[arg-type]
    # a failing op leaves the whole batch unapplied
    with pytest.raises(ValueError):
        store.batch([PutOp(("v",), "ok", {"x": 1}), SearchOp(("v",), filter={"$bad": 1})])
    assert store.get(("v",), "ok") is None


def test_postgres_sql_compiles() -> None:
    """The generic SQL must stay portable: every table and hot statement compiles for PostgreSQL."""
    from sqlalchemy.dialects import postgresql
    from sqlalchemy.schema import CreateIndex, CreateTable

    from hy_memory_langgraph.store.schema.tables import metadata
    from hy_memory_langgraph.store.sql import statements as sql

    dialect = postgresql.dialect()
    for table in metadata.sorted_tables:
        assert "CREATE TABLE" in str(CreateTable(table).compile(dialect=dialect))
        for index in table.indexes:
            str(CreateIndex(index).compile(dialect=dialect))
    assert 'COLLATE "C"' in str(CreateTable(sql.items).compile(dialect=dialect))
    for stmt in (sql._UPSERT["postgresql"], sql._BY_IDS, sql._BY_NS_KEYS, sql._COUNT_UNDER, sql._APPEND):
        compiled = str(stmt.compile(dialect=dialect))
        assert "%(" in compiled or "IN (__[POSTCOMPILE" in compiled
    scan = sa.select(sql.items.c.id).where(sql._LIVE, sql._UNDER_SCAN)
    assert "substr" in str(scan.compile(dialect=dialect))


def test_keys_must_be_strings(hy_factory: Factory) -> None:
    store = hy_factory()
    with pytest.raises(InvalidInputError):
        store.batch([PutOp(("k",), 1, {"x": 1})])  # type: ignore[arg-type]


def test_config_validation(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        bad_dims = {"dims": 0, "embed": lambda t: []}
        HyMemoryStore(tmp_path / "a.db", index=bad_dims)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        HyMemoryStore(tmp_path / "b.db", index={"dims": 4})  # type: ignore[typeddict-item]

    def wrong_size(texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]

    with HyMemoryStore(tmp_path / "c.db", index={"dims": 4, "embed": wrong_size}) as store:
        with pytest.raises(ConfigError):
            store.put(("x",), "k", {"text": "hi"})

    def too_few(texts: list[str]) -> list[list[float]]:
        return []

    with HyMemoryStore(tmp_path / "d.db", index={"dims": 4, "embed": too_few}) as store:
        with pytest.raises(StoreError):
            store.put(("x",), "k", {"text": "hi"})


def test_batch_get_many_and_url(hy_factory: Factory) -> None:
    store = hy_factory()
    store.batch([PutOp(("g", str(i % 3)), f"k{i}", {"i": i}) for i in range(50)])
    got = store.batch([GetOp(("g", str(i % 3)), f"k{i}") for i in range(60)])
    assert [g.value["i"] for g in got[:50]] == list(range(50))
    assert got[50:] == [None] * 10
    assert store.url.startswith("sqlite:///")


def test_no_index_store_has_no_faiss_file(tmp_path: Path) -> None:
    with HyMemoryStore(tmp_path / "kv.db") as store:
        store.put(("a",), "k", {"v": 1})
        assert store.index_cache is None
    assert not (tmp_path / "kv.db.faiss").exists()
    with HyMemoryStore(tmp_path / "kv.db", index=index_config(["text"])) as store:
        store.put(("a",), "j", {"text": "now indexed"})
        assert keys(store.search(("a",), query="now indexed")) == ["j", "k"]
