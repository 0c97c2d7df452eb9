"""State of the write graph: the caller's arguments (``WriteArgs``, which the client
prepares with :func:`~hy_memory_langgraph.flows.write.prepare.prepare_write`) and the
state the graph runs on (``WriteState``: a ``PreparedWrite`` and what the nodes add)."""

from __future__ import annotations

from typing import Any

from hy_memory_langgraph.flows.contracts import PreparedWrite, WriteScope


class WriteArgs(WriteScope, total=False):
    """The arguments of ``client.add`` (and the request id the client chose, so the
    pipeline log can be flushed and read under it)."""

    messages: Any
    metadata: dict[str, Any] | None
    memory_at: Any


class WriteState(PreparedWrite, total=False):
    """State of the write graph (``ops``: what a lite chat write, a node of this graph,
    applied)."""

    ops: list[dict[str, Any]]
    result: dict[str, Any]
