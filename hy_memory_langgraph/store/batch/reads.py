"""Execute one :class:`SearchOp` against SQL and the mirror (exact, filter first).

Without a query (or without an index) results are the matching live items,
newest ``updated_at`` first, straight from SQL with ``LIMIT/OFFSET``.

With a query the candidate set is fixed *before* ranking: the namespace prefix
(one scope's namespace map, or the scopes under a shorter prefix) or, with a
filter, the ``(id, scope)`` rows SQL returns for ``prefix AND filter AND not
expired``. Vectors are ranked by cosine only among those candidates, scope by
scope (FAISS selector or numpy brute force), merged, pooled per item by max,
and only the top rows are read from SQL. Items without vectors
follow the scored ones, newest first; ``offset``/``limit`` apply to that
concatenation. Hits whose row turns out to be expired are dropped from the
mirror and the search widens until the page is full or candidates run out.

:func:`run_key_search` ranks the same way inside one namespace but returns only
keys, scores and lexical-document times (no values are read or parsed), for
callers that fetch just their final few items.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import sqlalchemy as sa
from langgraph.store.base import SearchItem, SearchOp
from sqlalchemy.engine import Connection, Row

from hy_memory_langgraph.store.postings.ops import KeyHit
from hy_memory_langgraph.store.postings.read import keys_of
from hy_memory_langgraph.store.namespaces import encode
from hy_memory_langgraph.store.schema.tables import scope_of
from hy_memory_langgraph.store.sql import statements as sql
from hy_memory_langgraph.store.vector.settings import POS_BITS
from hy_memory_langgraph.store.vector.targets import Target, targets_for_prefix, targets_for_rows

if TYPE_CHECKING:  # a store without an index reads without the vector side (NumPy, FAISS)
    import numpy as np

    from hy_memory_langgraph.store.vector.scoped import ScopedIndex

T = TypeVar("T")
#: Reads the live rows (or anything per item) of some item ids: ``(conn, ids, now) -> {id: row}``.
Fetch = Callable[[Connection, Sequence[int], int], Mapping[int, T]]


@dataclass
class SearchOutcome:
    """Results plus the ids of returned rows that carry a TTL (for refresh)."""

    items: list[SearchItem]
    ttl_ids: list[int]


def _outcome(pairs: list[tuple[Row[Any], float | None]]) -> SearchOutcome:
    items = [sql.row_to_search_item(row, score) for row, score in pairs]
    return SearchOutcome(
        items=[item for item in items if item is not None],
        ttl_ids=[row.id for row, _ in pairs if row.ttl_minutes is not None],
    )


def run_search(
    conn: Connection,
    op: SearchOp,
    where: sa.ColumnElement[bool] | None,
    now: int,
    scoped: ScopedIndex | None,
    query_vector: np.ndarray | None,
) -> SearchOutcome:
    """Run ``op`` (``where`` = compiled filter) inside the caller's read transaction."""
    prefix = encode(op.namespace_prefix)
    if op.limit == 0:
        return SearchOutcome([], [])
    if scoped is None or query_vector is None or not op.query:
        rows = sql.newest_first(conn, sql.item_where(conn, prefix, now, where), op.limit, op.offset)
        return _outcome([(row, None) for row in rows])
    if where is None:
        targets = targets_for_prefix(conn, prefix)
    else:
        targets = targets_for_rows(sql.matching_ids(conn, sql.item_where(conn, prefix, now, where)))
    scored, exhausted = _ranked(conn, scoped, query_vector, targets, now, op.offset + op.limit)
    page = scored[op.offset : op.offset + op.limit]
    pairs: list[tuple[Row[Any], float | None]] = [(row, score) for row, score in page]
    if len(pairs) < op.limit and exhausted:
        skip = max(0, op.offset - len(scored))
        base = sql.item_where(conn, prefix, now, where)
        rest = sql.newest_first(conn, sql.without_vectors(base), op.limit - len(pairs), skip)
        pairs.extend((row, None) for row in rest)
    return _outcome(pairs)


def run_key_search(
    conn: Connection,
    scoped: ScopedIndex,
    query_vector: np.ndarray,
    namespace: str,
    limit: int,
    now: int,
    item_ids: Sequence[int] | None = None,
) -> list[KeyHit]:
    """Best ``limit`` live items of one encoded namespace (or of ``item_ids`` in it) by
    max cosine: ``KeyHit(key, score, lexical-document ts)``, best first."""
    if limit <= 0 or item_ids is not None and not item_ids:
        return []
    if item_ids is None:
        targets = targets_for_prefix(conn, namespace)
    else:
        targets = [Target(scope_of(namespace), item_ids=tuple(item_ids))]
    ranked, _ = _ranked(conn, scoped, query_vector, targets, now, limit, fetch=keys_of)
    return [KeyHit(key, score, ts) for (key, ts), score in ranked[:limit]]


def _ranked(
    conn: Connection,
    scoped: ScopedIndex,
    query_vector: np.ndarray,
    targets: list[Target],
    now: int,
    need: int,
    fetch: Fetch[T] = sql.fetch_by_ids,  # type: ignore[assignment]
) -> tuple[list[tuple[T, float]], bool]:
    """Best ``need`` live items by max cosine (``fetch`` reads each hit's row); also
    whether every candidate was ranked."""
    rows: dict[int, T | None] = {}
    k = max(need, 1)
    while True:
        scores, vids, eligible = scoped.search(conn, now, query_vector, k, targets)
        best: dict[int, float] = {}
        for score, vid in zip(scores.tolist(), (vids >> POS_BITS).tolist(), strict=True):
            best.setdefault(vid, score)  # hits come best first: first seen = max pooled
        missing = [i for i in best if i not in rows]
        fetched = fetch(conn, missing, now)
        rows.update({i: fetched.get(i) for i in missing})
        ranked = [(row, best[i]) for i in best if (row := rows[i]) is not None]
        exhausted = len(vids) < k or k >= eligible
        if len(ranked) >= need or exhausted:
            break
        k = min(eligible, k * 4)
    expired = [i for i, row in rows.items() if row is None]
    if expired:
        scoped.forget(expired)  # invisible for good; a new put re-adds them
    return ranked, exhausted
