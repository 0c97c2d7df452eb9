"""The agent faces queue their writes by default in pro mode and write at once in lite
mode; ``background=False`` keeps the synchronous write. The write is found at once
either way."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypedDict

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import Annotated

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.integrations import HyMemoryMiddleware, create_remember_node
from hy_memory_langgraph.integrations.mcp_server import build_mcp_server
from hy_memory_langgraph.testing import ScriptedChatModel
from tests.background.support import chat_replies, fact
from tests.productivity.support import tool_trace


class _State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _client(make_client: Callable[..., HyMemoryClient], mode: str) -> tuple[HyMemoryClient, ScriptedChatModel]:
    model = ScriptedChatModel.from_stages({**chat_replies([fact("The user's cat is called Miso")]),
                                           "coding_extract": {"experiences": [], "fact": {
                                               "subject": "search.py", "statement": "raised the timeout",
                                               "files": [], "details": ""}}})
    return make_client(mode, model if mode == "pro" else None, background_delay_s=3600.0), model


def _turn() -> dict[str, Any]:
    return {"messages": [HumanMessage("My cat is called Miso"), AIMessage("Nice name!")]}


def _written_now(client: HyMemoryClient) -> bool:
    return bool(client.list_memories("u1")["memories"])


@pytest.mark.parametrize(("mode", "background", "queued"), [
    ("pro", None, True), ("pro", False, False), ("lite", None, False)])
def test_the_remember_node(make_client: Callable[..., HyMemoryClient], mode: str, background: bool | None,
                           queued: bool) -> None:
    client, model = _client(make_client, mode)
    options = {} if background is None else {"background": background}
    graph = StateGraph(_State).add_node("remember", create_remember_node(client, **options))
    graph = graph.add_edge(START, "remember").compile()
    graph.invoke(_turn(), {"configurable": {"user_id": "u1", "thread_id": "t1"}})
    assert [p["state"] for p in client.pending()] == (["queued"] if queued else [])
    assert _written_now(client) is not queued and model.call_count == (1 if mode == "pro" and not queued else 0)
    assert client.search("cat called Miso", user_ids=["u1"])["memories"]  # found either way
    asyncio.run(graph.ainvoke(_turn(), {"configurable": {"user_id": "u1", "thread_id": "t1"}}))
    assert len(client.pending()) == (2 if queued else 0)
    client.flush()
    assert _written_now(client)


@pytest.mark.parametrize(("mode", "background", "queued"), [
    ("pro", None, True), ("pro", False, False), ("lite", None, False)])
def test_the_middleware(make_client: Callable[..., HyMemoryClient], mode: str, background: bool | None,
                        queued: bool) -> None:
    client, _ = _client(make_client, mode)
    options = {} if background is None else {"background": background}
    agent = create_agent(ScriptedChatModel.from_script(["Nice name!", "Still Miso."]), tools=[],
                         middleware=[HyMemoryMiddleware(client, user_id="u1", **options)])
    agent.invoke({"messages": [{"role": "user", "content": "My cat is called Miso"}]})
    assert [p["state"] for p in client.pending()] == (["queued"] if queued else [])
    assert _written_now(client) is not queued
    asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "What is my cat called?"}]}))
    assert len(client.pending()) == (2 if queued else 0)


@pytest.mark.parametrize(("mode", "background", "queued"), [
    ("pro", None, True), ("pro", False, False), ("lite", None, False)])
def test_the_mcp_tools(make_client: Callable[..., HyMemoryClient], mode: str, background: bool | None,
                       queued: bool) -> None:
    pytest.importorskip("mcp")
    client, _ = _client(make_client, mode)
    options = {} if background is None else {"background": background}
    server = build_mcp_server(client, user_id="u1", session_id="s1", workspace_id="github.com/example/svc",
                              **options)

    from mcp.shared.memory import create_connected_server_and_client_session

    async def calls() -> list[str]:
        async with create_connected_server_and_client_session(server) as session:
            texts = []
            for name, args in (("save_memory", {"content": "My cat is called Miso."}),
                               ("record_work", {"scene": "coding", "messages": tool_trace()}),
                               ("search_memory", {"query": "what is my cat called?"})):
                result = await session.call_tool(name, args)
                texts.append(" ".join(b.text for b in result.content if b.type == "text"))
            return texts

    saved, recorded, found = asyncio.run(calls())
    assert saved.startswith("Queued") is queued and recorded.startswith("Queued") is queued, (saved, recorded)
    assert [p["state"] for p in client.pending()] == (["queued", "queued"] if queued else [])
    assert "Miso" in found
    client.flush()
    assert client.list_memories("u1", scene="coding")["memories"] and client.list_memories("u1", scene="chat")["memories"]
