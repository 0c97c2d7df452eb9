"""Guarded batches: a write that happens only if the items it read are still as read.

A :class:`GuardOp` in a :meth:`HyMemoryStore.batch` is checked inside the batch's
write transaction, before any write: the item must exist (not expired) and every
field of ``expect`` must hold the given value. The guarded rows are read with
``SELECT … FOR UPDATE`` (PostgreSQL; on SQLite the write transaction already
excludes other writers), so two transactions can never both pass a guard on the
same item and then both write it. If one guard fails, nothing of the
batch is written and :class:`~hy_memory_langgraph.errors.ConflictError` is raised.
Stores announce the capability with ``supports_guards = True``.

Example:
    >>> import tempfile, os
    >>> from hy_memory_langgraph.store import HyMemoryStore
    >>> from langgraph.store.base import PutOp
    >>> store = HyMemoryStore(os.path.join(tempfile.mkdtemp(), "g.db"))
    >>> store.put(("m",), "a", {"rev": 1})
    >>> store.batch([GuardOp(("m",), "a", {"rev": 1}), PutOp(("m",), "a", {"rev": 2})])
    [None, None]
    >>> store.get(("m",), "a").value
    {'rev': 2}
    >>> store.close()
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from sqlalchemy.engine import Connection

from hy_memory_langgraph.errors import ConflictError
from hy_memory_langgraph.store.sql import statements as sql


class GuardOp(NamedTuple):
    """Require ``namespace`` / ``key`` to exist with ``expect``'s field values."""

    namespace: tuple[str, ...]
    key: str
    expect: Mapping[str, Any] | None = None


def _matches(value: Mapping[str, Any], expect: Mapping[str, Any] | None) -> bool:
    return all(value.get(field) == wanted for field, wanted in (expect or {}).items())


def check_guards(conn: Connection, guards: Sequence[tuple[str, str, Mapping[str, Any] | None]],
                 now: int) -> None:
    """Raise :class:`ConflictError` unless every ``(encoded namespace, key, expect)`` holds."""
    if not guards:
        return
    rows = sql.fetch_by_keys(conn, [(ns, key) for ns, key, _ in guards], now, for_update=True)
    for ns, key, expect in guards:
        row = rows.get((ns, key))
        if row is None:
            raise ConflictError(f"item {key!r} no longer exists; it was deleted concurrently")
        value = sql.stored_value(row)
        if value is None or not _matches(value, expect):
            raise ConflictError(f"item {key!r} changed concurrently; read it again and retry")
