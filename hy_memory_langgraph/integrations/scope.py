"""Whose memory a node or tool works on: read from the run, never hard-coded.

Each value is looked up in the runtime context first (``graph.invoke(..., context=...)``
with a ``context_schema``: a dict, a dataclass or a pydantic model), then in
``config["configurable"]``:

| value | runtime context | ``config["configurable"]`` |
|---|---|---|
| ``user_id`` (required) | ``user_id`` | ``user_id`` |
| ``session_id`` | ``session_id``, else ``thread_id`` | ``session_id``, else ``thread_id`` |
| ``workspace_id`` | ``workspace_id`` | ``workspace_id`` |
| ``branch`` | ``branch`` | ``branch`` |

Example:
    >>> resolve_scope({"user_id": "u1"}, {"configurable": {"thread_id": "t9"}}, what="recall")
    MemoryScope(user_id='u1', session_id='t9', workspace_id=None, branch=None)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hy_memory_langgraph.errors import MissingContextError

__all__ = ["MemoryScope", "resolve_scope"]

_ALIASES: dict[str, tuple[str, ...]] = {
    "user_id": ("user_id",),
    "session_id": ("session_id", "thread_id"),
    "workspace_id": ("workspace_id",),
    "branch": ("branch",),
}


@dataclass(frozen=True)
class MemoryScope:
    """The user (and optional session, workspace, branch) one memory call is about."""

    user_id: str
    session_id: str | None = None
    workspace_id: str | None = None
    branch: str | None = None


def _lookup(source: Any, name: str) -> Any:
    if source is None:
        return None
    if isinstance(source, Mapping):
        return source.get(name)
    return getattr(source, name, None)


def _first(sources: tuple[Any, ...], names: tuple[str, ...]) -> str | None:
    for source in sources:
        for name in names:
            value = _lookup(source, name)
            if value is not None and str(value).strip():
                return str(value)
    return None


def resolve_scope(context: Any, config: Mapping[str, Any] | None, *, what: str) -> MemoryScope:
    """The scope of one call, from the runtime ``context`` and the run's ``config``.

    Args:
        context: ``runtime.context`` (dict, dataclass, pydantic model or ``None``).
        config: The ``RunnableConfig`` of the run (``None`` outside a run).
        what: The node or tool asking, named in the error.

    Raises:
        MissingContextError: No ``user_id`` in either place.
    """
    configurable = (config or {}).get("configurable") or {}
    sources = (context, configurable)
    values = {name: _first(sources, names) for name, names in _ALIASES.items()}
    user_id = values.pop("user_id")
    if user_id is None:
        raise MissingContextError(
            f"{what} needs user_id and found none: pass it in the runtime context "
            "(graph.invoke(..., context={'user_id': ...}) with context_schema) or in "
            "config={'configurable': {'user_id': ...}}", field="user_id")
    return MemoryScope(user_id=user_id, **values)
