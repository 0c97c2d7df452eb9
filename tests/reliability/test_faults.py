"""Every fault raises one of our errors naming the file or field and the fix; one damaged
row never takes down a user's other memories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.testing import HashingEmbeddings


def _client(data_dir: Path, **kwargs: Any) -> HyMemoryClient:
    return HyMemoryClient(mode="lite", data_dir=data_dir, embeddings=HashingEmbeddings(dims=32), **kwargs)


def _damage(db: Path, namespace_like: str, key: str, value: str) -> None:
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        done = conn.execute(sa.text("UPDATE hy_store_items SET value = :v WHERE namespace LIKE :ns AND key = :k"),
                            {"v": value, "ns": namespace_like, "k": key})
        assert done.rowcount == 1
    engine.dispose()


@pytest.mark.parametrize("damage", ["{not json", "[1, 2, 3]", json.dumps({"memory_id": "x", "kind": "chat"}),
                                    json.dumps({"memory_id": "x", "user_id": "alice", "memory_at": "2024",
                                                "memory_ts": "soon", "content": 42})])
def test_a_damaged_memory_row_is_skipped_and_the_rest_still_works(tmp_path: Path, damage: str,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    with _client(tmp_path / "d") as client:
        bad = client.add("I adopted a grey cat called Miso", user_id="alice", session_id="s1")["memory_ids"][0]
        good = client.add("I run marathons in autumn", user_id="alice", session_id="s2")["memory_ids"][0]
    _damage(tmp_path / "d" / "data" / "chat_memory.db", "chat.alice", bad, damage)
    with _client(tmp_path / "d") as client:
        found = client.search("cat marathons autumn", user_ids=["alice"], min_score=-10)
        assert [m["memory_id"] for m in found["memories"]] == [good]
        assert client.get(bad) is None and client.get(good)["content"] == "I run marathons in autumn"
        assert client.add("My sister lives in Lyon", user_id="alice", session_id="s1")["success"] is True
        assert len(client.list_memories("alice")["memories"]) == 2
        assert client.delete_all("alice") >= 2
    assert any("skipped" in r.getMessage() for r in caplog.records)


def test_a_damaged_trace_row_never_fails_an_add(tmp_path: Path) -> None:
    with _client(tmp_path / "d") as client:
        client.add("I adopted a grey cat called Miso", user_id="alice", session_id="s1")
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'd' / 'data' / 'chat_memory.db'}")
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE hy_store_items SET value = '{broken' WHERE namespace LIKE 'trace%'"))
    engine.dispose()
    with _client(tmp_path / "d") as client:
        assert client.add("Her favourite toy is a red ball", user_id="alice", session_id="s1")["success"] is True
        assert client.search("red ball", user_ids=["alice"])["memories"]


@pytest.mark.parametrize("text", ["a \ud800", "\udfff tail", "mid\ud83d text"])
def test_a_lone_surrogate_is_an_input_error_everywhere(tmp_path: Path, text: str) -> None:
    with _client(tmp_path / "d") as client:
        memory_id = client.add("I like tea", user_id="alice")["memory_ids"][0]
        for call in (lambda: client.update(memory_id, text),
                     lambda: client.update(memory_id, "fine", metadata={"note": text}),
                     lambda: client.add(text, user_id="alice"),
                     lambda: client.add("fine", user_id="alice", metadata={text: 1}),
                     lambda: client.search(text, user_ids=["alice"]),
                     lambda: client.add("fine", user_id=text)):
            with pytest.raises(InvalidInputError, match="surrogate"):
                call()
        assert client.get(memory_id)["content"] == "I like tea"
