"""What the memory graphs take, hand to the graph families, and return.

The client validates and normalises the caller's arguments (redacting secrets) into a
``PreparedWrite`` / ``PreparedSearch`` before a graph runs; the write and search graphs
start at routing and hand the prepared state to the chat and productivity subgraphs;
every memory graph returns only ``result`` (``ResultOutput``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from typing import Any, TypedDict

from hy_memory_langgraph.messages.types import Msg


class ResultOutput(TypedDict, total=False):
    """What every memory graph returns: the public result dict."""

    result: dict[str, Any]


def ops_summary(ops: Iterable[dict[str, Any]], names: Iterable[str]) -> dict[str, int]:
    """Count a result's ops by their ``op`` field, every name in ``names`` present."""
    counts = Counter(op["op"] for op in ops)
    summary = {name: counts.get(name, 0) for name in names}
    for name, count in counts.items():
        summary.setdefault(name, count)
    return summary


class WriteScope(TypedDict, total=False):
    """What a write's arguments (``WriteArgs``) and its prepared state share."""

    request_id: str
    scene: str | None
    user_id: str
    agent_id: str | None
    session_id: str | None
    workspace_id: str | None
    branch: str | None


class PreparedWrite(WriteScope, total=False):
    """A validated write: the input of the write graph and of its chat and productivity
    subgraphs.

    ``scene`` is the caller's (validated) scene; ``route`` the scene the write is stored
    under (``chat`` or a productivity scene), decided by the ``route`` node or the scene
    judge; ``route_reason`` says why. ``run_id`` is set when a background worker runs the
    write (:mod:`hy_memory_langgraph.services.journal`: its writing nodes apply once).
    """

    run_id: str
    started: float
    metadata: dict[str, Any]
    at: datetime
    msgs: list[Msg]
    route: str
    route_reason: str


class PreparedSearch(TypedDict, total=False):
    """A validated search: the input of the search graph and of its retrieval nodes.

    ``scene`` is the caller's (validated) scene and ``multi`` whether several queries were
    given; ``effective_query`` is what is searched (the last query, or its rewrite);
    ``route`` is the scene searched; ``created_after``/``created_before`` are the
    caller's range or the one the analysis found.
    """

    request_id: str
    started: float
    scene: str | None
    multi: bool
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
