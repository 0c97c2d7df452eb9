"""Recall and remember nodes in a hand-built StateGraph (scripted model, checkpointer)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from hy_memory_langgraph.errors import MissingContextError
from hy_memory_langgraph.integrations import (
    MemoryState,
    create_recall_node,
    create_remember_node,
)
from hy_memory_langgraph.testing import RaisingChatModel, ScriptedChatModel
from tests.integrations.conftest import cat_answer, system_text


@dataclass
class Context:
    user_id: str


def build_graph(client: Any, model: ScriptedChatModel, *, keep_in_history: bool = False,
                plain: bool = False, **graph_kwargs: Any) -> Any:
    """recall → model → remember; ``plain``: the model reads ``state["messages"]``."""
    def call_model(state: MemoryState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages" if plain else "llm_input_messages"])]}

    builder = StateGraph(MessagesState, **graph_kwargs)
    builder.add_node("recall", create_recall_node(client, k=3, keep_in_history=keep_in_history))
    builder.add_node("model", call_model)
    builder.add_node("remember", create_remember_node(client))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "model")
    builder.add_edge("model", "remember")
    builder.add_edge("remember", END)
    return builder.compile(checkpointer=InMemorySaver())


def ask(graph: Any, text: str, *, thread: str, user: str, **kwargs: Any) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread, "user_id": user}}
    return graph.invoke({"messages": [HumanMessage(text)]}, config, **kwargs)


def test_fact_from_thread_1_is_recalled_in_thread_2_of_the_same_user_only(make_client) -> None:
    client = make_client(mode="lite")
    model = ScriptedChatModel.from_script(cat_answer)
    graph = build_graph(client, model)
    ask(graph, "My cat is called Miso.", thread="t1", user="alice")
    out = ask(graph, "What is my cat called?", thread="t2", user="alice")
    assert out["messages"][-1].content == "Your cat is called Miso."
    # The memory block reached the model but never the stored history of either thread.
    assert "My cat is called Miso." in system_text(model.prompts[-1])
    for thread in ("t1", "t2"):
        history = graph.get_state({"configurable": {"thread_id": thread}}).values["messages"]
        assert not any(isinstance(m, SystemMessage) for m in history)
    assert [type(m) for m in out["messages"]] == [HumanMessage, AIMessage]
    assert "llm_input_messages" not in out
    # Another user never sees it.
    other = ask(graph, "What is my cat called?", thread="t3", user="bob")
    assert other["messages"][-1].content == "I don't know your cat's name."
    assert "Miso" not in system_text(model.prompts[-1])
    # Thread 1's turn was written once, with its session ("Noted!" is trivial: not kept).
    stored = client.search("cat Miso", user_ids=["alice"], limit=10)["memories"]
    assert [m["content"] for m in stored if m["session_id"] == "t1"] == ["My cat is called Miso."]
    assert client.llm_usage.total_calls == 0


async def test_async_graph_reads_the_user_from_the_runtime_context(make_client) -> None:
    client = make_client(mode="lite")
    model = ScriptedChatModel.from_script(cat_answer)
    graph = build_graph(client, model, context_schema=Context)
    config = {"configurable": {"thread_id": "a1"}}
    await graph.ainvoke({"messages": [HumanMessage("My cat is called Miso.")]}, config,
                        context=Context(user_id="carol"))
    out = await graph.ainvoke({"messages": [HumanMessage("What is my cat called?")]},
                              {"configurable": {"thread_id": "a2"}}, context=Context(user_id="carol"))
    assert out["messages"][-1].content == "Your cat is called Miso."
    assert client.search("cat", user_ids=["carol"])["memories"][0]["session_id"] in {"a1", "a2"}


def test_missing_user_id_names_the_field(make_client) -> None:
    graph = build_graph(make_client(mode="lite"), ScriptedChatModel.from_script(cat_answer))
    with pytest.raises(MissingContextError, match="user_id") as info:
        graph.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "x"}})
    assert info.value.field == "user_id" and "configurable" in str(info.value)


def test_remember_keeps_tool_calls_and_waits_for_the_end_of_the_turn(make_client) -> None:
    client = make_client(mode="lite")
    remember = create_remember_node(client, scene="working")
    config = {"configurable": {"user_id": "u1", "thread_id": "s1"}}
    call = AIMessage(content="", tool_calls=[{"name": "export_pdf", "args": {"path": "q3.xlsx"}, "id": "c1"}])
    unfinished = {"messages": [HumanMessage("Export the Q3 sheet to PDF"), call]}
    assert remember.invoke(unfinished, config) == {}
    # min_score=0: any fact closer than unrelated text (the hashing test embedding scores
    # a short request against a whole lite fact below the default gate).
    search = {"scene": "working", "user_ids": ["u1"], "min_score": 0.0}
    assert client.search("Export the Q3 sheet to PDF", **search)["facts"] == []
    finished = {"messages": [*unfinished["messages"], ToolMessage("saved q3.pdf", tool_call_id="c1"),
                             AIMessage("Done: q3.pdf")]}
    remember.invoke(finished, config)
    facts = client.search("Export the Q3 sheet to PDF", **search)["facts"]
    assert len(facts) == 1 and "export_pdf" in facts[0]["details"] + facts[0]["statement"]


def test_a_plain_messages_state_model_sees_the_memory_and_history_keeps_one_block(make_client) -> None:
    client = make_client(mode="lite")
    model = ScriptedChatModel.from_script(cat_answer)
    graph = build_graph(client, model, keep_in_history=True, plain=True)
    ask(graph, "My cat is called Miso.", thread="t1", user="alice")
    for _ in range(3):
        out = ask(graph, "What is my cat called?", thread="t2", user="alice")
        assert out["messages"][-1].content == "Your cat is called Miso."
        assert "My cat is called Miso." in system_text(model.prompts[-1])
    history = graph.get_state({"configurable": {"thread_id": "t2"}}).values["messages"]
    blocks = [m for m in history if isinstance(m, SystemMessage)]
    assert [m.id for m in blocks] == ["hy_memory:recall_memories"]
    assert history[0].id == "hy_memory:recall_memories"
    assert [type(m) for m in history[1:]] == [HumanMessage, AIMessage] * 3
    # A turn that recalls nothing removes the stale block instead of keeping it.
    ask(graph, "zzz qqq", thread="t4", user="bob")
    bob = graph.get_state({"configurable": {"thread_id": "t4"}}).values["messages"]
    assert not any(isinstance(m, SystemMessage) for m in bob)


def test_the_history_block_follows_the_apps_own_system_message(make_client) -> None:
    client = make_client(mode="lite")
    client.add("I live in Porto", user_id="u1")
    recall = create_recall_node(client)
    first = SystemMessage("You are terse.", id="sys")
    out = recall.invoke({"messages": [first, HumanMessage("Where do I live?", id="h")]},
                        {"configurable": {"user_id": "u1"}})
    update = out["messages"]
    assert [m.id for m in update[1:]] == ["sys", "hy_memory:recall_memories", "h"]
    assert "I live in Porto" in str(update[2].content) and update[1].content == "You are terse."


def test_recall_without_a_user_message_passes_the_history_through(make_client) -> None:
    recall = create_recall_node(make_client(mode="lite"))
    history = [SystemMessage("You are terse.")]
    assert recall.invoke({"messages": history}, {"configurable": {}}) == {"llm_input_messages": history}


def test_recall_merges_into_a_leading_system_message(make_client) -> None:
    client = make_client(mode="lite")
    client.add("I live in Porto", user_id="u1")
    recall = create_recall_node(client)
    out = recall.invoke({"messages": [SystemMessage("You are terse."), HumanMessage("Where do I live?")]},
                        {"configurable": {"user_id": "u1"}})["llm_input_messages"]
    assert len(out) == 2 and out[0].content.startswith("You are terse.") and "Porto" in out[0].content


@pytest.mark.parametrize("bad", [{"scene": "office"}, {"k": 0}])
def test_bad_arguments_are_refused_when_the_node_is_built(make_client, bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(bad))):
        create_recall_node(make_client(mode="lite"), **bad)


def test_recall_makes_no_llm_call_in_pro_mode(make_client) -> None:
    model = RaisingChatModel.create()
    client = make_client(mode="pro", llm=model)
    client.context.chat_repo.create("u1", "The user's cat is called Miso", request_id="seed")
    out = create_recall_node(client).invoke({"messages": [HumanMessage("what is my cat called?")]},
                                            {"configurable": {"user_id": "u1"}})
    assert "Miso" in out["llm_input_messages"][0].content and model.call_count == 0
