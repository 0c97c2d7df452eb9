"""What a search ranks, scope by scope: chosen in SQL, before any vector is read.

A namespace prefix covers one scope (a prefix inside it) or the scopes under a shorter
prefix; a filter's matching ``(id, scope)`` rows name the items of each scope. The
batch reads module computes these without NumPy; :class:`~.scoped.ScopedIndex` ranks them.

Example:
    >>> targets_for_rows([])
    []
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy.engine import Connection, Row

from hy_memory_langgraph.store.namespaces import SEP
from hy_memory_langgraph.store.schema.tables import SCOPE_DEPTH, scope_of
from hy_memory_langgraph.store.sql import statements as sql


@dataclass(frozen=True)
class Target:
    """What to rank inside one scope: all of it, a namespace prefix, or some items."""

    scope: str
    prefix: str | None = None
    item_ids: tuple[int, ...] | None = None


def targets_for_prefix(conn: Connection, prefix: str) -> list[Target]:
    """The scopes (and the prefix inside one) that a namespace prefix covers."""
    depth = len(prefix.split(SEP)) if prefix else 0
    if depth >= SCOPE_DEPTH:
        return [Target(scope_of(prefix), prefix=prefix)]
    return [Target(scope) for scope in sql.scopes_under(conn, prefix)]


def targets_for_rows(rows: Iterable[Row[object]]) -> list[Target]:
    """Targets for the ``(id, scope)`` rows a filtered SQL query selected (an item
    without a scope has no vectors: it is no target)."""
    grouped: dict[str, list[int]] = {}
    for row in rows:
        if row.scope is not None:  # type: ignore[attr-defined]
            grouped.setdefault(str(row.scope), []).append(int(row.id))  # type: ignore[call-overload]
    return [Target(scope, item_ids=tuple(ids)) for scope, ids in grouped.items()]
