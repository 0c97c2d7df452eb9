"""State of the search graph: the caller's arguments (``SearchArgs``) and the state
the graph runs on (``SearchState``: a ``PreparedSearch`` and what it was made from)."""

from __future__ import annotations

from typing import Any, TypedDict

from hy_memory_langgraph.flows.contracts import PreparedSearch

__all__ = ["SEARCH_MODES", "SearchArgs", "SearchState"]

SEARCH_MODES: tuple[str, ...] = ("default", "agentic")


class SearchArgs(TypedDict, total=False):
    """Input of the search graph: the arguments of ``client.search`` (and its request id)."""

    request_id: str
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



class SearchState(PreparedSearch, total=False):
    """State of the search graph."""

    query: str | None
    scene: str | None
    multi: bool
    result: dict[str, Any]
