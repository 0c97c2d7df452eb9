"""``hy-memory worker``: forms the memories of queued background writes, then reports."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from openai_stub import OpenAIStub, StageResponder
from tests.background.support import chat_replies, fact


def test_the_worker_drains_the_queue_with_the_configured_model(
        run_json: Callable[..., tuple[int, dict[str, Any]]], data_dir: Path, openai_stub: OpenAIStub,
        monkeypatch: pytest.MonkeyPatch) -> None:
    responder = StageResponder(chat_replies([fact("The user moved to Lyon")]))
    openai_stub.responder = responder
    for name, value in openai_stub.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MEMORY_BACKGROUND_DELAY_S", "3600")  # the client's own worker never takes it
    client = HyMemoryClient(data_dir=data_dir)
    assert client.mode == "pro"
    client.add("I moved to Lyon", user_id="ann", background=True)
    client.close()
    assert responder.stages == []
    code, out = run_json("worker", "--drain", "--data-dir", str(data_dir))
    assert code == 0 and out["data"]["background"] == {"queued": 0, "running": 0, "failed": 0, "cancelled": 0}
    assert responder.stages == ["chat_extract"]
    client = HyMemoryClient(data_dir=data_dir)
    assert [m["content"] for m in client.list_memories("ann")["memories"]] == ["The user moved to Lyon"]
    client.close()


def test_the_worker_refuses_to_run_without_a_model(run_json: Callable[..., tuple[int, dict[str, Any]]],
                                                  data_dir: Path) -> None:
    code, out = run_json("worker", "--drain", "--data-dir", str(data_dir))
    assert code == 2 and out["error"]["code"] == "CONFIG_ERROR"
    assert "needs a chat model" in out["error"]["message"] and "OPENAI_API_KEY" in out["error"]["message"]
