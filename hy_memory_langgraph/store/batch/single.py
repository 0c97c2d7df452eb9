"""The async one-operation methods (``aget``, ``asearch``, ``aput``, ``adelete``,
``alist_namespaces``), handing their operation to the group commit without ``abatch``.

LangGraph's ``BaseStore`` implements each as ``await self.abatch([op])``. With tens of
thousands of calls gathered at once (LangGraph's own large-batch test gathers 60,000),
every suspended call then holds two coroutine frames and two one-element lists besides
its task and future, and Python's cyclic collector walks them all again at each full
collection: half of such a run's time. Here each method validates its arguments and
builds its operation as ``BaseStore`` does (labels checked by LangGraph's public
``validate_op_namespace``, the same errors), then awaits the store's ``_asingle`` (the group commit of
:mod:`.coalesce`), so a pending call holds one frame and one future.

A subclass that overrides ``abatch`` to see every call should override these too.

Example:
    >>> import asyncio
    >>> from langgraph.store.base import BaseStore, PutOp
    >>> class Echo(SingleCalls, BaseStore):
    ...     def batch(self, ops): raise NotImplementedError
    ...     async def abatch(self, ops): raise NotImplementedError
    ...     async def _asingle(self, op): return op
    >>> asyncio.run(Echo().aget(("a",), 7)).key
    '7'
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any, Literal

from langgraph.store.base import (
    NOT_PROVIDED,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NamespacePath,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)


def _checked(op: Op) -> Op:
    """``op`` once its namespace labels pass LangGraph's check (``InvalidNamespaceError``)."""
    validate_op_namespace(op)
    return op


def _refresh(config: TTLConfig | None, asked: bool | None) -> bool:
    """Whether a read refreshes TTLs: as asked, else the store's ``refresh_on_read`` (on)."""
    if asked is not None:
        return asked
    return True if config is None else config.get("refresh_on_read", True)


def _ttl(config: TTLConfig | None, asked: float | None | NotProvided) -> float | None:
    """A put's TTL in minutes: as asked, else the store's ``default_ttl`` (none)."""
    if asked is NOT_PROVIDED:
        return config.get("default_ttl") if config else None
    return asked  # type: ignore[return-value]


class SingleCalls:
    """Mixin: LangGraph's async one-operation methods over ``self._asingle(op)``."""

    ttl_config: TTLConfig | None
    supports_ttl: bool

    def _asingle(self, op: Op) -> Awaitable[Result]:
        raise NotImplementedError

    async def aget(self, namespace: tuple[str, ...], key: str, *,
                   refresh_ttl: bool | None = None) -> Item | None:
        """Get one item (``None`` when absent or expired); see ``BaseStore.aget``."""
        return await self._asingle(  # type: ignore[return-value]
            _checked(GetOp(namespace, str(key), _refresh(self.ttl_config, refresh_ttl))))

    async def asearch(self, namespace_prefix: tuple[str, ...], /, *, query: str | None = None,
                      filter: dict[str, Any] | None = None, limit: int = 10, offset: int = 0,
                      refresh_ttl: bool | None = None) -> list[SearchItem]:
        """Search items under a prefix; see ``BaseStore.asearch``."""
        return await self._asingle(_checked(SearchOp(  # type: ignore[return-value]
            namespace_prefix, filter, limit, offset, query, _refresh(self.ttl_config, refresh_ttl))))

    async def aput(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any],
                   index: Literal[False] | list[str] | None = None, *,
                   ttl: float | None | NotProvided = NOT_PROVIDED) -> None:
        """Store or replace an item; see ``BaseStore.aput``."""
        if not namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        op = _checked(PutOp(namespace, str(key), value, index=index, ttl=_ttl(self.ttl_config, ttl)))
        if namespace[0] == "langgraph":
            raise InvalidNamespaceError(f'Root label for namespace cannot be "langgraph". Got: {namespace}')
        if ttl not in (NOT_PROVIDED, None) and not self.supports_ttl:
            raise NotImplementedError(
                f"TTL is not supported by {type(self).__name__}. Use a store implementation "
                "that supports TTL or set ttl=None.")
        await self._asingle(op)

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        """Delete an item; see ``BaseStore.adelete``."""
        await self._asingle(_checked(PutOp(namespace, str(key), None)))

    async def alist_namespaces(self, *, prefix: NamespacePath | None = None,
                               suffix: NamespacePath | None = None, max_depth: int | None = None,
                               limit: int = 100, offset: int = 0) -> list[tuple[str, ...]]:
        """List namespaces; see ``BaseStore.alist_namespaces``."""
        conditions = []
        if prefix:
            conditions.append(MatchCondition(match_type="prefix", path=prefix))
        if suffix:
            conditions.append(MatchCondition(match_type="suffix", path=suffix))
        return await self._asingle(_checked(ListNamespacesOp(  # type: ignore[return-value]
            match_conditions=tuple(conditions), max_depth=max_depth, limit=limit, offset=offset)))
