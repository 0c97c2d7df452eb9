"""State of the search graph: the caller's arguments (``SearchArgs``, which the client
prepares with :func:`~hy_memory_langgraph.flows.search.prepare.prepare_search`) and the
state the graph runs on (``SearchState``)."""

from __future__ import annotations

from typing import Any, TypedDict

from hy_memory_langgraph.flows.contracts import PreparedSearch

SEARCH_MODES: tuple[str, ...] = ("default", "agentic")


class SearchArgs(TypedDict, total=False):
    """The arguments of ``client.search`` (and its request id)."""

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
    """State of the search graph: a prepared search and its result."""

    result: dict[str, Any]
