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

**A run the LangGraph server authenticated** (a deployment with ``auth`` in
``langgraph.json``) is bound to its user: the server puts the user in
``config["configurable"]`` (``langgraph_auth_user``, ``langgraph_auth_user_id``), so it is
this user's memory whatever the caller sends, and a ``user_id`` naming anyone else (in the
context, the configurable, an argument) raises :class:`~hy_memory_langgraph.errors.ForeignUserError`:
an API caller cannot read or write another user's memory by naming them. Studio's
developer user and unauthenticated runs are not bound. A user whose permissions hold
:data:`ANY_USER_PERMISSION` (a service acting for its own end users) names the user as
before.

Example:
    >>> resolve_scope({"user_id": "u1"}, {"configurable": {"thread_id": "t9"}}, what="recall")
    MemoryScope(user_id='u1', session_id='t9', workspace_id=None, branch=None)
    >>> signed_in = {"identity": "alice", "is_authenticated": True}
    >>> resolve_scope(None, {"configurable": {"langgraph_auth_user": signed_in,
    ...                                       "langgraph_auth_user_id": "alice"}}, what="recall").user_id
    'alice'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.config import get_config
from langgraph.runtime import get_runtime

from hy_memory_langgraph.errors import ForeignUserError, MissingContextError

__all__ = ["ANY_USER_PERMISSION", "MemoryScope", "authenticated_user", "bind_users", "current_config",
           "current_context", "resolve_scope"]

#: A LangGraph auth permission that lets an authenticated user name any memory user.
ANY_USER_PERMISSION = "hy_memory:any_user"

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
    bound = authenticated_user(config)
    if bound is not None:
        named = {str(v) for s in sources if (v := _lookup(s, "user_id")) is not None and str(v).strip()}
        user_id = bind_users(sorted(named), config, what=what)[0] if named else bound
    if user_id is None:
        raise MissingContextError(
            f"{what} needs user_id and found none: pass it in the runtime context "
            "(graph.invoke(..., context={'user_id': ...}) with context_schema) or in "
            "config={'configurable': {'user_id': ...}}, or build it with user_id=...", field="user_id")
    return MemoryScope(user_id=user_id, **values)


def authenticated_user(config: Mapping[str, Any] | None) -> str | None:
    """The user a LangGraph server authenticated for this run, whose memory the run is
    bound to; ``None`` for a run without one, Studio's developer user, or a user holding
    :data:`ANY_USER_PERMISSION`."""
    configurable = (config or {}).get("configurable") or {}
    user = configurable.get("langgraph_auth_user")
    identity = configurable.get("langgraph_auth_user_id")
    if user is None or not isinstance(identity, str) or not identity.strip():
        return None
    if not _lookup(user, "is_authenticated") or _lookup(user, "kind") == "StudioUser" \
            or type(user).__name__ == "StudioUser":
        return None
    permissions = configurable.get("langgraph_auth_permissions") or _lookup(user, "permissions") or ()
    return None if ANY_USER_PERMISSION in permissions else identity


def bind_users(requested: list[str], config: Mapping[str, Any] | None, *, what: str) -> list[str]:
    """``requested`` users, checked against the run's authenticated user (see the module
    docstring): ``[that user]`` for an empty request or one naming only them.

    Raises:
        ForeignUserError: The run is bound to a user and ``requested`` names another.
    """
    bound = authenticated_user(config)
    if bound is None:
        return requested
    foreign = [u for u in requested if u != bound]
    if foreign:
        raise ForeignUserError(
            f"{what} asked for the memory of {foreign[0]!r}, but this run is authenticated as "
            f"{bound!r} and may only use that user's memory: leave user_id out (the run's user "
            f"is used), or grant the {ANY_USER_PERMISSION!r} permission to services that act "
            "for their own users")
    return [bound]
