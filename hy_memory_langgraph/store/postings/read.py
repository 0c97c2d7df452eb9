"""Reads of the lexical index: namespace status, BM25 search, documents in a time range.

BM25 is scored in SQL over the postings of the query terms only: one statement
counts each term's document frequency (``df``) in the namespace, a second sums

    ``w(t) * idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))``

per document (``idf = log(1 + (N - df + 0.5) / (df + 0.5))`` computed in Python,
``N`` and ``avg_len`` read from the namespace's statistics row) and returns the
best ``limit`` with their keys, ties by key. The formula and operation order are
those of :class:`hy_memory_langgraph.retrieval.bm25.BM25Index`; sums may differ
from it in the last bits only (addition order). A time range filters documents
before the top-k; document frequencies always count the whole namespace (as
BM25Index's ``allowed`` does).

Example:
    >>> idf_weights({"tea": 2.0, "cat": 1.0}, {"tea": 1}, docs=10)
    {'tea': 3.984860329380412}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from hy_memory_langgraph.store.postings.ops import KeyHit, LexicalStatus
from hy_memory_langgraph.store.schema.tables import items, lexical_docs, lexical_postings, lexical_spaces
from hy_memory_langgraph.store.sql.statements import chunks, live

#: ``(lowest ts, highest ts)``, both inclusive; ``None`` leaves that side open.
TimeRange = tuple[float | None, float | None]

_SPACE = sa.select(lexical_spaces.c.id, lexical_spaces.c.docs, lexical_spaces.c.total_len,
                   lexical_spaces.c.ctx_before, lexical_spaces.c.ctx_after).where(
    lexical_spaces.c.namespace == sa.bindparam("ns", type_=sa.Text()))
_DF = (sa.select(lexical_postings.c.term, sa.func.count())
       .where(lexical_postings.c.space_id == sa.bindparam("space", type_=sa.BigInteger()),
              lexical_postings.c.term.in_(sa.bindparam("terms", expanding=True)))
       .group_by(lexical_postings.c.term))


def lexical_status(conn: Connection, namespace: str) -> LexicalStatus:
    """What the index holds for an encoded namespace (see :class:`LexicalStatus`)."""
    row = conn.execute(_SPACE, {"ns": namespace}).first()
    if row is None:
        return LexicalStatus(docs=0, window=None)
    return LexicalStatus(docs=int(row.docs), window=(int(row.ctx_before), int(row.ctx_after)))


def idf_weights(weights: Mapping[str, float], df: Mapping[str, int], *, docs: int) -> dict[str, float]:
    """``weight * idf`` of each query term found in the namespace (BM25Index's idf)."""
    out: dict[str, float] = {}
    for term, weight in weights.items():
        count = df.get(term, 0)
        if count and weight > 0:
            out[term] = math.log(1.0 + (docs - count + 0.5) / (count + 0.5)) * weight
    return out


def _range_clause(column: sa.ColumnElement[Any], ts_range: TimeRange | None) -> list[sa.ColumnElement[bool]]:
    if ts_range is None:
        return []
    low, high = ts_range
    out = []
    if low is not None:
        out.append(column >= sa.literal(float(low), sa.Double()))
    if high is not None:
        out.append(column <= sa.literal(float(high), sa.Double()))
    return out


def lexical_search(conn: Connection, namespace: str, weights: Mapping[str, float], *, limit: int,
                   k1: float, b: float, ts_range: TimeRange | None = None) -> list[KeyHit]:
    """The ``limit`` best documents of ``namespace`` for weighted query terms, best first.

    Args:
        conn: A read transaction.
        namespace: Encoded namespace (exact).
        weights: ``{term: weight}`` (a query's term counts); terms with weight <= 0 are skipped.
        limit: How many hits at most.
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
        ts_range: Keep only documents whose ``ts`` lies in the range (applied before the top-k).

    Returns:
        ``KeyHit(key, score, ts)`` with scores > 0, best first, ties by key.
    """
    terms = [t for t, w in weights.items() if w > 0]
    space = conn.execute(_SPACE, {"ns": namespace}).first()
    docs = 0 if space is None else int(space.docs)
    if limit <= 0 or not terms or space is None or not docs:
        return []
    df = {t: int(n) for t, n in conn.execute(_DF, {"space": space.id, "terms": terms})}
    idf = idf_weights({t: weights[t] for t in terms}, df, docs=docs)
    if not idf:
        return []
    avg = int(space.total_len) / docs or 1.0
    p = lexical_postings.c
    tf = sa.cast(p.tf, sa.Double())
    weight = sa.case({t: sa.literal(w, sa.Double()) for t, w in idf.items()}, value=p.term,
                     else_=sa.literal(0.0, sa.Double()))
    one_minus_b = sa.literal(1.0 - b, sa.Double())
    norm = sa.literal(k1, sa.Double()) * (one_minus_b + sa.literal(b, sa.Double()) * p.doc_len
                                          / sa.literal(avg, sa.Double()))
    part = weight * tf * sa.literal(k1 + 1.0, sa.Double()) / (tf + norm)
    scored = (sa.select(p.item_id, sa.func.sum(part).label("score"))
              .where(p.space_id == space.id, p.term.in_(list(idf)))
              .group_by(p.item_id).subquery())
    d = lexical_docs.c
    stmt = (sa.select(d.key, scored.c.score, d.ts)
            .join_from(scored, lexical_docs, d.item_id == scored.c.item_id)
            .where(scored.c.score > 0, *_range_clause(d.ts, ts_range))
            .order_by(scored.c.score.desc(), d.key)
            .limit(limit))
    return [KeyHit(key, float(score), None if ts is None else float(ts))
            for key, score, ts in conn.execute(stmt).all()]


def documents_in_range(conn: Connection, namespace: str, ts_range: TimeRange) -> list[int]:
    """Item ids of the documents of ``namespace`` whose ``ts`` lies in ``ts_range``."""
    d, s = lexical_docs.c, lexical_spaces.c
    stmt = (sa.select(d.item_id).join_from(lexical_docs, lexical_spaces, s.id == d.space_id)
            .where(s.namespace == namespace, *_range_clause(d.ts, ts_range)))
    return [int(i) for i in conn.execute(stmt).scalars()]


def keys_of(conn: Connection, item_ids: Sequence[int], now: int) -> dict[int, tuple[str, float | None]]:
    """``{item id: (key, document ts)}`` of the live items among ``item_ids``."""
    found: dict[int, tuple[str, float | None]] = {}
    for part in chunks(list(item_ids)):
        stmt = (sa.select(items.c.id, items.c.key, lexical_docs.c.ts)
                .join_from(items, lexical_docs, lexical_docs.c.item_id == items.c.id, isouter=True)
                .where(items.c.id.in_(list(part)), live(now)))
        found.update({item_id: (key, None if ts is None else float(ts))
                      for item_id, key, ts in conn.execute(stmt).all()})
    return found
