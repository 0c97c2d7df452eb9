"""The reads of grouped one-operation calls, sent together.

Calls of several callers grouped into one batch (:mod:`.coalesce`) owe each other no
common snapshot, so their reads need not run one after another: every get, listing of
namespaces and search without a query of such a batch is one prebuilt statement, and
:func:`prefetch` sends them all in one round trip on PostgreSQL
(:func:`~..db.direct.fetch_many`; elsewhere one after another). The batch then takes
its answers from here instead of reading again. A search with a value filter is left to
the ordinary path.

Example:
    >>> Prefetched().searches
    {}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Connection, Row

from hy_memory_langgraph.store import namespaces
from hy_memory_langgraph.store.batch.plan import BatchPlan
from hy_memory_langgraph.store.batch.search import SearchOutcome, listing_outcome, listing_request
from hy_memory_langgraph.store.db import direct
from hy_memory_langgraph.store.sql import statements as sql

__all__ = ["Prefetched", "prefetch"]


@dataclasses.dataclass
class Prefetched:
    """Answers read ahead: rows of the gets by ``(encoded namespace, key)`` (``None``:
    not read ahead), search outcomes and namespace lists by result index."""

    gets: dict[tuple[str, str], Row[Any]] | None = None
    searches: dict[int, SearchOutcome] = dataclasses.field(default_factory=dict)
    lists: dict[int, list[str]] = dataclasses.field(default_factory=dict)


def prefetch(conn: Connection, plan: BatchPlan, pairs: Sequence[tuple[str, str]],
             get_requests: Sequence[sql.Request], now: int) -> Prefetched:
    """Read the answers of ``plan``'s gets (``pairs``: their encoded namespaces and keys,
    read by ``get_requests``), listings and searches without a query or a value filter in
    one go (a batch of independent reads only)."""
    requests = list(get_requests)
    gets = len(requests)
    searches: list[int] = []
    for i, op, where in plan.searches:
        request = listing_request(conn, op, where, now)
        if request is not None:
            searches.append(i)
            requests.append(request)
    lists = [i for i, _ in plan.lists]
    requests += [sql.namespaces_request(conn, now, namespaces.encode(namespaces.literal_prefix(op.match_conditions)))
                 for _, op in plan.lists]
    if len(requests) < 2:
        return Prefetched()  # nothing to share a round trip with
    answers = direct.fetch_many(conn, requests)
    found: dict[tuple[str, str], Row[Any]] = {}
    wanted = set(pairs)
    for rows in answers[:gets]:
        found.update(sql.by_key(rows, wanted))
    rest = answers[gets:]
    return Prefetched(
        gets=found if plan.gets else None,
        searches={i: listing_outcome(rows) for i, rows in zip(searches, rest, strict=False)},
        lists={i: [row[0] for row in rows] for i, rows in zip(lists, rest[len(searches):], strict=True)},
    )
