"""Write/search routing into the productivity pipeline (docs/design.md#write-routing, #search-routing)."""

from __future__ import annotations

from .support import (
    StageScript,
    extraction,
    tool_trace,
)

from hy_memory_langgraph.testing import RaisingChatModel

PLAIN = [{"role": "user", "content": "I like green tea."},
         {"role": "assistant", "content": "Noted!"}]


def _script(**replies: object) -> StageScript:
    base: dict[str, object] = {"working_extract": extraction(), "coding_extract": extraction(),
                               "chat_extract": {"facts": []}}
    base.update(replies)
    return StageScript(base)


def test_explicit_scene_with_tools_goes_to_that_variant_without_judge(make_client) -> None:
    script = _script()
    client = make_client("pro", script.model())
    coding = client.add(tool_trace(), scene="coding", user_id="u1")
    working = client.add(tool_trace(), scene="working", user_id="u1")
    assert coding["scene"] == working["scene"] == "productivity"
    assert coding["memory_id"].startswith("fact_coding_") and "chain_rounds" in coding
    assert working["memory_id"].startswith("fact_working_") and "chain_rounds" not in working
    assert script.stages() == ["coding_extract", "working_extract"]


def test_explicit_scene_without_tools_falls_back_to_chat(make_client) -> None:
    script = _script()
    client = make_client("pro", script.model())
    result = client.add(PLAIN, scene="working", user_id="u1")
    assert result["scene"] == "chat"
    assert "scene_judge" not in script.stages() and "working_extract" not in script.stages()


def test_no_scene_without_tools_is_chat_with_zero_judge_calls(make_client) -> None:
    script = _script()
    client = make_client("pro", script.model())
    assert client.add(PLAIN, user_id="u1")["scene"] == "chat"
    assert "scene_judge" not in script.stages()


def test_no_scene_with_tools_asks_the_judge_once_and_follows_it(make_client, tmp_path) -> None:
    for judged, prefix in (("coding", "fact_coding_"), ("working", "fact_working_")):
        script = _script(scene_judge={"scene": judged, "reason": "tools on files"})
        client = make_client("pro", script.model())
        result = client.add(tool_trace(), user_id="u1")
        assert result["scene"] == "productivity" and result["memory_id"].startswith(prefix)
        assert script.stages() == ["scene_judge", f"{judged}_extract"]


def test_judge_failure_or_garbage_goes_to_chat_with_tools_stripped(make_client) -> None:
    for reply in ("no idea, sorry", {"scene": "banana"}):
        script = _script(scene_judge=reply)
        client = make_client("pro", script.model())
        result = client.add(tool_trace(result="SECRET-TOOL-OUTPUT"), user_id="u1")
        assert result["scene"] == "chat"
        assert script.stages()[0] == "scene_judge"
        assert not any(s.endswith("_extract") and s != "chat_extract" for s in script.stages())
        assert all("SECRET-TOOL-OUTPUT" not in c.user for c in script.calls[1:])


def test_judge_says_chat_goes_to_chat(make_client) -> None:
    script = _script(scene_judge={"scene": "chat", "reason": "small talk"})
    client = make_client("pro", script.model())
    assert client.add(tool_trace(), user_id="u1")["scene"] == "chat"


def test_coding_disabled_sends_write_and_search_to_chat(make_client) -> None:
    raising = RaisingChatModel.create()
    client = make_client("lite", raising, env={"MEMORY_CODING_ENABLED": "false"})
    written = client.add(tool_trace(), scene="coding", user_id="u1")
    found = client.search("search client timeout", scene="coding", user_ids=["u1"])
    assert written["scene"] == "chat" and found["scene"] == "chat"
    assert raising.call_count == 0


def test_explicit_search_scene_makes_zero_llm_calls(make_client) -> None:
    script = _script()
    client = make_client("pro", script.model())
    client.add(tool_trace(), scene="working", user_id="u1")
    before = len(script.calls)
    explicit = client.search("timeout", scene="coding", user_ids=["u1"])
    assert explicit["scene"] == "productivity" and "chain_block" in explicit
    explicit_working = client.search("timeout", scene="working", user_ids=["u1"])
    assert "chain_block" not in explicit_working and len(script.calls) == before


def test_search_uses_the_route_from_query_analysis(make_client) -> None:
    def analysis(user: str) -> dict[str, object]:
        return {"scene": "coding", "rewrite": "search client timeout", "time_range": {}}

    script = StageScript({"coding_extract": extraction(statement="raised the search client timeout")})
    client = make_client("pro", script.model())
    client.add(tool_trace(), scene="coding", user_id="u1")
    script.replies["other"] = analysis
    found = client.search("what about that timeout?", search_mode="agentic", user_ids=["u1"])
    assert found["scene"] == "productivity" and found["chain_block"] == ""
    assert found["facts"] and found["facts"][0]["variant"] == "coding"
