"""The NUL character (U+0000) is dropped from what is written, on every backend.

PostgreSQL cannot store U+0000 and SQLite can: without dropping it, a conversation whose
tool result held one (a binary file read by a tool) was written on SQLite and refused on
PostgreSQL. Now every backend stores the same text, without it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from hy_memory_langgraph import HyMemoryClient
from hy_memory_langgraph.messages.normalize import normalize_messages
from hy_memory_langgraph.values import json_object, require_text, without_nul
from tests.productivity.support import tool_trace

MakeClient = Callable[..., HyMemoryClient]


def test_a_chat_write_with_nul_is_stored_without_it(make_client: MakeClient) -> None:
    client = make_client()
    result = client.add("I drink oolong\x00 tea every morning", user_id="u1",
                        metadata={"src\x00": "note\x00book", "tags": ["a\x00", 1]})
    assert result["success"] is True
    found = client.search("oolong tea", user_ids=["u1"])["memories"]
    assert [m["content"] for m in found] == ["I drink oolong tea every morning"]
    assert found[0]["metadata"]["src"] == "notebook" and found[0]["metadata"]["tags"] == ["a", 1]


def test_an_update_with_nul_is_stored_without_it(make_client: MakeClient) -> None:
    client = make_client()
    memory_id = client.add("I drink oolong tea", user_id="u1")["memory_ids"][0]
    client.update(memory_id, "I drink\x00 green tea", metadata={"k": "v\x00"})
    record = client.get(memory_id)
    assert record is not None and record["content"] == "I drink green tea"
    assert record["metadata"]["k"] == "v"


@pytest.mark.parametrize("arguments", ["dict", "json_string"])
def test_a_working_trace_with_nul_in_tool_calls_and_results_is_written(make_client: MakeClient,
                                                                       arguments: str) -> None:
    client = make_client()
    trace = tool_trace("Read the header of data\x00.bin", tool="read_file",
                       args={"path": "data\x00.bin"}, result="\x7fELF\x00\x00\x01 header read")
    if arguments == "json_string":
        call = trace[1]["tool_calls"][0]["function"]
        assert "\\u0000" in call["arguments"]  # the JSON escape, as OpenAI sends it
    else:
        trace[1]["tool_calls"][0]["function"]["arguments"] = {"path": "data\x00.bin"}
    result = client.add(trace, "working", user_id="u1")
    assert result["success"] is True and result["fact_ids"]
    found = client.search("header of data.bin", scene="working", user_ids=["u1"])
    assert found["facts"] and "\x00" not in json.dumps(found, ensure_ascii=False).replace("\\u0000", "\x00")


def test_normalised_messages_hold_no_nul_anywhere() -> None:
    raw = '{"path": "a\\u0000b", "text": "c\\\\u0000d"}'  # an escape of NUL, and the text "\u0000"
    msgs = normalize_messages([
        {"role": "user", "content": "x\x00y"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c\x001", "type": "function", "function": {"name": "f\x00", "arguments": raw}}]},
        {"role": "tool", "tool_call_id": "c\x001", "content": "r\x00"},
    ])
    call = msgs[1].tool_calls[0]
    assert msgs[0].content == "xy" and msgs[2].content == "r" and msgs[2].tool_call_id == "c1"
    assert (call.id, call.name) == ("c1", "f")
    assert call.arguments == {"path": "ab", "text": "c\\u0000d"}
    assert json.loads(call.raw_arguments) == call.arguments  # the text stays the arguments' JSON


def test_checked_values_lose_nul_and_are_kept_as_they_are_without() -> None:
    clean: dict[str, Any] = {"a": ["b", {"c": 1}]}
    assert json_object(clean, "metadata") is clean
    assert json_object({"a\x00": ["b\x00", {"c": "\\u0000"}]}, "metadata") == {"a": ["b", {"c": "\\u0000"}]}
    assert require_text("a\x00b", "content") == "ab"
    assert without_nul(("x\x00", 2)) == ["x", 2]
