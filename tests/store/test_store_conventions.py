"""LangGraph store conventions: from_conn_string, setup, :memory:, DSNs, async lifecycle,
index config names."""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from sqlalchemy.engine import make_url
from store_helpers import index_config

from hy_memory_langgraph.errors import ConfigError
from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.store.db.engine import store_url
from hy_memory_langgraph.testing import HashingEmbeddings


def test_memory_is_an_in_memory_database_not_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with HyMemoryStore.from_conn_string(":memory:") as store:
        store.setup()
        store.put(("a",), "k", {"v": 1})
        assert store.get(("a",), "k").value == {"v": 1}
    with HyMemoryStore(":memory:") as fresh:
        assert fresh.get(("a",), "k") is None  # each one is its own database
    assert os.listdir(tmp_path) == []


def test_from_conn_string_opens_a_file_that_setup_leaves_intact(tmp_path: Path) -> None:
    path = tmp_path / "langgraph.db"
    with HyMemoryStore.from_conn_string(str(path), index=index_config(["text"])) as store:
        store.put(("docs",), "d1", {"text": "green tea"})
        store.setup()
        store.setup()
    assert store.closed
    with HyMemoryStore.from_conn_string(str(path), index=index_config(["text"])) as again:
        assert [i.key for i in again.search(("docs",), query="tea")] == ["d1"]


async def test_async_with_and_asetup_and_aclose() -> None:
    async with HyMemoryStore.from_conn_string(":memory:") as store:
        await store.asetup()
        await store.aput(("a",), "k", {"v": 2})
        assert (await store.aget(("a",), "k")).value == {"v": 2}
    assert store.closed
    other = HyMemoryStore(":memory:")
    await other.aclose()
    assert other.closed


@pytest.mark.parametrize(("given", "expected"), [
    ("postgres://me:pw@db.example:5433/mem", "postgresql+psycopg://me:pw@db.example:5433/mem"),
    ("host=db.example port=5433 dbname=mem user=me password=pw sslmode=require",
     "postgresql+psycopg://me:pw@db.example:5433/mem?sslmode=require"),
    ("dbname=mem host=/var/run/postgresql", "postgresql+psycopg:///mem?host=%2Fvar%2Frun%2Fpostgresql"),
])
def test_postgres_urls_and_libpq_dsns_name_postgresql(given: str, expected: str) -> None:
    assert store_url(given) == make_url(expected)


def test_a_dsn_opens_the_postgresql_server(pg_url: str) -> None:
    url = make_url(pg_url)
    dsn = f"host={url.host} port={url.port} dbname={url.database} user={url.username}"
    with HyMemoryStore.from_conn_string(dsn, schema="from_dsn") as store:
        store.put(("a",), "k", {"v": 3})
        assert store.url.startswith("postgresql+psycopg://")
    with HyMemoryStore(pg_url.replace("postgresql+psycopg://", "postgres://"), schema="from_dsn") as again:
        assert again.get(("a",), "k").value == {"v": 3}


def test_a_bad_dsn_is_named() -> None:
    with pytest.raises(ConfigError, match="libpq connection string"):
        store_url("host=a port=5432 dbname='unterminated")


def test_text_fields_is_an_alias_of_fields() -> None:
    index = {"dims": 16, "embed": HashingEmbeddings(16), "text_fields": ["text"]}
    with HyMemoryStore(":memory:", index=index) as store:  # type: ignore[arg-type]
        store.put(("a",), "k", {"text": "tea", "other": "coffee"})
        assert store.index_config["fields"] == ["text"]
        assert store.search(("a",), query="tea")[0].key == "k"
    with pytest.raises(ConfigError, match="text_fields"):
        HyMemoryStore(":memory:", index={**index, "fields": ["other"]})  # type: ignore[arg-type]


class _TableEmbeddings(Embeddings):
    """Fixed, deliberately unnormalised vectors: the three metrics rank them differently."""

    VECTORS: ClassVar[dict[str, list[float]]] = {
        "near": [1.0, 0.1], "long": [10.0, 9.0], "tilted": [0.6, 0.8], "q": [1.0, 0.0]}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.VECTORS[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.VECTORS[text]


def _expected(metric: str, doc: list[float], query: list[float]) -> float:
    d, q = np.asarray(doc), np.asarray(query)
    if metric == "cosine":
        return float(d @ q / (np.linalg.norm(d) * np.linalg.norm(q)))
    if metric == "inner_product":
        return float(d @ q)
    return -float(np.linalg.norm(d - q))


@pytest.mark.parametrize("metric", ["cosine", "inner_product", "l2"])
@pytest.mark.parametrize("candidates", [None, ["near", "long"]], ids=["scan", "filtered"])
def test_distance_types_rank_and_score_as_langgraph_stores(metric: str, candidates: list[str] | None) -> None:
    index = {"dims": 2, "embed": _TableEmbeddings(), "fields": ["t"], "distance_type": metric}
    with HyMemoryStore(":memory:", index=index) as store:  # type: ignore[arg-type]
        for text in ("near", "long", "tilted"):
            store.put(("d",), text, {"t": text, "pick": text in (candidates or [text])})
        hits = store.search(("d",), query="q", filter={"pick": True})
        docs = [t for t in ("near", "long", "tilted") if t in (candidates or ["near", "long", "tilted"])]
        want = sorted(((_expected(metric, _TableEmbeddings.VECTORS[t], [1.0, 0.0]), t) for t in docs),
                      reverse=True)
        assert [h.key for h in hits] == [t for _, t in want]
        assert [h.score for h in hits] == pytest.approx([s for s, _ in want], abs=1e-5)
        assert store.index_config["distance_type"] == metric


def test_an_unknown_distance_type_is_refused_with_the_choices() -> None:
    index = {"dims": 16, "embed": HashingEmbeddings(16), "distance_type": "hamming"}
    with pytest.raises(ConfigError, match="distance_type.*'cosine'.*'inner_product'.*'l2'"):
        HyMemoryStore(":memory:", index=index)  # type: ignore[arg-type]
