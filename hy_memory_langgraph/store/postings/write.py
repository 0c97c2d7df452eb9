"""Keep the lexical index in step with a batch, inside its write transaction.

Runs after the batch's item writes (see :mod:`.writes`), so it sees the items'
ids and which items were deleted, replaced or expired:

1. **Drop** the documents of deleted or expired items, and of items the batch
   put without a :class:`~.lexical_ops.LexicalOp` (a re-put replaces the document,
   like it replaces the vectors).
2. **Write** the documents of the batch's lexical ops (own terms, tail, group,
   order, time), creating the namespace's statistics row when it has none.
3. **Re-derive** the indexed terms of every document whose text changed: the
   written ones, and in a group the neighbours whose window now holds a different
   document (``window = (before, after)``: a document adds the tails of ``before``
   previous and ``after`` next documents). Only the documents around each changed
   position are read (``before + after`` on either side), or, when a batch changes
   many of its positions, one stretch from the first to the last with that much on
   either side. Their postings are rewritten and the
   namespace's document count and total length adjusted.
4. Namespaces left without documents after a delete lose their statistics row,
   so nothing of an erased namespace stays behind.

Writers of one store are serialised (SQLite's write lock, PostgreSQL's advisory
lock), so neighbours are always read as committed.

Example:
    >>> loads_terms(dumps_terms({"tea": 2, "茶": 1}))
    {'tea': 2, '茶': 1}
"""

from __future__ import annotations

import bisect
import json
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from hy_memory_langgraph.store.postings.ops import LexicalOp
from hy_memory_langgraph.store.schema.tables import items, lexical_docs, lexical_postings, lexical_spaces
from hy_memory_langgraph.store.sql.statements import by_namespace, chunks

#: Changed positions in one group from which one stretch (first to last, and the windows
#: around them) is read at once instead of one stretch around each.
WHOLE_GROUP_AT = 5

Order = tuple[str, float, str]
_DOC_COLUMNS = (
    lexical_docs.c.item_id, lexical_docs.c.space_id, lexical_docs.c.key, lexical_docs.c.grp,
    lexical_docs.c.order_at, lexical_docs.c.order_ts, lexical_docs.c.terms, lexical_docs.c.tail,
    lexical_docs.c.length,
)
_ORDER_KEY = sa.tuple_(lexical_docs.c.order_at, lexical_docs.c.order_ts, lexical_docs.c.key)
_POINT = sa.tuple_(sa.bindparam("p_at", type_=sa.Text()), sa.bindparam("p_ts", type_=sa.Double()),
                   sa.bindparam("p_key", type_=sa.Text()))
_IN_GROUP = sa.and_(lexical_docs.c.space_id == sa.bindparam("p_space", type_=sa.BigInteger()),
                    lexical_docs.c.grp == sa.bindparam("p_grp", type_=sa.Text()))
_ASC = (lexical_docs.c.order_at, lexical_docs.c.order_ts, lexical_docs.c.key)
_BEFORE = (sa.select(*_DOC_COLUMNS).where(_IN_GROUP, _ORDER_KEY < _POINT)
           .order_by(*(c.desc() for c in _ASC)).limit(sa.bindparam("p_before", type_=sa.Integer())))
_FROM = (sa.select(*_DOC_COLUMNS).where(_IN_GROUP, _ORDER_KEY >= _POINT)
         .order_by(*_ASC).limit(sa.bindparam("p_from", type_=sa.Integer())))
# Both stretches around a point in one statement (each limited inside its own subquery).
_AROUND = sa.union_all(sa.select(_BEFORE.subquery()), sa.select(_FROM.subquery()))
_LAST = sa.tuple_(sa.bindparam("q_at", type_=sa.Text()), sa.bindparam("q_ts", type_=sa.Double()),
                  sa.bindparam("q_key", type_=sa.Text()))
_AFTER = (sa.select(*_DOC_COLUMNS).where(_IN_GROUP, _ORDER_KEY > _LAST)
          .order_by(*_ASC).limit(sa.bindparam("p_after", type_=sa.Integer())))
_BETWEEN = sa.select(*_DOC_COLUMNS).where(_IN_GROUP, _ORDER_KEY >= _POINT, _ORDER_KEY <= _LAST)
# A stretch from a first to a last point, with the windows on either side, in one statement.
_SPAN = sa.union_all(sa.select(_BEFORE.subquery()), _BETWEEN, sa.select(_AFTER.subquery()))
_SPACE_GROUPS = sa.select(*_DOC_COLUMNS).where(
    lexical_docs.c.space_id == sa.bindparam("p_space", type_=sa.BigInteger()),
    lexical_docs.c.grp.is_not(None))
_SET_LENGTH = (sa.update(lexical_docs)
               .where(lexical_docs.c.item_id == sa.bindparam("b_item", type_=sa.BigInteger()))
               .values(length=sa.bindparam("b_length", type_=sa.Integer())))
_SPACE_COLUMNS = (lexical_spaces.c.id, lexical_spaces.c.namespace, lexical_spaces.c.docs,
                  lexical_spaces.c.total_len, lexical_spaces.c.ctx_before, lexical_spaces.c.ctx_after)
# Statements of every write, built once: building one per call costs more than SQLite
# takes to run it (expanding ``IN`` parameters take the lists).
_IDS = sa.bindparam("p_ids", expanding=True)
_DOCS_OF = sa.select(*_DOC_COLUMNS).where(lexical_docs.c.item_id.in_(_IDS))
_SPACES_NAMED = sa.select(*_SPACE_COLUMNS).where(lexical_spaces.c.namespace.in_(_IDS))
_SPACES_NUMBERED = sa.select(*_SPACE_COLUMNS).where(lexical_spaces.c.id.in_(_IDS))
_DROP_POSTINGS = sa.delete(lexical_postings).where(lexical_postings.c.item_id.in_(_IDS))
_DROP_DOCS = sa.delete(lexical_docs).where(lexical_docs.c.item_id.in_(_IDS))
_INSERT_DOCS = sa.insert(lexical_docs)
_INSERT_POSTINGS = sa.insert(lexical_postings)
_SAVE_SPACE = (sa.update(lexical_spaces)
               .where(lexical_spaces.c.id == sa.bindparam("p_space", type_=sa.BigInteger()))
               .values(docs=sa.bindparam("p_docs"), total_len=sa.bindparam("p_total"),
                       ctx_before=sa.bindparam("p_before"), ctx_after=sa.bindparam("p_after")))


def dumps_terms(terms: Mapping[str, int] | None) -> str | None:
    """Compact JSON of a ``{term: count}`` map (``None`` stays ``None``)."""
    if terms is None:
        return None
    return json.dumps(dict(terms), ensure_ascii=False, separators=(",", ":"))


def loads_terms(text: str | None) -> dict[str, int] | None:
    """Inverse of :func:`dumps_terms`."""
    return None if text is None else dict(json.loads(text))


@dataclass
class _Doc:
    """A stored document as read (``length`` is its stored indexed length)."""

    item_id: int
    space_id: int
    key: str
    group: str | None
    order: Order
    terms: dict[str, int]
    tail: dict[str, int] | None
    length: int  # 0 until its postings are written

    @classmethod
    def of(cls, row: Row[Any]) -> _Doc:
        """The document of a row of ``_DOC_COLUMNS`` (unpacked: a stretch reads many rows)."""
        item_id, space_id, key, group, order_at, order_ts, terms, tail, length = row
        return cls(int(item_id), int(space_id), key, group, (order_at, float(order_ts), key),
                   loads_terms(terms) or {}, loads_terms(tail), int(length))

    @property
    def lends(self) -> Mapping[str, int]:
        """What the document adds to its neighbours."""
        return self.terms if self.tail is None else self.tail


@dataclass
class _Space:
    """A namespace's statistics row, changed in memory and written once at the end."""

    id: int
    namespace: str
    docs: int
    total_len: int
    window: tuple[int, int]
    rebuild: bool = False  # the window changed: re-derive every group
    changed: bool = False


@dataclass
class _Batch:
    """Working state of one batch's lexical changes."""

    conn: Connection
    spaces: dict[int, _Space] = field(default_factory=dict)
    by_namespace: dict[str, _Space] = field(default_factory=dict)
    points: dict[tuple[int, str], list[Order]] = field(default_factory=dict)
    loose: list[_Doc] = field(default_factory=list)  # written ungrouped documents

    def point(self, space_id: int, group: str | None, order: Order) -> None:
        if group is not None:
            self.points.setdefault((space_id, group), []).append(order)

    def arrived(self, doc: _Doc) -> None:
        """``doc``'s postings (and its neighbours') are to be derived in this batch."""
        self.point(doc.space_id, doc.group, doc.order)
        if doc.group is None:
            self.loose.append(doc)


def apply_lexical(
    conn: Connection,
    ops: Mapping[tuple[str, str], LexicalOp],
    upserted: Mapping[tuple[str, str], int],
    removed: Sequence[tuple[int, str]],
    *,
    undocumented: Collection[int] = (),
) -> None:
    """Bring the lexical index in line with a batch (see the module docstring).

    Args:
        conn: The batch's write transaction.
        ops: Lexical ops by ``(encoded namespace, key)`` (the last of each item).
        upserted: Ids of the items the batch put, by ``(encoded namespace, key)``.
        removed: ``(item id, encoded namespace)`` of items the batch deleted or expired.
        undocumented: Ids of upserted or removed items known to have no document (none to load).
    """
    if not (ops or upserted or removed):
        return
    batch = _Batch(conn)
    op_ids = _resolve(conn, ops, upserted)
    old = _load_docs(conn, [i for i in (*(i for i, _ in removed), *upserted.values(), *op_ids.values())
                            if i not in undocumented])
    _load_spaces(batch, {ns for ns, _ in ops}, {d.space_id for d in old.values()})
    dropped = [i for i, _ in removed if i in old]
    dropped += [i for pair, i in upserted.items() if pair not in ops and i in old]
    _drop(batch, [old[i] for i in dict.fromkeys(dropped)])
    _write(batch, ops, op_ids, old)
    _rederive(batch)
    _save_spaces(batch, {ns for _, ns in removed})


# ---------------------------------------------------------------- loading


def _resolve(conn: Connection, ops: Mapping[tuple[str, str], LexicalOp],
             upserted: Mapping[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    """Item ids of the ops' items (ops for missing items are left out)."""
    ids = {pair: upserted[pair] for pair in ops if pair in upserted}
    missing = [pair for pair in ops if pair not in ids]
    for namespace, keys in by_namespace(missing).items():
        for part in chunks(keys):
            stmt = sa.select(items.c.id, items.c.namespace, items.c.key).where(
                items.c.namespace == namespace, items.c.key.in_(list(part)))
            ids.update({(r.namespace, r.key): int(r.id) for r in conn.execute(stmt)})
    return ids


def _load_docs(conn: Connection, item_ids: Iterable[int]) -> dict[int, _Doc]:
    found: dict[int, _Doc] = {}
    for part in chunks(list(dict.fromkeys(item_ids))):
        found.update({int(r.item_id): _Doc.of(r) for r in conn.execute(_DOCS_OF, {"p_ids": list(part)})})
    return found


def _load_spaces(batch: _Batch, namespaces: set[str], space_ids: set[int]) -> None:
    rows: list[Row[Any]] = []
    for stmt, values in ((_SPACES_NAMED, sorted(namespaces)), (_SPACES_NUMBERED, sorted(space_ids))):
        for part in chunks(values):
            rows += batch.conn.execute(stmt, {"p_ids": list(part)})
    for row in rows:
        space = _Space(int(row.id), row.namespace, int(row.docs), int(row.total_len),
                       (int(row.ctx_before), int(row.ctx_after)))
        batch.spaces[space.id] = batch.by_namespace[space.namespace] = space


_NEW_SPACE = sa.insert(lexical_spaces).returning(lexical_spaces.c.id)


def _create_space(batch: _Batch, namespace: str, window: tuple[int, int]) -> _Space:
    """A new statistics row."""
    space_id = batch.conn.execute(_NEW_SPACE, {"namespace": namespace, "docs": 0, "total_len": 0,
                                               "ctx_before": window[0], "ctx_after": window[1]}).scalar_one()
    space = _Space(int(space_id), namespace, 0, 0, window, changed=True)
    batch.spaces[space.id] = batch.by_namespace[namespace] = space
    return space


# ---------------------------------------------------------------- drops and writes


def _delete_rows(conn: Connection, item_ids: Sequence[int], *, postings_only: bool = False) -> None:
    for part in chunks(list(item_ids)):
        conn.execute(_DROP_POSTINGS, {"p_ids": list(part)})
        if not postings_only:
            conn.execute(_DROP_DOCS, {"p_ids": list(part)})


def _drop(batch: _Batch, gone: list[_Doc]) -> None:
    for doc in gone:
        space = batch.spaces[doc.space_id]
        space.docs -= 1
        space.total_len -= doc.length
        space.changed = True
        batch.point(doc.space_id, doc.group, doc.order)
    _delete_rows(batch.conn, [d.item_id for d in gone])


def _write(batch: _Batch, ops: Mapping[tuple[str, str], LexicalOp],
           op_ids: Mapping[tuple[str, str], int], old: Mapping[int, _Doc]) -> None:
    rows: dict[int, dict[str, Any]] = {}
    replaced: list[int] = []
    for pair, op in ops.items():
        item_id = op_ids.get(pair)
        if item_id is None:
            continue
        namespace, key = pair
        space = batch.by_namespace.get(namespace) or _create_space(batch, namespace, op.window)
        if tuple(op.window) != space.window:
            space.window, space.rebuild = (int(op.window[0]), int(op.window[1])), True
        order: Order = (str(op.order[0]), float(op.order[1]), key)
        doc = _Doc(item_id, space.id, key, op.group, order, dict(op.terms),
                   None if op.tail is None else dict(op.tail), 0)
        previous = old.get(item_id)
        if previous is not None:
            replaced.append(item_id)
            space.total_len -= previous.length
            batch.point(space.id, previous.group, previous.order)
        else:
            space.docs += 1
        batch.arrived(doc)
        space.changed = True
        rows[item_id] = {"item_id": item_id, "space_id": space.id, "key": key, "grp": op.group,
                         "order_at": order[0], "order_ts": order[1], "ts": op.ts, "length": 0,
                         "terms": dumps_terms(doc.terms), "tail": dumps_terms(doc.tail)}
    _delete_rows(batch.conn, replaced)
    if rows:
        batch.conn.execute(_INSERT_DOCS, list(rows.values()))


# ---------------------------------------------------------------- neighbours


def _affected_positions(run: Sequence[_Doc], points: Iterable[Order], window: tuple[int, int]) -> list[int]:
    """Positions in a sorted ``run`` of the documents whose window holds a changed position:
    ``after`` documents before each changed position, and ``before`` documents from it on."""
    before, after = window
    keys = [d.order for d in run]
    found: set[int] = set()
    for point in points:
        at = bisect.bisect_left(keys, point)
        found.update(range(max(0, at - after), min(len(run), at + before + 1)))
    return sorted(found)


def _indexed(run: Sequence[_Doc], j: int, window: tuple[int, int]) -> Counter[str]:
    """The terms document ``j`` of ``run`` is indexed with: its own plus its window's tails."""
    before, after = window
    terms = Counter(run[j].terms)
    for neighbour in (*run[max(0, j - before):j][::-1], *run[j + 1:j + 1 + after]):
        terms.update(neighbour.lends)
    return terms


def _runs(batch: _Batch, space: _Space, group: str, points: list[Order]) -> list[tuple[list[_Doc], list[Order]]]:
    """Sorted stretches of ``group`` around ``points``, each with the points it covers."""
    params = {"p_space": space.id, "p_grp": group}
    reach = sum(space.window)
    if len(points) >= WHOLE_GROUP_AT:
        first, last = min(points), max(points)
        span = {**params, "p_at": first[0], "p_ts": first[1], "p_key": first[2], "q_at": last[0],
                "q_ts": last[1], "q_key": last[2], "p_before": reach, "p_after": reach}
        run = sorted((_Doc.of(r) for r in batch.conn.execute(_SPAN, span)), key=lambda d: d.order)
        return [(run, points)]
    out = []
    for point in points:
        at = {**params, "p_at": point[0], "p_ts": point[1], "p_key": point[2],
              "p_before": reach, "p_from": reach + 1}
        run = sorted((_Doc.of(r) for r in batch.conn.execute(_AROUND, at)), key=lambda d: d.order)
        out.append((run, [point]))
    return out


def _rederive(batch: _Batch) -> None:
    """Rewrite the postings of every document whose indexed terms may have changed."""
    chosen: dict[int, tuple[_Doc, Counter[str]]] = {d.item_id: (d, Counter(d.terms)) for d in batch.loose}
    for space in batch.spaces.values():
        if space.rebuild:
            rows = batch.conn.execute(_SPACE_GROUPS, {"p_space": space.id})
            groups: dict[str, list[_Doc]] = {}
            for doc in (_Doc.of(r) for r in rows):
                groups.setdefault(str(doc.group), []).append(doc)
            for run in groups.values():
                run.sort(key=lambda d: d.order)
                chosen.update({run[j].item_id: (run[j], _indexed(run, j, space.window)) for j in range(len(run))})
    for (space_id, group), points in batch.points.items():
        space = batch.spaces[space_id]
        if space.rebuild:
            continue
        for run, covered in _runs(batch, space, group, points):
            for j in _affected_positions(run, covered, space.window):
                chosen.setdefault(run[j].item_id, (run[j], _indexed(run, j, space.window)))
    if chosen:
        _rewrite(batch, list(chosen.values()))


def _rewrite(batch: _Batch, docs: list[tuple[_Doc, Counter[str]]]) -> None:
    _delete_rows(batch.conn, [d.item_id for d, _ in docs], postings_only=True)
    postings: list[dict[str, Any]] = []
    lengths: list[dict[str, Any]] = []
    for doc, terms in docs:
        length = sum(terms.values())
        space = batch.spaces[doc.space_id]
        space.total_len += length - doc.length
        space.changed = True
        lengths.append({"b_item": doc.item_id, "b_length": length})
        postings.extend({"space_id": doc.space_id, "term": term, "item_id": doc.item_id, "tf": tf,
                         "doc_len": length} for term, tf in terms.items())
    batch.conn.execute(_SET_LENGTH, lengths)
    if postings:
        batch.conn.execute(_INSERT_POSTINGS, postings)


# ---------------------------------------------------------------- statistics


def _save_spaces(batch: _Batch, emptied: set[str]) -> None:
    """Write the changed statistics rows; drop those of namespaces left without
    documents by a delete (so an erased namespace leaves no name behind)."""
    saved = [{"p_space": s.id, "p_docs": s.docs, "p_total": s.total_len, "p_before": s.window[0],
              "p_after": s.window[1]}
             for s in batch.spaces.values() if s.changed]
    if saved:
        batch.conn.execute(_SAVE_SPACE, saved)
    for part in chunks(sorted(emptied)):
        batch.conn.execute(sa.delete(lexical_spaces).where(
            lexical_spaces.c.namespace.in_(list(part)), lexical_spaces.c.docs == 0))
