"""The one-node lite chat graph: taken exactly where the write graph could only lead to
lite chat, and storing what the write graph stores."""

from __future__ import annotations

import os
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler

from hy_memory_langgraph.flows.write.lite import runs_lite_chat
from hy_memory_langgraph.testing import ScriptedChatModel
from tests.productivity.support import tool_trace

_TURNS = [
    [{"role": "user", "content": "ok"}, {"role": "user", "content": "I adopted a grey cat called Miso."}],
    [{"role": "assistant", "content": "What a lovely name! How old is Miso?"}],
    [{"role": "user", "content": "Two years. She sleeps on my keyboard."}],
    [{"role": "user", "content": "I adopted a grey cat called Miso."}],  # a duplicate
    tool_trace("Please look up the vet's opening hours.", answer="They open at nine."),
]


class _Nodes(BaseCallbackHandler):
    def __init__(self) -> None:
        self.names: list[str] = []

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.names.append(str(kwargs.get("name")))


def _stored(client: Any) -> list[tuple[Any, ...]]:
    fields = ("content", "owner", "context", "carried", "question", "session_id", "status")
    rows = client.list_memories("u1", limit=100)["memories"]
    return sorted(tuple(m.get(f) for f in fields) for m in rows)


def _write_all(client: Any) -> list[dict[str, Any]]:
    out = []
    for n, msgs in enumerate(_TURNS):
        result = client.add(msgs, scene=None if n % 2 else "chat", user_id="u1", session_id="s1",
                            memory_at="2024-05-01T09:00:00Z")
        out.append({k: v for k, v in result.items() if k not in ("request_id", "elapsed_ms", "memory_ids")}
                   | {"ops": [{k: v for k, v in op.items() if k != "memory_id"} for op in result["ops"]]})
    return out


def test_lite_chat_writes_take_one_node(make_client: Any) -> None:
    client = make_client("lite")
    seen = _Nodes()
    plain = client.add("I like green tea", user_id="u1", config={"callbacks": [seen]})
    assert "lite_chat" in seen.names and "prepare" not in seen.names
    assert [r["stage"] for r in client.pipeline_log(plain["request_id"])] == ["normalise", "store"]
    traced = client.add(tool_trace(), user_id="u1")
    assert [r["stage"] for r in client.pipeline_log(traced["request_id"])] == [
        "normalise", "strip_tools", "store"]


def test_the_lite_chat_graph_stores_what_the_write_graph_stores(make_client: Any) -> None:
    one_node, routed = make_client("lite"), make_client("lite")
    routed.lite_chat_graph = routed.write_graph  # every write through the routing graph
    assert _write_all(one_node) == _write_all(routed)
    assert _stored(one_node) == _stored(routed)
    assert len(_stored(one_node)) == 5  # the trivial "ok" and the duplicate are skipped


@pytest.mark.parametrize("mode, scene, expected", [
    ("lite", None, True), ("lite", "chat", True), ("lite", "coding", False), ("lite", "working", False),
    ("pro", None, False), ("pro", "chat", False)])
def test_only_writes_that_end_in_lite_chat_skip_the_routing(make_client: Any, mode: str, scene: str | None,
                                                             expected: bool) -> None:
    client = make_client(mode, ScriptedChatModel.from_script([]) if mode == "pro" else None)
    assert runs_lite_chat(client.context, scene) is expected


def test_a_lite_productivity_write_still_takes_its_pipeline(make_client: Any) -> None:
    client = make_client("lite")
    seen = _Nodes()
    result = client.add(tool_trace(), scene="coding", user_id="u1", config={"callbacks": [seen]})
    assert result["scene"] == "productivity"
    assert {"prepare", "productivity"} <= set(seen.names) and "lite_chat" not in seen.names


def test_a_lite_add_looks_up_no_cpu_count(make_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's thread pool has a worker limit (one task per step), so it does not ask the
    system for the CPU count on every add (a few system calls each)."""
    client = make_client("lite")
    client.add("I like green tea", user_id="u1", session_id="s1")
    calls: list[int] = []
    real = os.cpu_count
    monkeypatch.setattr(os, "cpu_count", lambda: calls.append(1) or real())
    for n in range(3):
        client.add(f"I planted {n + 2} apple trees this spring.", user_id="u1", session_id="s1")
    assert calls == []
    assert len(client.list_memories("u1", limit=10)["memories"]) == 4
