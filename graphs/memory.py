"""Deployable graphs for ``langgraph dev`` / LangGraph Studio (see ../langgraph.json).

Each graph wraps one client operation so it can be run and inspected from Studio:

* ``remember``: input ``{"messages": [...], "user_id": "...", "scene": null}`` → the write result.
* ``recall``: input ``{"query": "...", "user_ids": ["..."], "limit": 5}`` → the search result.

The client is created from the environment on first use (lite mode and the embedded
embeddings unless ``OPENAI_API_KEY`` is set; files under ``MEMORY_DATA_DIR``).
"""

from __future__ import annotations

import functools
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from hy_memory_langgraph import HyMemoryClient


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


def _remember(state: RememberState) -> dict[str, Any]:
    return {"result": client().add(state["messages"], scene=state.get("scene"), user_id=state["user_id"],
                                   session_id=state.get("session_id"))}


def _recall(state: RecallState) -> dict[str, Any]:
    return {"result": client().search(state["query"], scene=state.get("scene"), user_ids=state["user_ids"],
                                      limit=state.get("limit", 5))}


def _single(state: type, name: str, node: Any) -> Any:
    builder = StateGraph(state)
    builder.add_node(name, node)
    builder.add_edge(START, name)
    builder.add_edge(name, END)
    return builder.compile(name=name)


remember = _single(RememberState, "remember", _remember)
recall = _single(RecallState, "recall", _recall)
