"""What a productivity write does when extraction fails or says little: the lite fact
stands in (and says so), verbatim facts only when asked, and a lite fact's outcome read
from the last tool result when the assistant said nothing after it."""

from __future__ import annotations

from typing import Any

import pytest

from hy_memory_langgraph.flows.productivity.lite import deterministic_fact
from hy_memory_langgraph.messages.normalize import normalize_messages
from hy_memory_langgraph.testing import RaisingChatModel

from .support import StageScript, extraction, tool_trace

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
