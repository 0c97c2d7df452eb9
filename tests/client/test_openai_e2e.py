"""End to end: the real ChatOpenAI client, configured from the environment, against a
local OpenAI-compatible stub server (loopback only)."""

from __future__ import annotations

import json
from typing import Any

from langchain_openai import ChatOpenAI


def _respond(request: dict[str, Any]) -> str:
    system = str(request["messages"][0]["content"])
    user = str(request["messages"][-1]["content"])
    if '"operations"' in system:
        return json.dumps({"operations": [{"fact": "n0", "op": "SUPERSEDE", "target": "c0"}]})
    if '"facts"' in system:
        city = "Lisbon" if "Lisbon" in user else "Porto"
        return "```json\n" + json.dumps({"facts": [
            {"content": f"The user lives in {city}", "subject": "user", "owner": "user"}]}) + "\n```"
    if '"rewrite"' in system:
        return json.dumps({"scene": "chat", "rewrite": "Where does the user live?",
                           "time_range": {"start": None, "end": None}})
    return "{}"


def test_pro_mode_from_environment_against_stub(openai_stub, make_client, monkeypatch) -> None:
    openai_stub.responder = _respond
    for name, value in openai_stub.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HY_MEMORY_LLM_MODEL", "stub-model")
    client = make_client(mode=None)
    assert client.mode == "pro" and isinstance(client.context.llm.model, ChatOpenAI)

    first = client.add("I live in Porto", user_id="u1", memory_at="2024-01-01")
    second = client.add("We just moved to Lisbon!", user_id="u1", memory_at="2024-03-01")
    assert first["ops_summary"]["ADD"] == 1 and second["ops_summary"]["SUPERSEDE"] == 1

    found = client.search("where do I live now?", user_ids=["u1"], search_mode="agentic")
    assert found["rewrite"] == "Where does the user live?"
    assert [m["content"] for m in found["memories"]] == ["The user lives in Lisbon"]

    stages = client.llm_usage.snapshot()
    assert stages["chat_extract"]["calls"] == 2 and stages["chat_reconcile"]["calls"] == 1
    assert stages["query_full"]["calls"] == 1 and not stages["chat_extract"]["estimated"]
    assert stages["chat_extract"]["prompt_tokens"] > 50
    bodies = [r.body for r in openai_stub.chat_requests]
    assert all(b["model"] == "stub-model" for b in bodies) and len(bodies) == 4
    assert "We just moved to Lisbon!" in openai_stub.chat_requests[1].prompt_text
