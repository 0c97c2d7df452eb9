"""State of the write graph: the caller's arguments (``WriteArgs``, which the client
prepares with :func:`~hy_memory_langgraph.flows.write.prepare.prepare_write`) and the
state the graph runs on (``WriteState``: a ``PreparedWrite`` and what the nodes add)."""

from __future__ import annotations

from typing import Any, TypedDict

from hy_memory_langgraph.flows.contracts import PreparedWrite


class WriteArgs(TypedDict, total=False):
    """The arguments of ``client.add`` (and the request id the client chose, so the
    pipeline log can be flushed and read under it)."""

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


class WriteState(PreparedWrite, total=False):
    """State of the write graph (``ops``: what a lite chat write, a node of this graph,
    applied)."""

    ops: list[dict[str, Any]]
    result: dict[str, Any]
