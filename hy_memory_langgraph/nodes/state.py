"""Graph state schemas and the scene vocabulary."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, TypedDict

from hy_memory_langgraph.messages import Msg

__all__ = [
    "SCENES", "PRODUCTIVITY_SCENES", "SEARCH_MODES", "Scene",
    "WriteState", "SearchState",
]

Scene = Literal["chat", "working", "coding"]
SCENES: tuple[str, ...] = ("chat", "working", "coding")
PRODUCTIVITY_SCENES: tuple[str, ...] = ("working", "coding")
SEARCH_MODES: tuple[str, ...] = ("default", "agentic")


class WriteState(TypedDict, total=False):
    """State of the write graph (``client.add``)."""

    # input
    messages: Any
    scene: str | None
    user_id: str
    agent_id: str | None
    session_id: str | None
    workspace_id: str | None
    branch: str | None
    metadata: dict[str, Any]
    memory_at: Any
    # derived
    request_id: str
    started: float
    at: datetime
    msgs: list[Msg]
    route: str
    route_reason: str
    # chat pipeline
    facts: list[dict[str, Any]]
    candidates: list[Any]
    decisions: list[dict[str, Any]]
    fallback: str | None
    # output
    result: dict[str, Any]


class SearchState(TypedDict, total=False):
    """State of the search graph (``client.search``)."""

    query: str | None
    queries: list[str] | None
    scene: str | None
    search_mode: str
    user_ids: list[str]
    workspace_id: str | None
    branch: str | None
    limit: int
    min_score: float | None
    created_after: Any
    created_before: Any
    # derived
    multi: bool
    request_id: str
    started: float
    route: str
    analysis: str | None
    effective_query: str
    rewrite: str | None
    time_range: dict[str, Any]
    result: dict[str, Any]
