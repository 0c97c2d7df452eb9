"""Regressions from the productivity review: extraction outage, dotted db file name,
deleting a superseding fact, and the lite outcome of a trace ending in a tool result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.flows.productivity.lite import deterministic_fact
from hy_memory_langgraph.messages import normalize_messages
from hy_memory_langgraph.testing import RaisingChatModel

from .support import StageScript, extraction, section, tool_trace

# ---------------------------------------------------- extraction failure → lite fact

def _assert_lite_fallback(client: Any, result: dict[str, Any], scene: str) -> None:
    assert result["success"] is True and result["fallback"] == "extract_failed"
    assert result["fact_ids"] == [result["memory_id"]] and result["memory_id"]
    assert {"ops", "ops_summary", "experience_ids", "fact_ops", "fact_ops_summary",
            "elapsed_ms", "request_id", "scene"} <= set(result)
    fact = client.get(result["memory_id"])
    assert fact["source"] == "lite" and fact["statement"].startswith("Request: Fix the timeout")
    found = client.search("fix the timeout in the search client", scene=scene, user_ids=["u1"],
                          min_score=-1.0)
    assert [f["memory_id"] for f in found["facts"]] == [result["memory_id"]]


@pytest.mark.parametrize("scene", ["working", "coding"])
def test_raising_extraction_stores_the_lite_fact(make_client, scene: str) -> None:
    client = make_client("pro", RaisingChatModel.create())
    result = client.add(tool_trace(), scene=scene, user_id="u1")
    _assert_lite_fallback(client, result, scene)


@pytest.mark.parametrize("reply", ["not json at all", {"unrelated": 1}, {"experiences": [], "fact": "x"},
                                   {"experiences": [], "fact": {"statement": ""}}])
def test_garbage_extraction_stores_the_lite_fact(make_client, reply: Any) -> None:
    client = make_client("pro", StageScript({"working_extract": reply}).model())
    result = client.add(tool_trace(), scene="working", user_id="u1")
    _assert_lite_fallback(client, result, "working")


def test_valid_empty_extraction_still_stores_nothing(make_client) -> None:
    for enabled in (False, True):
        script = StageScript({"coding_extract": {"experiences": [], "fact": None}})
        client = make_client("pro", script.model(),
                             env={"MEMORY_CODING_VERBATIM_FALLBACK_ENABLED": str(enabled).lower()})
        result = client.add(tool_trace(), scene="coding", user_id="u1")
        assert "fallback" not in result
        if enabled:
            assert client.get(result["memory_id"])["source"] == "verbatim"
        else:
            assert result["memory_id"] is None and result["fact_ids"] == []


def test_failed_extraction_with_verbatim_on_keeps_the_verbatim_fact(make_client) -> None:
    client = make_client("pro", RaisingChatModel.create(),
                         env={"MEMORY_CODING_VERBATIM_FALLBACK_ENABLED": "true"})
    result = client.add(tool_trace(), scene="coding", user_id="u1")
    assert result["fallback"] == "extract_failed"
    assert client.get(result["memory_id"])["source"] == "verbatim"


def test_successful_extraction_has_no_fallback_key(make_client) -> None:
    client = make_client("pro", StageScript({"working_extract": extraction()}).model())
    result = client.add(tool_trace(), scene="working", user_id="u1")
    assert "fallback" not in result and client.get(result["memory_id"])["source"] == "extract"


# --------------------------------------------------------- dotted db file name

def test_dot_in_db_file_name_keeps_working_and_coding_writes_valid(make_client, tmp_path: Path) -> None:
    for mode in ("lite", "pro"):
        llm = StageScript({"working_extract": extraction(), "coding_extract": extraction()}).model()
        client = make_client(mode, llm if mode == "pro" else None,
                             env={"MEMORY_CODING_DB_PATH": str(tmp_path / f"{mode}.team.memory.db")})
        for scene in ("working", "coding"):
            result = client.add(tool_trace(), scene=scene, user_id="u.1")
            assert result["success"] is True and result["memory_id"]
            found = client.search("timeout search client", scene=scene, user_ids=["u.1", "u2"],
                                  min_score=-1.0)
            assert [f["memory_id"] for f in found["facts"]] == [result["memory_id"]]
            assert client.get(result["memory_id"])["memory_id"] == result["memory_id"]
            assert client.delete(result["memory_id"]) is True


# ------------------------------------------------ deleting a superseding fact

def _supersede_all(user: str) -> dict[str, Any]:
    ids = [line.split(":", 1)[0] for line in section(user, "candidates").splitlines()]
    return {"supersede": ids, "reason": "continues the task"}


def _chain(make_client: Any, n: int) -> tuple[Any, list[dict[str, Any]]]:
    script = StageScript({
        "coding_extract": [extraction("src/search.py:SearchClient", f"step {i} of the timeout fix")
                           for i in range(1, n + 1)],
        "fact_reconcile": _supersede_all, "progress_summary": {"summary": "story"}})
    client = make_client("pro", script.model())
    return client, [client.add(tool_trace(), scene="coding", user_id="u1", session_id=f"s{i}")
                    for i in range(n)]


def _found(client: Any) -> list[str]:
    found = client.search("timeout fix", scene="coding", user_ids=["u1"], min_score=-1.0)
    return [f["memory_id"] for f in found["facts"]]


def test_deleting_the_newest_fact_restores_the_one_it_superseded(make_client) -> None:
    client, (r1, r2) = _chain(make_client, 2)
    old, new = r1["memory_id"], r2["memory_id"]
    assert client.get(old)["status"] == "superseded" and _found(client) == [new]
    assert client.delete(new) is True
    restored = client.get(old)
    assert (restored["status"], restored["superseded_by"]) == ("active", None)
    assert "events" not in restored
    assert _found(client) == [old]
    history = client.history(old)
    assert [h["op"] for h in history] == ["INSERT", "SUPERSEDED", "RESTORED"]
    assert history[-1]["related_id"] == new and history[-1]["status"] == "active"
    # deleting the restored fact leaves nothing behind
    assert client.delete(old) is True and _found(client) == []


def test_deleting_a_middle_fact_passes_its_predecessors_to_the_successor(make_client) -> None:
    client, (r1, r2, r3) = _chain(make_client, 3)
    f1, f2, f3 = (r["memory_id"] for r in (r1, r2, r3))
    assert client.delete(f2) is True
    first = client.get(f1)
    assert (first["status"], first["superseded_by"]) == ("superseded", f3)
    assert client.get(f3)["supersedes"] == [f1] and _found(client) == [f3]
    names = {f1: "f1", f2: "f2", f3: "f3"}
    assert [(names[h["memory_id"]], h["op"]) for h in client.history(f3)] == [
        ("f1", "INSERT"), ("f1", "SUPERSEDED"), ("f3", "SUPERSEDE"), ("f2", "DELETE"),
        ("f1", "RELINKED")]
    assert all("content" not in h for h in client.history(f3) if h["memory_id"] == f2)
    assert client.delete(f3) is True
    assert client.get(f1)["status"] == "active" and _found(client) == [f1]


# ------------------------------------------- lite outcome from a final tool result

def test_lite_outcome_falls_back_to_the_last_tool_result() -> None:
    long_line = "x" * 500
    msgs = normalize_messages(tool_trace("Run the tests", tool="bash", args={"command": "pytest"},
                                         result="\n  12 passed in 3.1s  \nmore\n", answer=None))
    fact = deterministic_fact(msgs, [], "en")
    assert fact["statement"].splitlines()[-1] == "Outcome: 12 passed in 3.1s"
    msgs = normalize_messages(tool_trace("Run it", tool="bash", args={"command": "x"},
                                         result=long_line, answer=None))
    outcome = deterministic_fact(msgs, [], "en")["statement"].splitlines()[-1]
    assert outcome.startswith("Outcome: xxx") and len(outcome) <= len("Outcome: ") + 200
    # an assistant answer after the tool result still wins
    msgs = normalize_messages(tool_trace("Run the tests", tool="bash", args={"command": "pytest"},
                                         result="12 passed", answer="All green."))
    assert deterministic_fact(msgs, [], "en")["statement"].splitlines()[-1] == "Outcome: All green."


def test_lite_client_fact_has_outcome_when_trace_ends_with_tool(make_client) -> None:
    client = make_client("lite")
    result = client.add(tool_trace(answer=None), scene="coding", user_id="u1")
    assert "Outcome: Patch applied successfully" in client.get(result["memory_id"])["statement"]
