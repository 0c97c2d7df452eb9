"""One rule for whose memory every face reads (:mod:`hy_memory_langgraph.integrations.scope`):
a face built for a user serves that user, outside a run, in a run naming no user or in
that user's run, and refuses a run naming another user; a face built without a user
follows the run (context first, then ``config["configurable"]``). Each face is run the
way applications run it: tools in a ``ToolNode``, the retriever as a node, the middleware
in ``create_agent``, the memory nodes in a graph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode

from hy_memory_langgraph.errors import ForeignUserError, MissingContextError
from hy_memory_langgraph.integrations import (
    HyMemoryMiddleware,
    HyMemoryRetriever,
    MemoryState,
    create_memory_tools,
    create_recall_node,
)
from hy_memory_langgraph.testing import ScriptedChatModel

LOCKERS = {"alice": "7731", "bob": "8842"}
QUESTION = "What is my locker number?"


def _graph(node: Any) -> Any:
    builder = StateGraph(MemoryState)  # MessagesState and the recall node's llm_input_messages
    builder.add_node("face", node)
    builder.add_edge(START, "face")
    builder.add_edge("face", END)
    return builder.compile()


def _tools(client: Any, user: str | None) -> Callable[..., str]:
    graph = _graph(ToolNode(create_memory_tools(client, user_id=user)[:1]))
    call = {"name": "search_memory", "args": {"query": "locker number"}, "id": "c1", "type": "tool_call"}
    return lambda **run: str(graph.invoke({"messages": [AIMessage("", tool_calls=[call])]}, **run)
                             ["messages"][-1].content)


def _retriever(client: Any, user: str | None) -> Callable[..., str]:
    retriever = HyMemoryRetriever(client=client, user_id=user, k=1)

    def node(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [AIMessage(retriever.invoke("locker number")[0].page_content)]}

    graph = _graph(node)
    return lambda **run: str(graph.invoke({"messages": [HumanMessage(QUESTION)]}, **run)["messages"][-1].content)


def _middleware(client: Any, user: str | None) -> Callable[..., str]:
    model = ScriptedChatModel.from_script(lambda messages: str(messages[0].content))  # echoes the block
    agent = create_agent(model, tools=[], middleware=[HyMemoryMiddleware(client, user_id=user, remember=False)],
                         context_schema=dict)
    return lambda **run: str(agent.invoke({"messages": [HumanMessage(QUESTION)]}, **run)["messages"][-1].content)


def _nodes(client: Any, user: str | None) -> Callable[..., str]:
    assert user is None  # the memory nodes have no user of their own
    graph = _graph(create_recall_node(client, k=1, keep_in_history=False))
    return lambda **run: str(graph.invoke({"messages": [HumanMessage(QUESTION)]}, **run)
                             ["llm_input_messages"][0].content)


BUILT_FOR_A_USER = {"tools": _tools, "retriever": _retriever, "middleware": _middleware}
EVERY_FACE = {**BUILT_FOR_A_USER, "nodes": _nodes}


@pytest.fixture
def client(make_client: Any) -> Any:
    client = make_client(mode="lite")
    for user, locker in LOCKERS.items():
        client.add(f"My locker number is {locker}", user_id=user)
    return client


def _reads(answer: str) -> str:
    found = [user for user, locker in LOCKERS.items() if locker in answer]
    assert len(found) == 1, answer
    return found[0]


@pytest.mark.parametrize("backend", ["memory"])
@pytest.mark.parametrize("face", BUILT_FOR_A_USER)
def test_a_face_built_for_alice_serves_alice_and_refuses_bobs_run(client: Any, face: str) -> None:
    ask = BUILT_FOR_A_USER[face](client, "alice")
    assert _reads(ask()) == "alice"  # a run that names no user
    assert _reads(ask(config={"configurable": {"user_id": "alice"}})) == "alice"
    assert _reads(ask(context={"user_id": "alice"})) == "alice"
    for run in ({"config": {"configurable": {"user_id": "bob"}}}, {"context": {"user_id": "bob"}}):
        with pytest.raises(ForeignUserError, match="built for user 'alice' but this run names user 'bob'"):
            ask(**run)


@pytest.mark.parametrize("backend", ["memory"])
@pytest.mark.parametrize("face", EVERY_FACE)
def test_a_face_built_without_a_user_follows_the_run(client: Any, face: str) -> None:
    ask = EVERY_FACE[face](client, None)
    assert _reads(ask(config={"configurable": {"user_id": "bob"}})) == "bob"
    assert _reads(ask(context={"user_id": "alice"}, config={"configurable": {"user_id": "bob"}})) == "alice"
    with pytest.raises(MissingContextError, match="user_id"):
        ask()


@pytest.mark.parametrize("backend", ["memory"])
def test_two_spellings_of_one_user_are_one_user_to_every_face(client: Any) -> None:
    client.add("My locker number is 5150", user_id="Zo\u00eb")
    for face in BUILT_FOR_A_USER.values():
        answer = face(client, "Zoe\u0308")(config={"configurable": {"user_id": "Zo\u00eb"}})
        assert "5150" in answer
