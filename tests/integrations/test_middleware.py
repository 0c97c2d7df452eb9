"""HyMemoryMiddleware inside a real LangChain v1 ``create_agent`` agent."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent

from hy_memory_langgraph.errors import ForeignUserError, MissingContextError
from hy_memory_langgraph.integrations import HyMemoryMiddleware
from hy_memory_langgraph.testing import ScriptedChatModel


def test_agent_recalls_before_the_model_and_remembers_after(make_client) -> None:
    client = make_client(mode="lite")
    client.add("My cat is called Miso", user_id="u1", session_id="old")
    client.add("Bob's dog is Rex", user_id="u2")
    model = ScriptedChatModel.from_script(["Your cat is Miso!"])
    agent = create_agent(model, tools=[], system_prompt="You are helpful.",
                         middleware=[HyMemoryMiddleware(client, user_id="u1", limit=3)])
    out = agent.invoke({"messages": [{"role": "user", "content": "What is my cat called?"}]})
    assert out["messages"][-1].content == "Your cat is Miso!"
    system = str(model.prompts[0][0].content)
    assert system.startswith("You are helpful.") and "My cat is called Miso" in system
    assert "Rex" not in system
    stored = {m["content"]: m for m in client.search("cat called", user_ids=["u1"])["memories"]}
    assert "What is my cat called?" not in stored  # the plain question is no memory of its own
    assert stored["Your cat is Miso!"]["carried"] == "What is my cat called?"  # its answer carries it
    assert client.llm_usage.total_calls == 0


async def test_async_agent_and_user_from_runtime_context(make_client) -> None:
    client = make_client(mode="lite")
    client.add("I live in Porto", user_id="alice")
    model = ScriptedChatModel.from_script(["Porto, as far as I remember."])
    middleware = HyMemoryMiddleware(client, user_id=lambda runtime: runtime.context["user"], remember=False)
    agent = create_agent(model, tools=[], middleware=[middleware], context_schema=dict)
    await agent.ainvoke({"messages": [{"role": "user", "content": "Where do I live?"}]},
                        context={"user": "alice"})
    assert "I live in Porto" in str(model.prompts[0][0].content)
    assert len(client.search("live", user_ids=["alice"])["memories"]) == 1


def test_middleware_without_a_user_reads_it_from_the_run(make_client) -> None:
    client = make_client(mode="lite")
    client.add("I live in Porto", user_id="alice")
    client.add("I live in Oslo", user_id="bob")
    model = ScriptedChatModel.from_script(["Oslo."])
    agent = create_agent(model, tools=[], middleware=[HyMemoryMiddleware(client, remember=False)])
    agent.invoke({"messages": [{"role": "user", "content": "Where do I live?"}]},
                 config={"configurable": {"user_id": "bob"}})
    system = str(model.prompts[0][0].content)
    assert "Oslo" in system and "Porto" not in system


def test_middleware_built_for_one_user_refuses_another_users_run(make_client) -> None:
    client = make_client(mode="lite")
    client.add("I live in Porto", user_id="alice")
    model = ScriptedChatModel.from_script(["Porto.", "Porto."])
    agent = create_agent(model, tools=[], middleware=[HyMemoryMiddleware(client, user_id="alice")])
    question = {"messages": [{"role": "user", "content": "Where do I live?"}]}
    with pytest.raises(ForeignUserError, match="built for user 'alice' but this run names user 'bob'"):
        agent.invoke(question, config={"configurable": {"user_id": "bob"}})
    assert model.prompts == [] and client.list_memories("bob")["memories"] == []  # neither read nor written
    agent.invoke(question, config={"configurable": {"user_id": "alice"}})  # its own user's run
    assert "Porto" in str(model.prompts[0][0].content)


def test_middleware_with_no_user_anywhere_refuses(make_client) -> None:
    client = make_client(mode="lite")
    model = ScriptedChatModel.from_script(["hi"])
    agent = create_agent(model, tools=[], middleware=[HyMemoryMiddleware(client)])
    with pytest.raises(MissingContextError, match="user_id"):
        agent.invoke({"messages": [{"role": "user", "content": "Where do I live?"}]})
