"""Write routing (docs/design.md#write-routing) on the chat side (the productivity side has its own tests)."""

from __future__ import annotations

from hy_memory_langgraph.testing import ScriptedChatModel

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
