"""Whose memory a node, tool, retriever or middleware works on: one rule for every face.

**The user** of a call is the one user its sources name, and every source that names
one must name the same (the comparison is of ids as :mod:`hy_memory_langgraph.ids`
checks them):

1. the run's user: the user a LangGraph server authenticated for the run (binding:
   see below), else ``user_id`` in the runtime context (``graph.invoke(..., context=...)``
   with a ``context_schema``: a dict, a dataclass or a pydantic model), else
   ``config["configurable"]["user_id"]``;
2. the face's own user: the ``user_id`` it was built with (``create_memory_tools(client,
   user_id=...)``, ``HyMemoryRetriever(user_id=...)``, ``HyMemoryMiddleware(client,
   user_id=...)`` or the user its resolver function returns), or the retriever call's
   ``invoke(q, user_id=...)``.

A face built for ``alice`` serves ``alice``: outside a run, in a run that names no user,
or in a run of ``alice``; in a run naming ``bob`` it raises
:class:`~hy_memory_langgraph.errors.ForeignUserError` (tools, retriever and middleware
alike), never reading or writing either memory. A face built without a user follows the
run; with no user anywhere it raises :class:`~hy_memory_langgraph.errors.MissingContextError`.
The memory nodes take no user of their own: they follow the run.

The other values are looked up in the runtime context first, then in
``config["configurable"]``, then in the face's own values:

| value | runtime context | ``config["configurable"]`` |
|---|---|---|
| ``session_id`` | ``session_id``, else ``thread_id`` | ``session_id``, else ``thread_id`` |
| ``workspace_id`` | ``workspace_id`` | ``workspace_id`` |
| ``branch`` | ``branch`` | ``branch`` |

**A run the LangGraph server authenticated** (a deployment with ``auth`` in
``langgraph.json``) is bound to its user: the server puts the user in
``config["configurable"]`` (``langgraph_auth_user``, ``langgraph_auth_user_id``), so it is
this user's memory whatever the caller sends, and a ``user_id`` naming anyone else (in the
context, the configurable, the face, an argument) raises ``ForeignUserError``: an API
caller cannot read or write another user's memory by naming them. Studio's developer user
and unauthenticated runs are not bound. A user whose permissions hold
:data:`ANY_USER_PERMISSION` (a service acting for its own end users) names the user as
before.

Example:
    >>> resolve_scope({"user_id": "u1"}, {"configurable": {"thread_id": "t9"}}, what="recall")
    MemoryScope(user_id='u1', session_id='t9', workspace_id=None, branch=None)
    >>> signed_in = {"identity": "alice", "is_authenticated": True}
    >>> resolve_scope(None, {"configurable": {"langgraph_auth_user": signed_in,
    ...                                       "langgraph_auth_user_id": "alice"}}, what="recall").user_id
    'alice'
    >>> resolve_scope(None, {"configurable": {"user_id": "bob"}}, what="HyMemoryRetriever",
    ...               defaults={"user_id": "alice"})
    Traceback (most recent call last):
    ...
    hy_memory_langgraph.errors.ForeignUserError: HyMemoryRetriever was built for user 'alice' but this run names user 'bob'...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.config import get_config
from langgraph.runtime import get_runtime

from hy_memory_langgraph.errors import ForeignUserError, MissingContextError
from hy_memory_langgraph.ids import require_id

#: A LangGraph auth permission that lets an authenticated user name any memory user.
ANY_USER_PERMISSION = "hy_memory:any_user"

#: Where each value other than the user is looked up, in each source.
_ALIASES: dict[str, tuple[str, ...]] = {
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
    """The scope of one call (see the module docstring): the user the run and the face
    agree on; the other values from the runtime ``context``, the run's ``config``, then
    the face's ``defaults``.

    Args:
        context: ``runtime.context`` (dict, dataclass, pydantic model or ``None``).
        config: The ``RunnableConfig`` of the run (``None`` outside a run).
        what: The node or tool asking, named in the error.
        defaults: The face's own values (``user_id``, ``workspace_id``, ...).

    Raises:
        MissingContextError: No ``user_id`` anywhere.
        ForeignUserError: The run and the face name different users, or the run is
            authenticated as another user than one named.
    """
    configurable = (config or {}).get("configurable") or {}
    sources = (context, configurable, defaults)
    values = {name: _first(sources, names) for name, names in _ALIASES.items()}
    bound = authenticated_user(config)
    if bound is not None:
        named = {str(v) for s in sources if (v := _lookup(s, "user_id")) is not None and str(v).strip()}
        user_id = bind_users(sorted(named), config, what=what)[0] if named else bound
        return MemoryScope(user_id=user_id, **values)
    run_user, own = _first((context, configurable), ("user_id",)), _first((defaults,), ("user_id",))
    if run_user is not None and own is not None and require_id(run_user, "user_id") != require_id(own, "user_id"):
        where = "runtime context" if _first((context,), ("user_id",)) is not None else 'config["configurable"]'
        raise ForeignUserError(
            f"{what} was built for user {own!r} but this run names user {run_user!r} (user_id in its {where}): "
            "a face built for one user never serves another; build it without user_id to follow the run's "
            f"user, or run it for {own!r}")
    user_id = run_user or own
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
