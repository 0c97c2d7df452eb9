"""``add(..., background=True)``: queued durably, found at once, formed by a worker, on
SQLite and PostgreSQL. Nothing here waits on time: ``flush()`` processes the queue and
returns when it is empty (the coalescing delay is an hour, so no worker takes a request
before the test says so)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.client.background import RETRY_ATTEMPTS
from hy_memory_langgraph.testing import ScriptedChatModel
from tests.background.support import chat_replies, fact
from tests.productivity.support import extraction, tool_trace

HOUR = 3600.0


def _model(replies: dict[str, Any]) -> ScriptedChatModel:
    return ScriptedChatModel.from_stages(replies)


def _pro(make_client: Callable[..., HyMemoryClient], model: Any, **options: Any) -> HyMemoryClient:
    options.setdefault("background_delay_s", HOUR)
    return make_client("pro", model, **options)


def _contents(client: HyMemoryClient, user: str) -> list[str]:
    return sorted(m["content"] for m in client.list_memories(user)["memories"])


def test_a_queued_write_returns_at_once_is_found_pending_and_formed_by_flush(
        make_client: Callable[..., HyMemoryClient]) -> None:
    model = _model(chat_replies([fact("The user moved to Lyon in May 2024")]))
    client = _pro(make_client, model)
    result = client.add("I moved to Lyon last month", user_id="ann", session_id="s1", background=True)
    assert set(result) == {"success", "status", "request_id"} and result["status"] == "queued"
    assert model.call_count == 0 and _contents(client, "ann") == []
    [waiting] = client.pending("ann")
    assert (waiting["request_id"], waiting["state"], waiting["session_id"]) == (result["request_id"], "queued", "s1")
    found = client.search("I moved to Lyon last month", user_ids=["ann"])["memories"]
    assert [(m["content"], m["pending"], m["status"]) for m in found] == [
        ("I moved to Lyon last month", True, "pending")]
    assert client.search("Lyon", user_ids=["bob"])["memories"] == []  # another user's queue is not theirs
    assert client.stats()["background"]["queued"] == 1

    assert client.flush() == {"outstanding": 0, "failed": 0}
    assert model.stages == ["chat_extract"]
    assert _contents(client, "ann") == ["The user moved to Lyon in May 2024"]
    found = client.search("Lyon", user_ids=["ann"])["memories"]
    assert [m["content"] for m in found] == ["The user moved to Lyon in May 2024"]
    assert "pending" not in found[0] and client.pending() == []
    assert client.stats()["background"] == {"queued": 0, "running": 0, "failed": 0, "cancelled": 0}


def test_lite_writes_at_once_whatever_background_says(make_client: Callable[..., HyMemoryClient]) -> None:
    client = make_client("lite")
    result = client.add("I moved to Lyon last month", user_id="ann", background=True)
    assert result["scene"] == "chat" and result["ops_summary"]["ADD"] == 1
    assert client.pending() == [] and _contents(client, "ann") == ["I moved to Lyon last month"]


def test_without_background_add_keeps_its_synchronous_result(make_client: Callable[..., HyMemoryClient]) -> None:
    client = _pro(make_client, _model(chat_replies([fact("The user likes green tea")])))
    result = client.add("I like green tea", user_id="ann")
    assert result["scene"] == "chat" and result["ops_summary"]["ADD"] == 1 and client.pending() == []


def test_queued_writes_survive_the_client_and_a_new_one_forms_them(
        make_client: Callable[..., HyMemoryClient], tmp_path: Path) -> None:
    model = _model(chat_replies([fact("The user's cat is called Miso")]))
    first = _pro(make_client, model, data_dir=tmp_path / "d")
    rid = first.add("My cat is called Miso", user_id="ann", background=True)["request_id"]
    first.close()
    second = _pro(make_client, model, data_dir=tmp_path / "d")
    assert [p["request_id"] for p in second.pending()] == [rid]
    assert second.search("cat Miso", user_ids=["ann"])["memories"][0]["pending"] is True
    assert second.flush()["outstanding"] == 0
    assert _contents(second, "ann") == ["The user's cat is called Miso"] and model.call_count == 1


def test_requests_of_a_session_are_extracted_together_in_arrival_order(
        make_client: Callable[..., HyMemoryClient]) -> None:
    model = _model(chat_replies([fact("The user plans a trip")]))
    client = _pro(make_client, model)
    a1 = client.add("I plan a trip to Japan", user_id="ann", session_id="a", background=True)
    a2 = client.add([{"role": "assistant", "content": "When do you leave?"},
                     {"role": "user", "content": "In April, with my sister Lena"}],
                    user_id="ann", session_id="a", background=True)
    b1 = client.add("I play the cello", user_id="ann", session_id="b", background=True)
    a3 = client.add("Book the hotel near Ueno", user_id="ann", session_id="a", metadata={"channel": "mail"},
                    background=True)  # other metadata: its own extraction, after the first two
    a4 = client.add("And a ryokan in Kyoto", user_id="ann", session_id="a", metadata={"channel": "mail"},
                    background=True)
    client.flush()
    prompts = [" ".join(str(m.content) for m in p) for p, stage in zip(model.prompts, model.stages)
               if stage == "chat_extract"]
    assert len(prompts) == 3  # a1 + a2 together, b1, a3 + a4 together
    first = next(p for p in prompts if "Japan" in p)
    assert "April, with my sister Lena" in first and "cello" not in first
    assert first.index("Japan") < first.index("When do you leave?") < first.index("April")
    last = next(p for p in prompts if "Ueno" in p)
    assert "ryokan in Kyoto" in last and prompts.index(first) < prompts.index(last)
    logs = {r["request_id"]: client.pipeline_log(r["request_id"]) for r in (a1, a2, b1, a3, a4)}
    queue = {rid: next(rec for rec in log if rec["stage"] == "queue") for rid, log in logs.items()}
    assert queue[a2["request_id"]]["decision"] == {"run": a1["request_id"], "coalesced": 2, "attempt": 1}
    assert queue[b1["request_id"]]["decision"]["coalesced"] == 1
    assert queue[a4["request_id"]]["decision"]["run"] == a3["request_id"]
    assert all(q["duration_ms"] >= 0 for q in queue.values())
    assert any(rec["stage"] == "extract" for rec in logs[a1["request_id"]])  # the run is logged under its head


def test_a_chat_turn_and_a_tool_trace_are_never_merged(make_client: Callable[..., HyMemoryClient]) -> None:
    model = _model({**chat_replies([fact("The user works on search")]),
                    "coding_extract": extraction(subject="search.py", statement="fixed")})
    client = _pro(make_client, model)
    client.add("I am working on search today", user_id="ann", session_id="s", background=True)
    client.add(tool_trace("Fix the timeout in search.py"), scene="coding", user_id="ann", session_id="s",
               background=True)
    client.flush()
    assert sorted(model.stages) == ["chat_extract", "coding_extract"]
    assert client.list_memories("ann", scene="coding")["memories"]


def test_a_failed_model_call_is_retried_from_the_checkpoint(make_client: Callable[..., HyMemoryClient]) -> None:
    calls = {"reconcile": 0}

    def reconcile(_: Any) -> str:
        calls["reconcile"] += 1
        if calls["reconcile"] == 1:
            raise ConnectionError("the model server is restarting")
        return '{"operations": [{"fact": "n0", "op": "UPDATE", "target": "c0", "content": "The user lives in Lyon"}]}'

    model = _model({"chat_extract": {"facts": [fact("The user lives in Lyon")]}, "chat_reconcile": reconcile})
    client = _pro(make_client, model)
    client.add("I live in Paris", user_id="ann")  # pro, synchronous: the candidate
    stored = client.list_memories("ann")["memories"]
    client.add("I moved: I live in Lyon now", user_id="ann", background=True)
    assert client.flush() == {"outstanding": 0, "failed": 0}
    assert model.stages.count("chat_extract") == 2  # the synchronous add's and this one's: not repeated
    assert calls["reconcile"] == 2 and client.pending() == []
    contents = _contents(client, "ann")
    assert "The user lives in Lyon" in contents and len(contents) == len(stored)


def test_a_model_that_keeps_failing_ends_in_the_fallback_and_shows_failed(
        make_client: Callable[..., HyMemoryClient]) -> None:
    def down(_: Any) -> str:
        raise ConnectionError("no route to the model")

    model = _model({"chat_extract": down})
    client = _pro(make_client, model)
    rid = client.add("My passport expires in June 2027", user_id="ann", background=True)["request_id"]
    assert client.flush() == {"outstanding": 0, "failed": 1}
    assert model.stages == ["chat_extract"] * RETRY_ATTEMPTS
    [failed] = client.pending("ann")
    assert failed["request_id"] == rid and failed["state"] == "failed" and failed["attempts"] == RETRY_ATTEMPTS - 1
    assert "fallback stored the write" in failed["error"]
    assert _contents(client, "ann") == ["My passport expires in June 2027"]  # the raw turn, never lost
    assert client.search("passport", user_ids=["ann"])["memories"][0].get("pending") is None


def test_async_twins_queue_flush_and_list(make_client: Callable[..., HyMemoryClient]) -> None:
    model = _model(chat_replies([fact("The user is allergic to peanuts")]))
    client = _pro(make_client, model)

    async def go() -> None:
        result = await client.aadd("I'm allergic to peanuts", user_id="ann", background=True)
        assert result["status"] == "queued"
        assert [p["state"] for p in await client.apending("ann")] == ["queued"]
        found = await client.asearch("peanuts allergy", user_ids=["ann"])
        assert found["memories"][0]["pending"] is True
        assert (await client.aflush())["outstanding"] == 0
        await client.aclose()

    asyncio.run(go())
    assert model.stages == ["chat_extract"]


def test_flush_timeout_is_checked(make_client: Callable[..., HyMemoryClient]) -> None:
    from hy_memory_langgraph.errors import InvalidInputError

    client = _pro(make_client, _model({}))
    with pytest.raises(InvalidInputError, match="timeout"):
        client.flush(timeout=-1)
