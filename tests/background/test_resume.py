"""Resume, never repeat: a worker process killed (``SIGKILL``) before or right after any
node of a background run, chat or coding, leaves a run that the next worker finishes from
its checkpoint: no extraction or reconcile call made twice unless the kill came right
after that very call (before its end was saved), no memory or history event twice, and
nothing of the run left behind (queue rows, checkpoints, journal entries).

Each worker is a forked process (``tests/background/support.py``) that kills itself at
the chosen point and writes which point first: the test waits for the process, never on
time. Models are the real ``ChatOpenAI`` client on the loopback stub."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.services.journal import JOURNAL
from openai_stub import OpenAIStub, StageResponder
from tests.background.support import chat_model, fact, run_worker
from tests.productivity.support import WS, edit_trace, experience, extraction

CHAT_NODES = ["route", "extract_facts", "gather_candidates", "reconcile", "apply_decisions", "finish_chat"]
CODING_NODES = ["route", "prepare", "extract", "gather_experience_candidates", "reconcile_experiences",
                "apply_experiences", "gather_fact_candidates", "reconcile_fact", "summarize_progress",
                "insert_fact", "record_chain", "finish"]


def _client(make_client: Callable[..., HyMemoryClient], stub: OpenAIStub, data_dir: Path) -> HyMemoryClient:
    return make_client("pro", chat_model(stub.base_url), data_dir=data_dir, background_delay_s=3600.0)


def _kill_then_resume(make_client: Callable[..., HyMemoryClient], stub: OpenAIStub, data_dir: Path,
                      node: str, when: str) -> HyMemoryClient:
    """Run the queued write in a worker that dies at ``node`` / ``when``, then resume it
    with a new client; returns that client (its queue drained)."""
    probe = _client(make_client, stub, data_dir)
    settings = {"data_dir": str(data_dir), "db_url": probe.config.db_url, "prefix": probe.config.db_schema_prefix,
                "base_url": stub.base_url, "kill": (node, when), "event": str(data_dir.parent / "killed"),
                "env": {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}}
    probe.close()
    assert run_worker(settings) == -9
    assert (data_dir.parent / "killed").read_text() == f"{node}:{when}"
    resumed = _client(make_client, stub, data_dir)
    assert [p["state"] for p in resumed.pending()] == ["running"]  # its worker is dead: taken again
    assert resumed.flush() == {"outstanding": 0, "failed": 0}
    return resumed


def _nothing_left(client: HyMemoryClient, user: str) -> None:
    assert client.pending() == [] and client.background.queue.jobs() == []
    assert list(client.background.checkpoints.saver.list(None)) == []
    stores = [client.context.stores.chat(), client.context.stores.trace(),
              *(client.context.stores.productivity(s) for s in ("working", "coding"))]
    assert all(store.search((JOURNAL, user), limit=10) == [] for store in stores)


def _ops(client: HyMemoryClient, memory_id: str) -> list[str]:
    return [e["op"] for e in client.history(memory_id)]


def _alternating(points: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """Each kill point once, on SQLite and PostgreSQL in turn: every boundary is tested, and
    both checkpointers across them (the resume logic is the graph's, the same on both)."""
    return [(node, when, ("sqlite", "postgres")[(i + i // 2) % 2]) for i, (node, when) in enumerate(points)]


@pytest.mark.parametrize(("node", "when", "backend"),
                         _alternating([(node, when) for node in CHAT_NODES for when in ("before", "after")]))
def test_a_chat_run_killed_at_a_node_boundary_resumes_without_repeating(
        node: str, when: str, make_client: Callable[..., HyMemoryClient], openai_stub: OpenAIStub,
        tmp_path: Path) -> None:
    def extract(body: dict[str, Any]) -> dict[str, Any]:
        if "I moved to Lyon" in json.dumps(body):
            return {"facts": [fact("The user lives in Lyon"), fact("The user has a dog called Rex", "Rex")]}
        return {"facts": [fact("The user lives in Paris")]}

    responder = StageResponder({"chat_extract": extract, "chat_reconcile": {"operations": [
        {"fact": "n0", "op": "UPDATE", "target": "c0", "content": "The user lives in Lyon"},
        {"fact": "n1", "op": "ADD"}]}})
    openai_stub.responder = responder
    data_dir = tmp_path / "d"
    first = _client(make_client, openai_stub, data_dir)
    first.add("I live in Paris", user_id="ann", session_id="s1")  # synchronous: the candidate
    [paris] = first.list_memories("ann")["memories"]
    first.add("I moved to Lyon, and I got a dog called Rex", user_id="ann", session_id="s1", background=True)
    first.close()
    before = {stage: responder.count(stage) for stage in ("chat_extract", "chat_reconcile")}

    client = _kill_then_resume(make_client, openai_stub, data_dir, node, when)
    extracts = responder.count("chat_extract") - before["chat_extract"]
    reconciles = responder.count("chat_reconcile") - before["chat_reconcile"]
    assert extracts == (2 if (node, when) == ("extract_facts", "after") else 1)
    assert reconciles == (2 if (node, when) == ("reconcile", "after") else 1)
    memories = client.list_memories("ann")["memories"]
    assert sorted(m["content"] for m in memories) == ["The user has a dog called Rex", "The user lives in Lyon"]
    assert _ops(client, paris["memory_id"]) == ["ADD", "UPDATE"]
    rex = next(m for m in memories if "Rex" in m["content"])
    assert _ops(client, rex["memory_id"]) == ["ADD"]
    window = client.context.chat_traces.recent_messages("ann", "s1", turns=5)
    assert [m.content for m in window if m.role == "user"] == [
        "I live in Paris", "I moved to Lyon, and I got a dog called Rex"]  # the trace appended once
    _nothing_left(client, "ann")


def _coding_responder() -> StageResponder:
    task = "Raise the search client timeout"
    merged = experience(task, solution="Set t = 30 in SearchClient.fetch, then rerun the search tests")
    return StageResponder({
        "productivity_extract_coding": lambda body: extraction(
            subject="src/search.py:SearchClient.fetch",
            statement="raised the timeout to 30" if "30" in json.dumps(body) else "set the timeout to 20",
            experiences=[experience(task, solution="Set t in SearchClient.fetch")]),
        "experience_reconcile": {"operations": [{"draft": "d0", "op": "UPDATE", "target": "e_0",
                                                 "merged": merged}]},
        "fact_reconcile": {"supersede": ["f_0"]},
        "progress_summary": {"summary": "Timeout raised from 20 to 30 over two sessions."},
    })


@pytest.mark.parametrize(("node", "when", "backend"),
                         _alternating([(node, "after") for node in CODING_NODES]
                                      + [("extract", "before"), ("reconcile_fact", "before")]))
def test_a_coding_run_killed_at_a_node_boundary_resumes_without_repeating(
        node: str, when: str, make_client: Callable[..., HyMemoryClient], openai_stub: OpenAIStub,
        tmp_path: Path) -> None:
    responder = _coding_responder()
    openai_stub.responder = responder
    data_dir = tmp_path / "d"
    first = _client(make_client, openai_stub, data_dir)
    first.add(edit_trace("Set the search timeout to 20", "        t = 10", "        t = 20"), scene="coding",
              user_id="ann", workspace_id=WS, session_id="s1", memory_at="2024-05-01T09:00:00Z")
    [old_fact] = first.list_memories("ann", scene="coding")["memories"][:1] or [None]
    first.add(edit_trace("Raise the search timeout to 30", "        t = 20", "        t = 30", call_id="c2"),
              scene="coding", user_id="ann", workspace_id=WS, session_id="s1", memory_at="2024-05-02T09:00:00Z",
              background=True)
    first.close()
    stages = ("productivity_extract_coding", "experience_reconcile", "fact_reconcile", "progress_summary")
    before = {stage: responder.count(stage) for stage in stages}

    client = _kill_then_resume(make_client, openai_stub, data_dir, node, when)
    calls = {stage: responder.count(stage) - before[stage] for stage in stages}
    repeated = {"extract": "productivity_extract_coding", "reconcile_experiences": "experience_reconcile",
                "reconcile_fact": "fact_reconcile", "summarize_progress": "progress_summary"}
    assert calls == {stage: 2 if when == "after" and repeated.get(node) == stage else 1 for stage in stages}
    coding = client.list_memories("ann", scene="coding")["memories"]
    facts = [m for m in coding if m["kind"] == "fact"]
    experiences = [m for m in coding if m["kind"] == "experience"]
    assert [f["statement"] for f in facts] == ["raised the timeout to 30"]  # the old one superseded, once
    assert facts[0]["summary"] == "Timeout raised from 20 to 30 over two sessions."
    assert len(experiences) == 1 and experiences[0]["version"] == 2  # updated once, not twice
    assert _ops(client, facts[0]["memory_id"]).count("SUPERSEDE") == 1
    assert old_fact is not None and _ops(client, facts[0]["memory_id"]).count("SUPERSEDED") == 1
    chain = client.context.chain_store.threads_for(f"ann|{WS}", None, files=["src/search.py"])
    assert [[r.number for r in t.rounds] for t in chain] == [[1, 2]]  # the chain recorded once
    _nothing_left(client, "ann")
