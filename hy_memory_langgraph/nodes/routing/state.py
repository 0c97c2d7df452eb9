"""State schemas of the two routing graphs (``client.add`` and ``client.search``).

Each graph takes the caller's arguments (``WriteArgs`` / ``SearchArgs``), its prepare
node validates and normalises them into the ``Prepared*`` keys that the scene
subgraphs take as input, and every graph returns only ``result``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

from hy_memory_langgraph.messages import Msg

__all__ = [
    "SEARCH_MODES", "PreparedSearch", "PreparedWrite", "ResultOutput", "SearchArgs",
    "SearchState", "WriteArgs", "WriteState",
]

SEARCH_MODES: tuple[str, ...] = ("default", "agentic")


class ResultOutput(TypedDict, total=False):
    """What every memory graph returns: the public result dict."""

    result: dict[str, Any]


class WriteArgs(TypedDict, total=False):
    """Input of the write graph: the arguments of ``client.add`` (and the request id the
    client chose, so the pipeline log can be flushed and read under it)."""

    request_id: str
    messages: Any
    scene: str | None
    user_id: str
    agent_id: str | None
    session_id: str | None
    workspace_id: str | None
    branch: str | None
    metadata: dict[str, Any] | None
    memory_at: Any


class PreparedWrite(TypedDict, total=False):
    """A validated write, the input of the chat and productivity subgraphs.

    ``route`` is the scene the write is stored under (``chat`` or a productivity
    scene), decided by ``prepare`` or the scene judge; ``route_reason`` says why.
    """

    request_id: str
    started: float
    user_id: str
    agent_id: str | None
    session_id: str | None
    workspace_id: str | None
    branch: str | None
    metadata: dict[str, Any]
    at: datetime
    msgs: list[Msg]
    route: str
    route_reason: str


class WriteState(PreparedWrite, total=False):
    """State of the write graph (``ops``: what a lite chat write, a node of this graph,
    applied)."""

    messages: Any
    scene: str | None
    memory_at: Any
    ops: list[dict[str, Any]]
    result: dict[str, Any]


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


class PreparedSearch(TypedDict, total=False):
    """A validated search, the input of the retrieval nodes.

    ``effective_query`` is what is searched (the last query, or its rewrite);
    ``route`` is the scene searched; ``created_after``/``created_before`` are the
    caller's range or the one the analysis found.
    """

    request_id: str
    started: float
    search_mode: str
    queries: list[str]
    effective_query: str
    user_ids: list[str]
    workspace_id: str | None
    branch: str | None
    limit: int
    min_score: float | None
    created_after: datetime | None
    created_before: datetime | None
    route: str
    analysis: str | None
    rewrite: str | None
    time_range: dict[str, Any]


class SearchState(PreparedSearch, total=False):
    """State of the search graph."""

    query: str | None
    scene: str | None
    multi: bool
    result: dict[str, Any]
