"""The same recall / remember nodes as the prebuilt ReAct agent's pre- and post-model hooks."""

from __future__ import annotations

import warnings
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent
from langgraph.warnings import LangGraphDeprecatedSinceV10

from hy_memory_langgraph.integrations import create_recall_node, create_remember_node
from hy_memory_langgraph.testing import ScriptedChatModel
from tests.integrations.conftest import cat_answer, system_text


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}."


def weather_then_cat(messages: list[BaseMessage]) -> AIMessage:
    """Calls the weather tool once for weather questions; otherwise like :func:`cat_answer`."""
    last = messages[-1]
    if isinstance(last, HumanMessage) and "weather" in str(last.content):
        return AIMessage(content="", tool_calls=[{"name": "weather", "args": {"city": "Porto"}, "id": "w1"}])
    if isinstance(last, ToolMessage):
        return AIMessage(content=f"{last.content} (Miso is {'known' if 'Miso' in system_text(messages) else 'unknown'})")
    return cat_answer(messages)


def build_agent(client: Any, model: ScriptedChatModel, *, keep_in_history: bool = False) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        return create_react_agent(model, [weather], prompt="You are helpful.",
                                  pre_model_hook=create_recall_node(client, keep_in_history=keep_in_history),
                                  post_model_hook=create_remember_node(client),
                                  checkpointer=InMemorySaver())


def config(user: str, thread: str) -> dict[str, Any]:
    return {"configurable": {"user_id": user, "thread_id": thread}}


def test_pre_model_hook_recalls_across_threads_without_touching_the_history(make_client) -> None:
    client = make_client(mode="lite")
    model = ScriptedChatModel.from_script(weather_then_cat)
    agent = build_agent(client, model)
    agent.invoke({"messages": [HumanMessage("My cat is called Miso.")]}, config("alice", "t1"))
    out = agent.invoke({"messages": [HumanMessage("What is my cat called?")]}, config("alice", "t2"))
    assert out["messages"][-1].content == "Your cat is called Miso."
    prompt = model.prompts[-1]
    assert prompt[0].content == "You are helpful." and "My cat is called Miso." in system_text(prompt)
    assert not any(isinstance(m, SystemMessage) for m in out["messages"])
    other = agent.invoke({"messages": [HumanMessage("What is my cat called?")]}, config("bob", "t3"))
    assert other["messages"][-1].content == "I don't know your cat's name."
    assert "Miso" not in system_text(model.prompts[-1])


def test_pre_model_hook_keeping_the_block_in_history_shows_it_to_the_model_once(make_client) -> None:
    client = make_client(mode="lite")
    model = ScriptedChatModel.from_script(weather_then_cat)
    agent = build_agent(client, model, keep_in_history=True)
    agent.invoke({"messages": [HumanMessage("My cat is called Miso.")]}, config("alice", "t1"))
    for _ in range(3):
        out = agent.invoke({"messages": [HumanMessage("What is my cat called?")]}, config("alice", "t2"))
        assert out["messages"][-1].content == "Your cat is called Miso."
        assert system_text(model.prompts[-1]).count("My cat is called Miso.") == 1
    blocks = [m.id for m in out["messages"] if isinstance(m, SystemMessage)]
    assert blocks == ["hy_memory:recall_memories"]


async def test_tool_loop_keeps_the_memory_and_writes_the_turn_once(make_client) -> None:
    client = make_client(mode="lite")
    client.add("My cat is called Miso.", user_id="alice")
    model = ScriptedChatModel.from_script(weather_then_cat)
    agent = build_agent(client, model)
    out = await agent.ainvoke({"messages": [HumanMessage("What is the weather, and is my cat called Miso?")]},
                              config("alice", "t9"))
    assert out["messages"][-1].content == "Sunny in Porto. (Miso is known)"
    # Both model calls (before and after the tool) saw the memory block and the tool result.
    assert all("Miso" in system_text(p) for p in model.prompts)
    assert isinstance(model.prompts[-1][-1], ToolMessage)
    written = [m for m in client.search("weather Porto", user_ids=["alice"], limit=10)["memories"]
               if m["session_id"] == "t9"]
    assert [(m["content"], m["carried"]) for m in written] == [  # the question is carried, not stored
        ("Sunny in Porto. (Miso is known)", "What is the weather, and is my cat called Miso?")]
