"""Deployable graphs for ``langgraph dev`` / LangGraph Studio (see ../langgraph.json).

Each graph wraps one client operation so it can be run and inspected from Studio:

* ``remember``: input ``{"messages": [...], "user_id": "...", "scene": null}`` → the write result.
* ``recall``: input ``{"query": "...", "user_ids": ["..."], "limit": 5}`` → the search result.

The client is created from the environment on first use (lite mode and the embedded
embeddings unless ``OPENAI_API_KEY`` is set; files under ``MEMORY_DATA_DIR``). On a server
with auth, a run is bound to its authenticated user: ``user_id`` / ``user_ids`` may be left
out, and naming another user raises ``ForeignUserError``
(``hy_memory_langgraph.integrations.scope``).
"""

from __future__ import annotations

import functools
from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from hy_memory_langgraph import HyMemoryClient
from hy_memory_langgraph.integrations.scope import bind_users


@functools.cache
def client() -> HyMemoryClient:
    return HyMemoryClient()


class RememberState(TypedDict, total=False):
    messages: list[Any]
    user_id: str
    scene: str | None
    session_id: str | None
    result: dict[str, Any]


class RecallState(TypedDict, total=False):
    query: str
    user_ids: list[str]
    scene: str | None
    limit: int
    result: dict[str, Any]


def _remember(state: RememberState, config: RunnableConfig) -> dict[str, Any]:
    users = bind_users([state["user_id"]] if state.get("user_id") else [], config, what="remember")
    return {"result": client().add(state["messages"], scene=state.get("scene"), user_id=(users or [None])[0],
                                   session_id=state.get("session_id"))}


def _recall(state: RecallState, config: RunnableConfig) -> dict[str, Any]:
    users = bind_users(list(state.get("user_ids") or []), config, what="recall")
    return {"result": client().search(state["query"], scene=state.get("scene"), user_ids=users or None,
                                      limit=state.get("limit", 5))}


def _single(state: type, name: str, node: Any) -> Any:
    builder = StateGraph(state)
    builder.add_node(name, node)
    builder.add_edge(START, name)
    builder.add_edge(name, END)
    return builder.compile(name=name)


remember = _single(RememberState, "remember", _remember)
recall = _single(RecallState, "recall", _recall)
