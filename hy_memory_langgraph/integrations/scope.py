"""Whose memory a node or tool works on: read from the run, never hard-coded.

Each value is looked up in the runtime context first (``graph.invoke(..., context=...)``
with a ``context_schema``: a dict, a dataclass or a pydantic model), then in
``config["configurable"]``, then in the face's own defaults (the ``user_id`` a retriever
or middleware was built with); an argument of the call itself (``retriever.invoke(q,
user_id=...)``) comes before all of them:

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

from langgraph.config import get_config
from langgraph.runtime import get_runtime

from hy_memory_langgraph.errors import MissingContextError

__all__ = ["MemoryScope", "current_config", "current_context", "resolve_scope"]

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


def current_context() -> Any:
    """``runtime.context`` of the LangGraph run this is called in (``None`` outside one)."""
    try:
        return get_runtime().context
    except (RuntimeError, KeyError, AttributeError):
        return None


def current_config() -> Mapping[str, Any] | None:
    """The ``RunnableConfig`` of the run this is called in (``None`` outside one)."""
    try:
        return get_config()
    except RuntimeError:
        return None


def resolve_scope(context: Any, config: Mapping[str, Any] | None, *, what: str,
                  defaults: Mapping[str, Any] | None = None) -> MemoryScope:
    """The scope of one call, from the runtime ``context``, the run's ``config`` and the
    caller's ``defaults``, in that order.

    Args:
        context: ``runtime.context`` (dict, dataclass, pydantic model or ``None``).
        config: The ``RunnableConfig`` of the run (``None`` outside a run).
        what: The node or tool asking, named in the error.
        defaults: Values the face was built with (``user_id``, ``workspace_id``, ...).

    Raises:
        MissingContextError: No ``user_id`` in any of them.
    """
    configurable = (config or {}).get("configurable") or {}
    sources = (context, configurable, defaults)
    values = {name: _first(sources, names) for name, names in _ALIASES.items()}
    user_id = values.pop("user_id")
    if user_id is None:
        raise MissingContextError(
            f"{what} needs user_id and found none: pass it in the runtime context "
            "(graph.invoke(..., context={'user_id': ...}) with context_schema) or in "
            "config={'configurable': {'user_id': ...}}, or build it with user_id=...", field="user_id")
    return MemoryScope(user_id=user_id, **values)
