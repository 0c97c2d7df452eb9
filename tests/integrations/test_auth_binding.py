"""Runs a LangGraph server authenticated are bound to their user's memory.

The server (``langgraph_api``, with ``auth`` in ``langgraph.json``) puts the authenticated
user in ``config["configurable"]``: ``langgraph_auth_user`` (the user object, or its dict
once serialised for a worker), ``langgraph_auth_user_id`` and ``langgraph_auth_permissions``.
These tests give runs that configurable, as the server does, and check that no face lets a
caller reach another user's memory by naming them.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph_api.auth.studio_user import StudioUser

from hy_memory_langgraph import ForeignUserError
from hy_memory_langgraph.integrations import (
    HyMemoryMiddleware,
    MemoryState,
    HyMemoryRetriever,
    create_memory_tools,
    create_recall_node,
    create_remember_node,
    resolve_scope,
)
from hy_memory_langgraph.integrations.scope import ANY_USER_PERMISSION, authenticated_user
from hy_memory_langgraph.testing import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[2]


class _User:
    """A starlette-style user object, as the in-memory server passes it."""

    def __init__(self, identity: str, permissions: list[str] | None = None) -> None:
        self.identity, self.permissions, self.is_authenticated = identity, permissions or [], True


def _signed_in(user: Any, identity: str = "alice", permissions: list[str] | None = None,
               **configurable: Any) -> dict[str, Any]:
    return {"configurable": {"langgraph_auth_user": user, "langgraph_auth_user_id": identity,
                             "langgraph_auth_permissions": permissions or [], **configurable}}


ALICE = _signed_in(_User("alice"))
ALICE_AS_DICT = _signed_in({"identity": "alice", "is_authenticated": True, "permissions": []})


@pytest.mark.parametrize("config", [ALICE, ALICE_AS_DICT], ids=["object", "dict"])
def test_an_authenticated_run_is_bound_to_its_user(config: dict[str, Any]) -> None:
    assert authenticated_user(config) == "alice"
    assert resolve_scope(None, config, what="t").user_id == "alice"  # no user_id needed
    assert resolve_scope({"user_id": "alice"}, config, what="t").user_id == "alice"
    for context, extra in [({"user_id": "bob"}, {}), (None, {"user_id": "bob"})]:
        run = {"configurable": {**config["configurable"], **extra}}
        with pytest.raises(ForeignUserError, match="authenticated as 'alice'"):
            resolve_scope(context, run, what="t")
    with pytest.raises(ForeignUserError):
        resolve_scope(None, config, what="t", defaults={"user_id": "bob"})


@pytest.mark.parametrize("config", [
    {"configurable": {"user_id": "bob"}},  # no auth at all
    _signed_in(StudioUser("dev", is_authenticated=True), "dev", user_id="bob"),  # Studio's developer
    _signed_in({"identity": "", "is_authenticated": False}, "", user_id="bob"),  # unauthenticated
    _signed_in(_User("svc"), "svc", [ANY_USER_PERMISSION], user_id="bob"),  # a service for its users
], ids=["no-auth", "studio", "anonymous", "any-user-permission"])
def test_runs_without_a_bound_user_name_users_as_before(config: dict[str, Any]) -> None:
    assert authenticated_user(config) is None
    assert resolve_scope(None, config, what="t").user_id == "bob"


def _memory_graph(client: Any) -> Any:
    model = ScriptedChatModel.from_script(lambda messages: "Noted.")
    builder = StateGraph(MemoryState)
    builder.add_node("recall", create_recall_node(client, k=3))
    builder.add_node("model", lambda state: {"messages": [model.invoke(state["llm_input_messages"])]})
    builder.add_node("remember", create_remember_node(client))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "model")
    builder.add_edge("model", "remember")
    builder.add_edge("remember", END)
    return builder.compile()


def test_memory_nodes_write_the_authenticated_users_memory_and_refuse_another(make_client) -> None:
    client = make_client(mode="lite")
    client.add("Bob's locker number is 8842", user_id="bob")
    graph = _memory_graph(client)
    graph.invoke({"messages": [HumanMessage("My cat is called Miso")]}, ALICE)
    assert any("Miso" in m["content"] for m in client.search("cat", user_ids=["alice"])["memories"])
    with pytest.raises(ForeignUserError):
        graph.invoke({"messages": [HumanMessage("What is my locker number?")]},
                     {"configurable": {**ALICE["configurable"], "user_id": "bob"}})
    assert not any("Miso" in m["content"] for m in client.search("cat", user_ids=["bob"])["memories"])


def test_tools_retriever_and_middleware_follow_the_authenticated_user(make_client) -> None:
    client = make_client(mode="lite")
    client.add("Bob's locker number is 8842", user_id="bob")
    client.add("Alice's locker number is 7731", user_id="alice")
    search = create_memory_tools(client)[0]
    call = {"name": "search_memory", "args": {"query": "locker number"}, "id": "c1", "type": "tool_call"}
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode([search]))
    graph.add_edge(START, "tools")
    tools = graph.compile()
    out = tools.invoke({"messages": [AIMessage("", tool_calls=[call])]}, ALICE)
    assert "7731" in out["messages"][-1].content and "8842" not in out["messages"][-1].content
    with pytest.raises(ForeignUserError):
        tools.invoke({"messages": [AIMessage("", tool_calls=[call])]}, ALICE, context={"user_id": "bob"})
    retriever = HyMemoryRetriever(client=client)
    assert "7731" in retriever.invoke("locker number", ALICE)[0].page_content
    with pytest.raises(ForeignUserError):
        retriever.invoke("locker number", ALICE, user_id="bob")
    spoofing = HyMemoryMiddleware(client, user_id=lambda runtime: runtime.context["user"], remember=False)
    agent = create_agent(ScriptedChatModel.from_script(["ok"]), tools=[], middleware=[spoofing],
                         context_schema=dict)
    with pytest.raises(ForeignUserError):
        agent.invoke({"messages": [{"role": "user", "content": "locker?"}]}, ALICE, context={"user": "bob"})


def test_the_deployable_graphs_are_bound_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "d"))
    spec = importlib.util.spec_from_file_location("hy_deploy_graphs_auth", ROOT / "graphs" / "memory.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "hy_deploy_graphs_auth", module)
    spec.loader.exec_module(module)
    try:
        module.remember.invoke({"messages": [{"role": "user", "content": "I collect vinyl records"}]}, ALICE)
        module.remember.invoke({"messages": [{"role": "user", "content": "Bob collects stamps"}],
                                "user_id": "bob"})  # a run without auth names its user
        found = module.recall.invoke({"query": "collect"}, ALICE)["result"]["memories"]
        assert [m["content"] for m in found] == ["I collect vinyl records"]
        with pytest.raises(ForeignUserError):
            module.recall.invoke({"query": "collect", "user_ids": ["alice", "bob"]}, ALICE)
    finally:
        module.client().close()
