"""The write phase of a batch: one SQL transaction for every change.

Inside the caller's write transaction: TTL refreshes for rows read by the
batch, deletes, upserts (``created_at`` kept), the items' vectors replaced, the
lexical index brought in line (:mod:`..postings.write`), and one change-log row
per touched item that the vector indexes may hold: every removed item, and every
written item that has vectors or may have had some (an item known to have had none
and written without any is left out: most rows of a memory write are bookkeeping
without vectors). Returns the log sequence numbers and the new vectors per item so
the caller can update its own mirror without reading them back.

Example:
    >>> WriteResult(seqs=[], local={}).seqs
    []
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, TypeAlias

from sqlalchemy.engine import Connection

from hy_memory_langgraph.store.batch.guards import check_guards
from hy_memory_langgraph.store.batch.plan import BatchPlan
from hy_memory_langgraph.store.db.locks import lock_scopes, log_key
from hy_memory_langgraph.store.postings.write import apply_lexical
from hy_memory_langgraph.store.schema.tables import scope_of
from hy_memory_langgraph.store.sql import statements as sql
from hy_memory_langgraph.store.ttl import expires_at

if TYPE_CHECKING:  # a store without an index writes without the vector side (NumPy, FAISS)
    import numpy as np

    from hy_memory_langgraph.store.vector.mirror import ItemVectors

#: Each text's vector (an index's stores only).
Vectors: TypeAlias = "dict[str, np.ndarray]"
PRUNE_EVERY = 1000  # check the change-log length every this many appended rows


@dataclasses.dataclass
class WriteResult:
    """Change-log positions written, the resulting vectors per item id, the
    scopes items were removed from and how far the log may be pruned."""

    seqs: list[int]
    local: dict[int, ItemVectors]
    removed_scopes: set[str] = dataclasses.field(default_factory=set)
    #: The log is due for pruning up to this position (the caller does it, after commit).
    prune_upto: int | None = None


def _stacked(vectors: list[np.ndarray]) -> np.ndarray:
    """One item's vectors as rows of one array (only a store with an index has vectors:
    its index loaded NumPy already)."""
    import numpy as np

    return np.stack(vectors)


def _change(item_id: int, op: str, namespace: str, key: str) -> dict[str, Any]:
    return {"item_id": item_id, "op": op, "namespace": namespace, "key": key}


@dataclasses.dataclass
class _Touched:
    """Items a batch wrote: ids of the upserted ones, ``(id, namespace)`` of the removed."""

    upserted: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)
    undocumented: set[int] = dataclasses.field(default_factory=set)  # written or removed, no lexical document
    removed: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    deleted: list[int] = dataclasses.field(default_factory=list)  # whose log names go


def _sweep(conn: Connection, now: int, entries: list[dict[str, Any]], local: dict[int, ItemVectors],
           touched: _Touched) -> None:
    scopes = {scope_of(row.namespace) for row in sql.expired_rows(conn, now)}
    if not scopes:
        return
    lock_scopes(conn, scopes)  # then read again: only what is still expired, in those scopes
    expired = [row for row in sql.expired_rows(conn, now) if scope_of(row.namespace) in scopes]
    sql.delete_ids(conn, [row.id for row in expired])
    for row in expired:
        entries.append(_change(row.id, "expire", row.namespace, row.key))
        local[row.id] = None
        touched.removed.append((row.id, row.namespace))


def _puts(
    conn: Connection,
    plan: BatchPlan,
    text_vectors: Vectors,
    now: int,
    entries: list[dict[str, Any]],
    local: dict[int, ItemVectors],
    touched: _Touched,
) -> None:
    deletes = [(p.namespace, p.key) for p in plan.puts.values() if p.value_json is None]
    removed = sql.delete_items(conn, deletes)
    for row in removed:  # a deleted item leaves no name behind in the change log
        entries.append(_change(row.id, "delete", "", ""))
        local[row.id] = None
        touched.removed.append((row.id, row.namespace))
        if not row.documented:  # no lexical document to load and drop
            touched.undocumented.add(row.id)
    touched.deleted.extend(row.id for row in removed)
    upserts = [p for p in plan.puts.values() if p.value_json is not None]
    if not upserts:
        return
    written = sql.upsert_items(
        conn,
        [
            {
                "namespace": p.namespace,
                "key": p.key,
                "value": p.value_json,
                "scope": scope_of(p.namespace) if p.texts else None,
                "created_at": now,
                "updated_at": now,
                "ttl_minutes": p.ttl_minutes,
                "expires_at": expires_at(now, p.ttl_minutes),
            }
            for p in upserts
        ],
    )
    ids = written.ids
    touched.upserted.update(ids)
    touched.undocumented |= written.undocumented
    vector_rows: list[dict[str, Any]] = []
    for put in upserts:
        item_id = ids[(put.namespace, put.key)]
        vecs = [text_vectors[text] for _, text in put.texts]
        vector_rows.extend(
            {
                "item_id": item_id,
                "pos": pos,
                "field": field,
                "text": text,
                "embedding": vec.astype("<f4").tobytes(),
            }
            for pos, ((field, text), vec) in enumerate(zip(put.texts, vecs, strict=True))
        )
        if vecs or item_id not in written.vectorless:  # the vector indexes' concern
            local[item_id] = (put.namespace, _stacked(vecs)) if vecs else None
            entries.append(_change(item_id, "put", put.namespace, put.key))
    sql.replace_vectors(conn, [i for i in ids.values() if i not in written.vectorless], vector_rows)


def apply_writes(
    conn: Connection,
    plan: BatchPlan | None,
    text_vectors: Vectors,
    ttl_ids: list[int],
    now: int,
    retention: int,
    *,
    sweep: bool = False,
) -> WriteResult:
    """Run the writes of ``plan`` (and/or a TTL sweep) in ``conn``'s transaction: a
    ``write_tx(..., scopes=plan.scopes())`` (a sweep's: ``scopes=()``, it locks what it
    finds); the append to the change log takes the log lock."""
    entries: list[dict[str, Any]] = []
    local: dict[int, ItemVectors] = {}
    touched = _Touched()
    if plan is not None:
        check_guards(conn, plan.guards, now)
    if ttl_ids:
        sql.refresh_ttl(conn, ttl_ids, now)
    if sweep:
        _sweep(conn, now, entries, local, touched)
    if plan is not None and plan.puts:
        _puts(conn, plan, text_vectors, now, entries, local, touched)
    apply_lexical(conn, plan.lexical if plan is not None else {}, touched.upserted, touched.removed,
                  undocumented=touched.undocumented)
    if not entries:
        return WriteResult(seqs=[], local=local)
    # the change log is only ever touched under the log lock; the append takes it
    seqs = sql.append_changes(conn, entries, lock_key=log_key(conn))
    sql.forget_change_names(conn, touched.deleted)
    high = max(seqs)
    due = high > retention and high // PRUNE_EVERY != (high - len(seqs)) // PRUNE_EVERY
    prune = high - retention if due else None
    return WriteResult(seqs=seqs, local=local, removed_scopes={scope_of(ns) for _, ns in touched.removed},
                       prune_upto=prune)
