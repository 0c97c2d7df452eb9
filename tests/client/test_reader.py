"""MemoryReader: what a client wrote, read with no model (stores opened without their
vector indexes, nothing embedded), on SQLite files and on PostgreSQL."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings

from hy_memory_langgraph.client import HyMemoryClient, MemoryReader
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import StoreError
from hy_memory_langgraph.testing import HashingEmbeddings


class _NeverCalled(Embeddings):
    """A model a reader may name but must never call."""

    model = "never-called"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise AssertionError("a reader embedded documents")

    def embed_query(self, text: str) -> list[float]:
        raise AssertionError("a reader embedded a query")


@pytest.fixture(params=["sqlite", "postgres"])
def config(request: pytest.FixtureRequest, tmp_path: Path) -> MemoryConfig:
    config = MemoryConfig.from_env({}, data_dir=tmp_path / "memory")
    if request.param == "postgres":
        schemas = request.getfixturevalue("pg_schemas")
        config = dataclasses.replace(config, db_url=schemas.url, db_schema_prefix=schemas.prefix())
    return config


def _without_time(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in ("exported_at", "embedding_model")} for r in rows]


def test_a_reader_reads_what_the_client_wrote(config: MemoryConfig) -> None:
    with HyMemoryClient(mode="lite", config=config, embeddings=HashingEmbeddings(64)) as client:
        cat = client.add("I adopted a grey cat called Miso", user_id="u1", session_id="s1")
        work = client.add("I work as a nurse in Porto", user_id="u1", session_id="s2")["memory_ids"][0]
        client.update(work, "I work as a doctor in Porto")
        client.add("Bob likes jazz", user_id="u2")
        expected = {"list": client.list_memories("u1"), "get": client.get(work), "history": client.history(work),
                    "log": client.pipeline_log(cat["request_id"]), "export": list(client.export_memories()),
                    "stats": client.stats()}
    with MemoryReader(config=config, embeddings=_NeverCalled()) as reader:
        assert reader.list_memories("u1") == expected["list"]
        assert reader.get(work) == expected["get"] and reader.get(work, user_id="u2") is None
        assert reader.history(work) == expected["history"] and reader.history(work, user_id="u2") == []
        assert reader.pipeline_log(cat["request_id"]) == expected["log"]
        rows = list(reader.export_memories())
        assert _without_time(rows) == _without_time(expected["export"])
        assert rows[0]["embedding_model"].endswith("_NeverCalled:model=never-called")
        stats = reader.stats()
        assert "mode" not in stats and expected["stats"]["mode"] == "lite"
        assert {k: stats[k] for k in ("scenes", "users", "history_events")} == \
            {k: expected["stats"][k] for k in ("scenes", "users", "history_events")}
        assert reader.context.stores.chat().index_config is None  # no vector index opened
        with pytest.raises(StoreError, match="without an embedding model"):
            reader.context.stores.calibration()
    with HyMemoryClient(mode="lite", config=config, embeddings=HashingEmbeddings(64)) as client:
        found = client.search("what is my cat called", user_ids=["u1"])["memories"]
        assert found[0]["content"] == "I adopted a grey cat called Miso"  # the vectors are as they were


async def test_the_reader_has_async_twins(tmp_path: Path) -> None:
    config = MemoryConfig.from_env({}, data_dir=tmp_path / "memory")
    with HyMemoryClient(mode="lite", config=config, embeddings=HashingEmbeddings(64)) as client:
        memory_id = client.add("I live in Porto", user_id="u1")["memory_ids"][0]
    async with MemoryReader(config=config) as reader:
        assert (await reader.aget(memory_id))["content"] == "I live in Porto"
        assert [m["memory_id"] for m in (await reader.alist_memories("u1"))["memories"]] == [memory_id]
        assert (await reader.astats())["users"] == 1
        assert sum(r["type"] == "memory" for r in await reader.aexport_memories()) == 1
