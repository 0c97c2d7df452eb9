"""Memory tools driven by a scripted model in ``create_agent`` and the prebuilt ReAct agent."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, ToolRuntime, create_react_agent
from langgraph.warnings import LangGraphDeprecatedSinceV10

from hy_memory_langgraph.errors import InvalidInputError, MissingContextError
from hy_memory_langgraph.fences import read_fences
from hy_memory_langgraph.integrations import create_memory_tools
from hy_memory_langgraph.testing import ScriptedChatModel


@dataclass
class Context:
    user_id: str


def tool_user(messages: list[BaseMessage]) -> AIMessage:
    """Saves what it is asked to remember, searches before answering, answers from the tool."""
    last = messages[-1]
    if isinstance(last, HumanMessage):
        text = str(last.content)
        if text.startswith("Remember"):
            call = {"name": "save_memory", "args": {"content": "The user's cat is called Miso."}, "id": "s1"}
        else:
            call = {"name": "search_memory", "args": {"query": "cat name"}, "id": "q1"}
        return AIMessage(content="", tool_calls=[call])
    assert isinstance(last, ToolMessage)
    if last.name == "save_memory":
        return AIMessage(content="Saved.")
    return AIMessage(content="Your cat is called Miso." if "Miso" in str(last.content)
                     else "I don't know your cat's name.")


def runtime(user: str | None) -> ToolRuntime:
    configurable = {} if user is None else {"user_id": user}
    return ToolRuntime(state={}, context=None, config={"configurable": configurable},
                       stream_writer=lambda _: None, tool_call_id="t", store=None)


def by_name(tools: list[Any]) -> dict[str, Any]:
    return {tool.name: tool for tool in tools}


def test_tools_in_create_agent_remember_across_threads_per_user(make_client) -> None:
    client = make_client(mode="lite")
    model = ScriptedChatModel.from_script(tool_user)
    agent = create_agent(model, tools=create_memory_tools(client), context_schema=Context)
    agent.invoke({"messages": [HumanMessage("Remember: my cat is Miso")]}, context=Context("alice"))
    out = agent.invoke({"messages": [HumanMessage("What is my cat called?")]}, context=Context("alice"))
    assert out["messages"][-1].content == "Your cat is called Miso."
    other = agent.invoke({"messages": [HumanMessage("What is my cat called?")]}, context=Context("bob"))
    assert other["messages"][-1].content == "I don't know your cat's name."
    saved = client.search("cat", user_ids=["alice"])["memories"]
    assert [m["content"] for m in saved] == ["The user's cat is called Miso."]
    assert saved[0]["metadata"] == {"saved_by": "save_memory"}


async def test_tools_in_the_prebuilt_agent_read_the_user_from_config(make_client) -> None:
    client = make_client(mode="lite")
    model = ScriptedChatModel.from_script(tool_user)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        agent = create_react_agent(model, create_memory_tools(client, include_forget=False))
    alice = {"configurable": {"user_id": "alice", "thread_id": "t1"}}
    await agent.ainvoke({"messages": [HumanMessage("Remember: my cat is Miso")]}, alice)
    out = await agent.ainvoke({"messages": [HumanMessage("What is my cat called?")]},
                              {"configurable": {"user_id": "alice", "thread_id": "t2"}})
    assert out["messages"][-1].content == "Your cat is called Miso."
    other = await agent.ainvoke({"messages": [HumanMessage("What is my cat called?")]},
                                {"configurable": {"user_id": "bob"}})
    assert other["messages"][-1].content == "I don't know your cat's name."
    assert client.search("cat", user_ids=["alice"])["memories"][0]["session_id"] == "t1"


def test_forget_only_deletes_the_users_own_memories(make_client) -> None:
    client = make_client(mode="lite")
    memory_id = client.add("My cat is called Miso", user_id="alice")["memory_ids"][0]
    forget = by_name(create_memory_tools(client))["forget_memory"]
    assert "No memory" in forget.invoke({"memory_id": memory_id, "runtime": runtime("bob")})
    assert client.get(memory_id) is not None
    assert forget.invoke({"memory_id": memory_id, "runtime": runtime("alice")}) == f'Forgot "{memory_id}".'
    assert client.get(memory_id) is None


def test_search_tool_lists_ids_and_respects_the_limit(make_client) -> None:
    client = make_client(mode="lite")
    for text in ("I like tea", "I like green tea", "I like black tea"):
        client.add(text, user_id="u1")
    search = by_name(create_memory_tools(client))["search_memory"]
    out = search.invoke({"query": "tea", "limit": 2, "runtime": runtime("u1")})
    [region] = read_fences(out)  # data: one JSON object per memory, with its id
    assert region.name == "memories" and len(region.rows) == 2
    assert all(row["id"] and "tea" in row["memory"] for row in region.rows)
    assert search.invoke({"query": "tea", "runtime": runtime("nobody")}) == "No memories found."


def test_tools_without_a_user_raise_a_named_error(make_client) -> None:
    search = by_name(create_memory_tools(make_client(mode="lite")))["search_memory"]
    with pytest.raises(MissingContextError, match="user_id"):
        search.invoke({"query": "tea", "runtime": runtime(None)})


def test_working_scene_search_renders_facts(make_client) -> None:
    client = make_client(mode="lite")
    trace = [{"role": "user", "content": "Export the Q3 sales sheet to PDF"},
             {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
              "function": {"name": "export_pdf", "arguments": "{\"path\": \"sales_q3.xlsx\"}"}}]},
             {"role": "tool", "tool_call_id": "c1", "content": "saved sales_q3.pdf"}]
    client.add(trace, scene="working", user_id="u1")
    search = by_name(create_memory_tools(client, scene="working"))["search_memory"]
    out = search.invoke({"query": "Q3 sales PDF", "runtime": runtime("u1")})
    rows = read_fences(out)[0].rows
    assert any("sales_q3" in row.get("fact", "") for row in rows) and all(row["id"] for row in rows)


def test_the_schema_describes_every_argument_and_bounds_the_limit(make_client) -> None:
    for tools in (create_memory_tools(make_client(mode="lite")),
                  create_memory_tools(make_client(mode="lite"), user_id="u1")):
        schemas = {t.name: t.tool_call_schema.model_json_schema() for t in tools}
        for schema in schemas.values():
            assert all(p.get("description") for p in schema["properties"].values())
            assert "runtime" not in schema["properties"] and "user_id" not in schema["properties"]
        bounded = schemas["search_memory"]["properties"]["limit"]["anyOf"][0]
        assert (bounded["minimum"], bounded["maximum"]) == (1, 20)


async def test_bound_tools_work_outside_a_tool_node_for_their_user_only(make_client) -> None:
    client = make_client(mode="lite")
    client.add("My cat is called Miso.", user_id="alice")
    client.add("My cat is called Tom.", user_id="bob")
    search, save, forget = create_memory_tools(client, user_id="alice")
    found = search.invoke({"query": "cat", "limit": 5})
    assert "Miso" in found and "Tom" not in found
    # an extra argument a model might invent does not change whose memory it is
    assert "Tom" not in search.invoke({"query": "cat", "user_id": "bob"})
    assert (await save.ainvoke({"content": "Alice's dog is called Rex."})).startswith("Saved")
    assert "Rex" in await search.ainvoke({"query": "dog"})
    bob_id = client.search("cat", user_ids=["bob"])["memories"][0]["memory_id"]
    assert forget.invoke({"memory_id": bob_id}).startswith("No memory")
    assert client.get(bob_id) is not None


def test_a_limit_out_of_bounds_goes_back_to_the_model_as_a_tool_error(make_client) -> None:
    search = create_memory_tools(make_client(mode="lite"), user_id="u1")[0]
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([search]))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    call = AIMessage("", tool_calls=[{"name": "search_memory", "args": {"query": "x", "limit": 99}, "id": "c1"}])
    reply = builder.compile().invoke({"messages": [call]})["messages"][-1]
    assert reply.status == "error" and "20" in str(reply.content)


def test_scope_values_without_a_user_are_refused(make_client) -> None:
    with pytest.raises(InvalidInputError, match="user_id"):
        create_memory_tools(make_client(mode="lite"), workspace_id="w1")
    with pytest.raises(InvalidInputError, match="k="):
        create_memory_tools(make_client(mode="lite"), k=50)
