"""Write routing, every case of docs/design.md#write-routing: explicit scenes with and
without tool traces, ``scene=None`` with and without tools (one bounded judge call),
judge failure and garbage, judged chat, and the productivity switch."""

from __future__ import annotations

from hy_memory_langgraph.testing import RaisingChatModel, ScriptedChatModel
from tests.productivity.support import (
    PLAIN,
    routing_script,
    tool_trace,
)

TOOL_TRACE = [
    {"role": "user", "content": "What's the weather in Paris? I'm flying there Friday."},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": "{\"q\": \"Paris weather\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "name": "web_search", "content": "SECRET-TOOL-OUTPUT 18C sunny"},
    {"role": "assistant", "content": "Sunny, 18C. Have a nice flight!"},
]




def _contents(client, user="u1"):
    return [m["content"] for m in client.search("Paris flight weather", user_ids=[user])["memories"]]


def test_scene_none_with_tools_judged_chat_strips_tools(make_client) -> None:
    model = ScriptedChatModel.from_stages({"scene_judge": {"scene": "chat", "reason": "travel talk"}})
    client = make_client(mode="pro", llm=model)
    client.context.mode = "lite"  # keep the chat pipeline model-free to observe the stored turns
    result = client.add(TOOL_TRACE, user_id="u1")
    assert model.stages == ["scene_judge"] and result["scene"] == "chat"
    contents = _contents(client)
    assert "Sunny, 18C. Have a nice flight!" in contents
    assert not any("SECRET-TOOL-OUTPUT" in c for c in contents)


def test_judge_failure_falls_back_to_chat(make_client) -> None:
    model = ScriptedChatModel.from_stages({"scene_judge": "no idea", "chat_extract": {"facts": []}})
    client = make_client(mode="pro", llm=model)
    result = client.add(TOOL_TRACE, user_id="u1")
    assert result["scene"] == "chat" and model.stages == ["scene_judge", "chat_extract"]
    prompt = "\n".join(str(m.content) for m in model.prompts[-1])
    assert "SECRET-TOOL-OUTPUT" not in prompt


def test_judge_summary_is_bounded(make_client) -> None:
    model = ScriptedChatModel.from_stages({"scene_judge": {"scene": "chat"}, "chat_extract": {"facts": []}})
    client = make_client(mode="pro", llm=model)
    trace = []
    for i in range(60):
        trace += [{"role": "user", "content": f"step {i} " + "x" * 3000},
                  {"role": "assistant", "content": "", "tool_calls": [
                      {"id": f"c{i}", "type": "function", "function": {"name": "run", "arguments": "{}"}}]},
                  {"role": "tool", "tool_call_id": f"c{i}", "content": "y" * 5000}]
    client.add(trace, user_id="u1")
    judge_prompt = "\n".join(str(m.content) for m in model.prompts[0])
    assert len(judge_prompt) < 20_000 and "y" * 100 not in judge_prompt


def test_explicit_chat_with_tools_skips_judge(make_client, raising_model) -> None:
    client = make_client(mode="lite")
    result = client.add(TOOL_TRACE, scene="chat", user_id="u1")
    assert result["scene"] == "chat"
    assert not any("SECRET-TOOL-OUTPUT" in c for c in _contents(client))


def test_explicit_productivity_scene_without_tools_falls_back_to_chat(make_client) -> None:
    model = ScriptedChatModel.from_stages({"chat_extract": {"facts": [
        {"content": "The user flies to Paris on Friday", "subject": "user", "owner": "user"}]}})
    client = make_client(mode="pro", llm=model)
    for scene in ("working", "coding"):
        result = client.add("I'm flying to Paris on Friday", scene=scene, user_id="u1")
        assert result["scene"] == "chat"
    assert "scene_judge" not in model.stages


def test_scene_none_without_tools_zero_judge_calls(make_client) -> None:
    model = ScriptedChatModel.from_stages({"chat_extract": {"facts": []}})
    client = make_client(mode="pro", llm=model)
    client.add(TOOL_TRACE[:1] + TOOL_TRACE[-1:], user_id="u1")
    assert model.stages == ["chat_extract"]


def test_explicit_scene_with_tools_goes_to_that_variant_without_judge(make_client) -> None:
    script = routing_script()
    client = make_client("pro", script.model())
    coding = client.add(tool_trace(), scene="coding", user_id="u1")
    working = client.add(tool_trace(), scene="working", user_id="u1")
    assert coding["scene"] == working["scene"] == "productivity"
    assert coding["memory_id"].startswith("fact_coding_") and "chain_rounds" in coding
    assert working["memory_id"].startswith("fact_working_") and "chain_rounds" not in working
    assert script.stages() == ["coding_extract", "working_extract"]


def test_explicit_scene_without_tools_falls_back_to_chat(make_client) -> None:
    script = routing_script()
    client = make_client("pro", script.model())
    result = client.add(PLAIN, scene="working", user_id="u1")
    assert result["scene"] == "chat"
    assert "scene_judge" not in script.stages() and "working_extract" not in script.stages()


def test_no_scene_without_tools_is_chat_with_zero_judge_calls(make_client) -> None:
    script = routing_script()
    client = make_client("pro", script.model())
    assert client.add(PLAIN, user_id="u1")["scene"] == "chat"
    assert "scene_judge" not in script.stages()


def test_no_scene_with_tools_asks_the_judge_once_and_follows_it(make_client, tmp_path) -> None:
    for judged, prefix in (("coding", "fact_coding_"), ("working", "fact_working_")):
        script = routing_script(scene_judge={"scene": judged, "reason": "tools on files"})
        client = make_client("pro", script.model())
        result = client.add(tool_trace(), user_id="u1")
        assert result["scene"] == "productivity" and result["memory_id"].startswith(prefix)
        assert script.stages() == ["scene_judge", f"{judged}_extract"]


def test_judge_failure_or_garbage_goes_to_chat_with_tools_stripped(make_client) -> None:
    for reply in ("no idea, sorry", {"scene": "banana"}):
        script = routing_script(scene_judge=reply)
        client = make_client("pro", script.model())
        result = client.add(tool_trace(result="SECRET-TOOL-OUTPUT"), user_id="u1")
        assert result["scene"] == "chat"
        assert script.stages()[0] == "scene_judge"
        assert not any(s.endswith("_extract") and s != "chat_extract" for s in script.stages())
        assert all("SECRET-TOOL-OUTPUT" not in c.user for c in script.calls[1:])


def test_judge_says_chat_goes_to_chat(make_client) -> None:
    script = routing_script(scene_judge={"scene": "chat", "reason": "small talk"})
    client = make_client("pro", script.model())
    assert client.add(tool_trace(), user_id="u1")["scene"] == "chat"


def test_coding_disabled_sends_write_and_search_to_chat(make_client) -> None:
    raising = RaisingChatModel.create()
    client = make_client("lite", raising, env={"MEMORY_CODING_ENABLED": "false"})
    written = client.add(tool_trace(), scene="coding", user_id="u1")
    found = client.search("search client timeout", scene="coding", user_ids=["u1"])
    assert written["scene"] == "chat" and found["scene"] == "chat"
    assert raising.call_count == 0
