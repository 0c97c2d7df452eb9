"""Search routing, every row of docs/design.md#search-routing, counting the LLM calls
each call spends and what they are for."""

from __future__ import annotations

from hy_memory_langgraph.config import CodingConfig, MemoryConfig
from hy_memory_langgraph.testing import ScriptedChatModel
from hy_memory_langgraph.timeutil import coerce_datetime
from tests.productivity.support import (
    StageScript,
    extraction,
    routing_script,
    tool_trace,
)


def _config(tmp_path, *, coding: bool = True, rewrite: bool = False, max_chars: int = 1000) -> MemoryConfig:
    return MemoryConfig(data_dir=tmp_path / "cfg", coding=CodingConfig(enabled=coding),
                        enable_query_rewrite=rewrite, query_rewrite_max_chars=max_chars)


def _seeded(make_client, model, config=None):
    """A pro client holding two memories written straight through the repository."""
    client = make_client(mode="pro", llm=model, config=config)
    repo = client.context.chat_repo
    for text, at in (("We visited Kyoto in April 2024", "2024-04-10"), ("We visited Oslo in June 2024", "2024-06-10")):
        repo.create("u1", text, request_id="seed", memory_at=coerce_datetime(at, "at"))
    return client


def test_default_single_query_makes_zero_llm_calls(make_client, raising_model) -> None:
    client = _seeded(make_client, raising_model)
    found = client.search("Where did we travel?", user_ids=["u1"], search_mode="default")
    assert found["memories"] and raising_model.call_count == 0


def test_explicit_scene_makes_zero_llm_calls(make_client, raising_model) -> None:
    client = _seeded(make_client, raising_model)
    for mode in ("default", "agentic"):
        found = client.search(queries=["earlier", "Where did we travel?"], scene="chat",
                              user_ids=["u1"], search_mode=mode)
        assert found["scene"] == "chat"
    assert raising_model.call_count == 0


def test_agentic_rewrites_and_applies_time_range(make_client) -> None:
    model = ScriptedChatModel.from_stages({"query_full": {
        "scene": "chat", "rewrite": "Which city did we visit?",
        "time_range": {"start": "2024-06-01", "end": "2024-06-30"}}})
    client = _seeded(make_client, model)
    found = client.search("and where did we go in June?", user_ids=["u1"], search_mode="agentic")
    assert model.stages == ["query_full"]
    assert found["rewrite"] == "Which city did we visit?"
    assert [m["content"] for m in found["memories"]] == ["We visited Oslo in June 2024"]


def test_agentic_prompt_holds_earlier_queries(make_client) -> None:
    model = ScriptedChatModel.from_stages({"query_full": {"scene": "chat", "rewrite": "x"}})
    client = _seeded(make_client, model)
    client.search(queries=["Tell me about Kyoto", "when was that?"], user_ids=["u1"], search_mode="agentic")
    prompt = str(model.prompts[0][-1].content)
    assert "Tell me about Kyoto" in prompt and "when was that?" in prompt


def test_agentic_failure_falls_back_to_default(make_client) -> None:
    model = ScriptedChatModel.from_stages({"query_full": "I cannot help with that"})
    client = _seeded(make_client, model)
    found = client.search("Kyoto", user_ids=["u1"], search_mode="agentic")
    assert found["rewrite"] is None and "Kyoto" in found["memories"][0]["content"]


def test_default_multi_query_with_coding_one_bounded_call(make_client) -> None:
    model = ScriptedChatModel.from_stages({"query_full": {"scene": "chat", "rewrite": "Kyoto trip"}})
    client = _seeded(make_client, model)
    found = client.search(queries=["We talked about Japan", "the trip there?"], user_ids=["u1"])
    assert model.stages == ["query_full"] and found["rewrite"] == "Kyoto trip"


def test_default_multi_query_too_long_classifies_only(make_client, tmp_path) -> None:
    model = ScriptedChatModel.from_stages({"query_classify": {"scene": "chat"}})
    client = _seeded(make_client, model, _config(tmp_path, max_chars=20))
    found = client.search(queries=["a long earlier question about travel", "Kyoto?"], user_ids=["u1"])
    assert model.stages == ["query_classify"] and found["rewrite"] is None


def test_default_multi_query_rewrite_only(make_client, tmp_path) -> None:
    model = ScriptedChatModel.from_stages({"query_rewrite": {"rewrite": "Oslo visit", "time_range": {}}})
    client = _seeded(make_client, model, _config(tmp_path, coding=False, rewrite=True))
    found = client.search(queries=["trips", "the one in Norway"], user_ids=["u1"])
    assert model.stages == ["query_rewrite"] and found["rewrite"] == "Oslo visit"


def test_default_multi_query_both_off_zero_calls(make_client, raising_model, tmp_path) -> None:
    client = _seeded(make_client, raising_model, _config(tmp_path, coding=False, rewrite=False))
    found = client.search(queries=["trips", "Kyoto"], user_ids=["u1"])
    assert raising_model.call_count == 0 and "Kyoto" in found["memories"][0]["content"]


def test_coding_disabled_routes_productivity_scene_to_chat(make_client, raising_model, tmp_path) -> None:
    client = _seeded(make_client, raising_model, _config(tmp_path, coding=False))
    found = client.search("Kyoto", scene="coding", user_ids=["u1"])
    assert found["scene"] == "chat" and raising_model.call_count == 0


def test_empty_queries_list_is_a_single_query_search(make_client, raising_model) -> None:
    client = _seeded(make_client, raising_model)
    found = client.search("Kyoto", queries=[], user_ids=["u1"])
    assert found["memories"] and raising_model.call_count == 0


def test_caller_time_range_wins_over_the_models(make_client) -> None:
    model = ScriptedChatModel.from_stages({"query_full": {
        "scene": "chat", "rewrite": "trips", "time_range": {"start": "2024-01-01", "end": "2024-01-31"}}})
    client = _seeded(make_client, model)
    found = client.search("trips", user_ids=["u1"], search_mode="agentic", created_after="2024-05-01")
    assert [m["content"] for m in found["memories"]] == ["We visited Oslo in June 2024"]


def test_explicit_search_scene_makes_zero_llm_calls(make_client) -> None:
    script = routing_script()
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
