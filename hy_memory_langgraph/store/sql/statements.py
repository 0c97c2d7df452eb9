"""SQL statements of :class:`HyMemoryStore` (SQLAlchemy Core, bind parameters only).

Everything here is portable between SQLite and PostgreSQL; the only dialect
switch is the ``INSERT ... ON CONFLICT`` construct (both dialects offer the same
API). Times are integer microseconds since the epoch; rows become langgraph
:class:`~langgraph.store.base.Item` objects with UTC-aware datetimes.

Example:
    >>> to_datetime(0).isoformat()
    '1970-01-01T00:00:00+00:00'
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple, TypeVar

import sqlalchemy as sa
from langgraph.store.base import Item, SearchItem
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Row

from hy_memory_langgraph.errors import ConfigError
from hy_memory_langgraph.store.namespaces import decode, prefix_range
from hy_memory_langgraph.store.schema.tables import changes, items, lexical_docs, meta, scope_of, vectors

log = logging.getLogger(__name__)

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_CHUNK = 900  # values per IN list (well under SQLite's bound-parameter limit)
T = TypeVar("T")

ITEM_COLUMNS = (
    items.c.id,
    items.c.namespace,
    items.c.key,
    items.c.value,
    items.c.created_at,
    items.c.updated_at,
    items.c.ttl_minutes,
)


def now_us() -> int:
    """Current UTC time in integer microseconds."""
    return time.time_ns() // 1000


def to_datetime(us: int) -> datetime:
    """Exact conversion of epoch microseconds to an aware UTC datetime."""
    return _EPOCH + timedelta(microseconds=us)


def chunks(values: Sequence[T], size: int = _CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def by_namespace(pairs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Distinct ``(namespace, key)`` pairs grouped by namespace, in first-seen order.

    Queries take one namespace and a key list: SQLite answers ``namespace = ? AND key IN
    (…)`` from the unique index, but scans the table for a row-value ``IN`` of pairs.
    """
    grouped: dict[str, list[str]] = {}
    for namespace, key in dict.fromkeys(pairs):
        grouped.setdefault(namespace, []).append(key)
    return grouped


_NEVER = 2**63 - 1
#: A read time before every expiry: reads at it see expired rows not yet swept.
EVERY_ROW = -(2**63)


def live(now: int) -> sa.ColumnElement[bool]:
    """Items not expired at ``now``.

    Written as ``coalesce(expires_at, MAX) > now`` on purpose: almost every row
    qualifies, so an index on ``expires_at`` would only slow the scan down.
    """
    return sa.func.coalesce(items.c.expires_at, _NEVER) > now


# Prebuilt statements for the hot read paths (named bind parameters, built once).
_NOW = sa.bindparam("hy_now", type_=sa.BigInteger())
_LIVE = sa.func.coalesce(items.c.expires_at, _NEVER) > _NOW
_NS = sa.bindparam("hy_ns", type_=sa.Text())
# Narrow prefix: an index range. Wide prefix: a non-indexable test, so SQLite scans
# the table (filters) or walks the updated_at index (newest first) instead.
_UNDER_RANGE = sa.or_(
    items.c.namespace == _NS,
    sa.and_(
        items.c.namespace >= sa.bindparam("hy_ns_lo", type_=sa.Text()),
        items.c.namespace < sa.bindparam("hy_ns_hi", type_=sa.Text()),
    ),
)
_UNDER_SCAN = sa.or_(
    items.c.namespace == _NS,
    sa.func.substr(items.c.namespace, 1, sa.bindparam("hy_ns_len", type_=sa.Integer()))
    == sa.bindparam("hy_ns_lo", type_=sa.Text()),
)
_BY_IDS = sa.select(*ITEM_COLUMNS).where(items.c.id.in_(sa.bindparam("hy_ids", expanding=True)), _LIVE)
_LAST_SEQ = sa.select(sa.func.max(changes.c.seq))
# Two single-aggregate selects on purpose: SQLite answers a lone min() or max() over the
# INTEGER PRIMARY KEY with one b-tree seek, but ``SELECT min(seq), max(seq)`` scans the log.
_FIRST_SEQ = sa.select(sa.func.min(changes.c.seq))
_MAX_ID = sa.select(sa.func.max(items.c.id))
_COUNT_UNDER = sa.select(sa.func.count()).select_from(
    sa.select(sa.literal(1)).where(_UNDER_RANGE).limit(sa.bindparam("hy_cap", type_=sa.Integer())).subquery()
)
_NARROW_MIN = 2000  # below this many rows under a prefix the index always wins


class Where(NamedTuple):
    """A boolean clause over items plus the values of its named parameters."""

    clause: sa.ColumnElement[bool]
    params: dict[str, Any]


def _is_narrow(conn: Connection, params: dict[str, Any]) -> bool:
    """Whether few enough rows lie under the prefix for the namespace index to pay off."""
    approx_rows = int(conn.execute(_MAX_ID).scalar() or 0)
    cap = max(_NARROW_MIN, approx_rows // 8)
    return int(conn.execute(_COUNT_UNDER, {**params, "hy_cap": cap}).scalar() or 0) < cap


# The clauses item_where builds without an extra filter, built once, and the listing
# statements over each (building a statement costs more than SQLite takes to run it).
_LIVE_UNDER = {_UNDER_RANGE: sa.and_(_LIVE, _UNDER_RANGE), _UNDER_SCAN: sa.and_(_LIVE, _UNDER_SCAN)}
_LIMIT = sa.bindparam("hy_limit", type_=sa.Integer())
_OFFSET = sa.bindparam("hy_offset", type_=sa.Integer())


def _newest_first(clause: sa.ColumnElement[bool]) -> sa.Select[Any]:
    return (sa.select(*ITEM_COLUMNS).where(clause)
            .order_by(items.c.updated_at.desc(), items.c.id.desc()).limit(_LIMIT).offset(_OFFSET))


def _namespaces(clause: sa.ColumnElement[bool]) -> sa.Select[Any]:
    return sa.select(items.c.namespace).where(clause).distinct()


_PREBUILT_CLAUSES = (_LIVE, *_LIVE_UNDER.values())
#: ``id(clause) -> (clause, newest-first listing, distinct namespaces)`` per prebuilt clause.
_LISTINGS = {id(c): (c, _newest_first(c), _namespaces(c)) for c in _PREBUILT_CLAUSES}


def _listing(clause: sa.ColumnElement[bool], which: int) -> sa.Select[Any] | None:
    """The prebuilt statement ``which`` (1: newest first, 2: namespaces) over ``clause``."""
    found = _LISTINGS.get(id(clause))
    return found[which] if found is not None and found[0] is clause else None


def item_where(
    conn: Connection, prefix: str, now: int, extra: sa.ColumnElement[bool] | None = None
) -> Where:
    """``live AND namespace under prefix AND extra``, shaped for the best SQLite plan."""
    params: dict[str, Any] = {"hy_now": now}
    clause: sa.ColumnElement[bool] = _LIVE
    if prefix:
        low, high = prefix_range(prefix)
        params.update(hy_ns=prefix, hy_ns_lo=low, hy_ns_hi=high, hy_ns_len=len(low))
        # PostgreSQL's planner weighs the range itself (column statistics): no probe
        narrow = conn.dialect.name == "postgresql" or _is_narrow(conn, params)
        under = _UNDER_RANGE if narrow else _UNDER_SCAN
        clause = _LIVE_UNDER[under] if extra is None else sa.and_(clause, under)
    if extra is not None:
        clause = sa.and_(clause, extra)
    return Where(clause, params)


def stored_value(row: Row[Any]) -> dict[str, Any] | None:
    """The JSON object a row holds, or ``None`` (logged) when it cannot be read: one
    damaged row is skipped, never fatal for the namespace's other items."""
    try:
        value = json.loads(row.value)
    except (ValueError, TypeError, RecursionError) as exc:
        log.warning("item %r in %r is unreadable (%s: %s); skipped", row.key, row.namespace,
                    type(exc).__name__, exc)
        return None
    if not isinstance(value, dict):
        log.warning("item %r in %r holds a %s, not a JSON object; skipped", row.key, row.namespace,
                    type(value).__name__)
        return None
    return value


def row_to_item(row: Row[Any]) -> Item | None:
    value = stored_value(row)
    if value is None:
        return None
    return Item(
        value=value,
        key=row.key,
        namespace=decode(row.namespace),
        created_at=to_datetime(row.created_at),
        updated_at=to_datetime(row.updated_at),
    )


def row_to_search_item(row: Row[Any], score: float | None) -> SearchItem | None:
    value = stored_value(row)
    if value is None:
        return None
    return SearchItem(
        namespace=decode(row.namespace),
        key=row.key,
        value=value,
        created_at=to_datetime(row.created_at),
        updated_at=to_datetime(row.updated_at),
        score=score,
    )


# ---------------------------------------------------------------- reads


# One namespace, several keys: an index range per key. (A row-value ``IN (VALUES …)``
# over several pairs makes SQLite scan the whole table.)
_BY_NS_KEYS = sa.select(*ITEM_COLUMNS).where(
    items.c.namespace == _NS, items.c.key.in_(sa.bindparam("hy_keys", expanding=True)), _LIVE
)
_BY_NS_KEYS_LOCKED = _BY_NS_KEYS.with_for_update()
# Keys of several namespaces in one statement: both lists through the unique index (each
# namespace with each key), the rows of pairs nobody asked for dropped by the caller.
_BY_NSS_KEYS = sa.select(*ITEM_COLUMNS).where(
    items.c.namespace.in_(sa.bindparam("hy_nss", expanding=True)),
    items.c.key.in_(sa.bindparam("hy_keys", expanding=True)), _LIVE
)
#: Gets of several namespaces are one statement while namespaces × keys stays within this.
CROSS_MAX = 16


def keys_requests(pairs: Sequence[tuple[str, str]], now: int, *,
                  for_update: bool = False) -> list[tuple[Any, dict[str, Any]]]:
    """The reads of :func:`fetch_by_keys`: one per namespace and chunk of keys, or one in
    all when few namespaces and keys are asked for (at most :data:`CROSS_MAX` pairs of
    them; it may return rows of pairs not asked for: keep those of :func:`by_key`)."""
    grouped = by_namespace(pairs)
    if len(grouped) > 1 and not for_update:
        keys = list(dict.fromkeys(key for _, key in pairs))
        if len(grouped) * len(keys) <= CROSS_MAX:
            return [(_BY_NSS_KEYS, {"hy_nss": list(grouped), "hy_keys": keys, "hy_now": now})]
    stmt = _BY_NS_KEYS_LOCKED if for_update else _BY_NS_KEYS
    return [(stmt, {"hy_ns": namespace, "hy_keys": list(part), "hy_now": now})
            for namespace, keys in grouped.items() for part in chunks(keys)]


def by_key(rows: Iterable[Any], wanted: Collection[tuple[str, str]]) -> dict[tuple[str, str], Row[Any]]:
    """The rows of the ``wanted`` ``(encoded namespace, key)`` pairs, by pair."""
    return {(r.namespace, r.key): r for r in rows if (r.namespace, r.key) in wanted}


def fetch_by_keys(
    conn: Connection, pairs: Sequence[tuple[str, str]], now: int, *, for_update: bool = False
) -> dict[tuple[str, str], Row[Any]]:
    """Live rows for ``(encoded namespace, key)`` pairs (one indexed query per namespace).

    ``for_update`` locks the rows until the transaction ends (``SELECT … FOR
    UPDATE`` on PostgreSQL; SQLite's write transaction already excludes writers).
    """
    return fetch_requested(conn, keys_requests(pairs, now, for_update=for_update), pairs)


def fetch_requested(conn: Connection, requests: Sequence[tuple[Any, dict[str, Any]]],
                    pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Row[Any]]:
    """:func:`fetch_by_keys` with its reads already made (``requests``, of :func:`keys_requests`)."""
    found: dict[tuple[str, str], Row[Any]] = {}
    wanted = set(pairs)
    for stmt, params in requests:
        found.update(by_key(conn.execute(stmt, params), wanted))
    return found


def fetch_by_ids(conn: Connection, ids: Iterable[int], now: int) -> dict[int, Row[Any]]:
    """Live rows by item id."""
    found: dict[int, Row[Any]] = {}
    for part in chunks(list(ids)):
        found.update({r.id: r for r in conn.execute(_BY_IDS, {"hy_ids": list(part), "hy_now": now})})
    return found


def newest_first(conn: Connection, where: Where, limit: int, offset: int) -> list[Row[Any]]:
    """Matching rows ordered by ``updated_at`` (then id) descending."""
    stmt = _listing(where.clause, 1)
    if stmt is None:  # a value filter: built for this call
        stmt = _newest_first(where.clause)
    return list(conn.execute(stmt, {**where.params, "hy_limit": limit, "hy_offset": offset}))


def without_vectors(where: Where) -> Where:
    """``where`` restricted to items that have no vector."""
    has_vector = sa.exists().where(vectors.c.item_id == items.c.id)
    return Where(sa.and_(where.clause, sa.not_(has_vector)), where.params)


def matching_ids(conn: Connection, where: Where) -> list[Row[Any]]:
    """``(id, scope)`` of the matching rows."""
    return list(conn.execute(sa.select(items.c.id, items.c.scope).where(where.clause), where.params))


def scopes_under(conn: Connection, prefix: str) -> list[str]:
    """Distinct scopes holding items under an encoded prefix shorter than a scope."""
    stmt = sa.select(items.c.scope).distinct().where(items.c.scope.is_not(None))
    if prefix:
        low, high = prefix_range(prefix)
        stmt = stmt.where(sa.or_(items.c.scope == prefix,
                                 sa.and_(items.c.scope >= low, items.c.scope < high)))
    return list(conn.execute(stmt).scalars())


def live_namespaces(conn: Connection, now: int, prefix: str) -> list[str]:
    """Distinct encoded namespaces holding at least one live item under ``prefix``."""
    where = item_where(conn, prefix, now)
    stmt = _listing(where.clause, 2)
    assert stmt is not None  # item_where without an extra filter gives a prebuilt clause
    return list(conn.execute(stmt, where.params).scalars())


# ---------------------------------------------------------------- writes


def _upsert_statement(insert: Any, vectorless: sa.ColumnElement[bool], documented: sa.ColumnElement[bool]) -> Any:
    stmt = insert(items)
    expired = sa.and_(
        items.c.expires_at.is_not(None), items.c.expires_at <= stmt.excluded.updated_at
    )
    return stmt.on_conflict_do_update(
        index_elements=[items.c.namespace, items.c.key],
        set_={
            "value": stmt.excluded.value,
            "scope": stmt.excluded.scope,
            "updated_at": stmt.excluded.updated_at,
            "ttl_minutes": stmt.excluded.ttl_minutes,
            "expires_at": stmt.excluded.expires_at,
            "created_at": sa.case((expired, stmt.excluded.created_at), else_=items.c.created_at),
        },
    ).returning(items.c.id, items.c.namespace, items.c.key, vectorless.label("vectorless"),
                documented.label("documented"))


# Each written row tells whether it may have vectors to drop (``vectorless`` when it has
# none) and whether it has a lexical document to load, so a write of new rows reads and
# drops neither. PostgreSQL tells a row it inserted (no earlier vectors can exist for its new
# id) from one it updated (an updated row carries this transaction's id in xmax); SQLite
# looks the row's vectors up (its RETURNING sees the tables as the statement found them).
# The subqueries name the written row as the INSERT's target (SQLAlchemy does not correlate
# a subquery of an INSERT's RETURNING: written with the column, it would test whether any
# item has a document).
_WRITTEN_ID = sa.literal_column(f"{items.name}.id")
_DOCUMENTED_ROW = sa.exists().where(lexical_docs.c.item_id == _WRITTEN_ID)
_UPSERT = {
    "sqlite": _upsert_statement(sqlite.insert, ~sa.exists().where(vectors.c.item_id == _WRITTEN_ID),
                                _DOCUMENTED_ROW),
    "postgresql": _upsert_statement(postgresql.insert, sa.literal_column("xmax = 0", sa.Boolean()),
                                    _DOCUMENTED_ROW),
}


class Upserted(NamedTuple):
    """What :func:`upsert_items` wrote: ids by ``(encoded namespace, key)``, the ids known
    to have no vectors to drop (new rows; on SQLite also rows that had none) and the ids
    known to have no lexical document."""

    ids: dict[tuple[str, str], int]
    vectorless: set[int]
    undocumented: set[int]


def upsert_items(conn: Connection, rows: Sequence[dict[str, Any]]) -> Upserted:
    """Insert or update items; ``created_at`` survives unless the old row had expired.

    Each row's ``scope`` is its namespace's (:func:`scope_of`) when the item has vectors,
    else ``None``: the scope index holds only items a scope load reads.
    """
    stmt = _UPSERT.get(conn.dialect.name)
    if stmt is None:
        raise ConfigError(f"HyMemoryStore does not support the {conn.dialect.name!r} dialect")
    written = Upserted({}, set(), set())
    for item_id, namespace, key, vectorless, documented in conn.execute(stmt, list(rows)):  # insertmanyvalues
        written.ids[(namespace, key)] = item_id
        if vectorless:
            written.vectorless.add(item_id)
        if not documented:
            written.undocumented.add(item_id)
    return written


_DOCUMENTED = sa.exists().where(lexical_docs.c.item_id == items.c.id).label("documented")
_KEYS_IN_NS = sa.and_(items.c.namespace == _NS, items.c.key.in_(sa.bindparam("hy_keys", expanding=True)))
_DELETE_KEYS = {
    "postgresql": sa.delete(items).where(_KEYS_IN_NS).returning(
        items.c.id, items.c.namespace, items.c.key, _DOCUMENTED),
    "sqlite": sa.select(items.c.id, items.c.namespace, items.c.key, _DOCUMENTED).where(_KEYS_IN_NS),
}


def delete_items(conn: Connection, pairs: Sequence[tuple[str, str]]) -> list[Row[Any]]:
    """Delete items (and their vectors) by key; returns the deleted ``(id, namespace, key)``.

    Each row tells whether the item has a lexical document (``documented``). PostgreSQL:
    one ``DELETE … RETURNING`` per namespace, the vectors going by the foreign key's
    cascade. SQLite: the ids first, then vectors and items by id.
    """
    gone: list[Row[Any]] = []
    server = conn.dialect.name == "postgresql"
    found = _DELETE_KEYS["postgresql" if server else "sqlite"]
    for namespace, keys in by_namespace(pairs).items():
        for part in chunks(keys):
            gone.extend(conn.execute(found, {"hy_ns": namespace, "hy_keys": list(part)}))
    if not server:
        delete_ids(conn, [r.id for r in gone])
    return gone


def delete_ids(conn: Connection, ids: Sequence[int]) -> None:
    """Delete items and their vectors by id (on PostgreSQL the cascade takes the vectors)."""
    for part in chunks(ids):
        if conn.dialect.name != "postgresql":
            conn.execute(sa.delete(vectors).where(vectors.c.item_id.in_(part)))
        conn.execute(sa.delete(items).where(items.c.id.in_(part)))


_DROP_VECTORS = sa.delete(vectors).where(vectors.c.item_id.in_(sa.bindparam("hy_ids", expanding=True)))
_INSERT_VECTORS = sa.insert(vectors)


def replace_vectors(
    conn: Connection, item_ids: Sequence[int], rows: Sequence[dict[str, Any]]
) -> None:
    """Drop the vectors of ``item_ids`` (rows that existed) and insert ``rows``
    (item_id, pos, field, text, embedding)."""
    for part in chunks(item_ids):
        conn.execute(_DROP_VECTORS, {"hy_ids": list(part)})
    if rows:
        conn.execute(_INSERT_VECTORS, list(rows))


def refresh_ttl(conn: Connection, ids: Sequence[int], now: int) -> None:
    """Push back ``expires_at`` of live items that carry a TTL.

    On PostgreSQL a row another writer holds is skipped, never waited for (its scope is
    not locked by this writer, :mod:`..db.locks`): that writer either deletes it or
    writes it again, which sets a fresh expiry anyway.
    """
    new_expiry = sa.cast(now + items.c.ttl_minutes * 60_000_000, sa.BigInteger)
    for part in chunks(ids):
        match = sa.and_(items.c.id.in_(part), items.c.ttl_minutes.is_not(None), live(now))
        if conn.dialect.name == "postgresql":
            free = sa.select(items.c.id).where(match).with_for_update(skip_locked=True)
            match = items.c.id.in_(free.scalar_subquery())
        conn.execute(sa.update(items).where(match).values(expires_at=new_expiry))


def expired_rows(conn: Connection, now: int) -> list[Row[Any]]:
    stmt = sa.select(items.c.id, items.c.namespace, items.c.key).where(
        items.c.expires_at.is_not(None), items.c.expires_at <= now
    )
    return list(conn.execute(stmt))


# ---------------------------------------------------------------- change log


_APPEND = sa.insert(changes).returning(changes.c.seq)


def _locked_append() -> Any:
    """PostgreSQL: take the log lock, then append entries given as arrays, in order, in
    one statement (the lock's subquery yields its row before any entry is inserted)."""
    arrays = [sa.bindparam(f"hy_{name}", type_=postgresql.ARRAY(kind))
              for name, kind in (("ids", sa.BigInteger), ("ops", sa.Text), ("nss", sa.Text), ("keys", sa.Text))]
    entry = sa.func.unnest(*arrays).table_valued(
        sa.column("item_id", sa.BigInteger), sa.column("op", sa.Text), sa.column("namespace", sa.Text),
        sa.column("key", sa.Text), with_ordinality="n").render_derived()
    held = sa.select(sa.func.pg_advisory_xact_lock(sa.bindparam("hy_lock", type_=sa.BigInteger))
                     .label("held")).subquery("held")
    rows = (sa.select(entry.c.item_id, entry.c.op, entry.c.namespace, entry.c.key)
            .select_from(held.join(entry, sa.true())).order_by(entry.c.n))
    return sa.insert(changes).from_select(["item_id", "op", "namespace", "key"], rows).returning(changes.c.seq)


_LOCKED_APPEND = _locked_append()


def append_changes(conn: Connection, entries: Sequence[dict[str, Any]], *,
                   lock_key: int | None = None) -> list[int]:
    """Append ``{item_id, op, namespace, key}`` entries; returns their sequence numbers.

    With ``lock_key`` (PostgreSQL), the store's log lock is taken in the same statement,
    before the entries get their positions (:mod:`..db.locks`).
    """
    if lock_key is None:
        return [row.seq for row in conn.execute(_APPEND, list(entries))]
    params = {"hy_lock": lock_key, "hy_ids": [e["item_id"] for e in entries],
              "hy_ops": [e["op"] for e in entries], "hy_nss": [e["namespace"] for e in entries],
              "hy_keys": [e["key"] for e in entries]}
    return [int(seq) for seq in conn.execute(_LOCKED_APPEND, params).scalars()]


def change_bounds(conn: Connection) -> tuple[int, int]:
    """``(min seq, max seq)`` of the log, ``(0, 0)`` when empty."""
    low = conn.execute(_FIRST_SEQ).scalar()
    high = conn.execute(_LAST_SEQ).scalar()
    return int(low or 0), int(high or 0)


def last_seq(conn: Connection) -> int:
    return int(conn.execute(_LAST_SEQ).scalar() or 0)


def changes_since(conn: Connection, seq: int) -> list[Row[Any]]:
    """``(seq, item_id, namespace)`` of the log entries after ``seq``, in order."""
    stmt = sa.select(changes.c.seq, changes.c.item_id, changes.c.namespace).where(changes.c.seq > seq)
    return list(conn.execute(stmt.order_by(changes.c.seq)))


def forget_change_names(conn: Connection, item_ids: Sequence[int]) -> None:
    """Blank the namespace and key of earlier log entries of deleted items (erasure).

    Replay only needs the item ids; the names would keep a deleted user's id and keys.
    """
    for part in chunks(list(item_ids)):
        conn.execute(sa.update(changes).where(changes.c.item_id.in_(part))
                     .values(namespace="", key=""))


def prune_changes(conn: Connection, upto: int) -> None:
    """Forget log entries with ``seq <= upto`` (readers further behind rebuild)."""
    conn.execute(sa.delete(changes).where(changes.c.seq <= upto))


# ---------------------------------------------------------------- vectors & meta


_VECTORS = (
    sa.select(vectors.c.item_id, vectors.c.pos, items.c.namespace, vectors.c.embedding)
    .join(items, items.c.id == vectors.c.item_id)
)


def vectors_of(conn: Connection, now: int, item_ids: Sequence[int]) -> Iterator[Row[Any]]:
    """``(item_id, pos, namespace, embedding)`` of the live items among ``item_ids``."""
    for part in chunks(item_ids):
        yield from conn.execute(_VECTORS.where(live(now), vectors.c.item_id.in_(part)))


_SCOPE_VECTORS = _VECTORS.where(items.c.scope == sa.bindparam("hy_scope", type_=sa.Text()), _LIVE)


def vectors_of_scope(conn: Connection, now: int, scope: str) -> list[Row[Any]]:
    """``(item_id, pos, namespace, embedding)`` of every live item of one scope.

    Fetched at once: buffered row-by-row streaming costs about three times as much.
    """
    return list(conn.execute(_SCOPE_VECTORS, {"hy_scope": scope, "hy_now": now}).all())


_SCOPE_SIZE = (sa.select(sa.func.count(), sa.func.coalesce(sa.func.max(vectors.c.pos), 0))
               .select_from(vectors.join(items, items.c.id == vectors.c.item_id))
               .where(items.c.scope == sa.bindparam("hy_scope", type_=sa.Text()), _LIVE))
_SCOPE_PAGE = (_SCOPE_VECTORS.where(items.c.id > sa.bindparam("hy_after", type_=sa.BigInteger()))
               .order_by(items.c.id, vectors.c.pos).limit(sa.bindparam("hy_rows", type_=sa.Integer())))


def scope_size(conn: Connection, now: int, scope: str) -> tuple[int, int]:
    """How many vectors the live items of one scope hold, and the highest ``pos`` among
    them (``0``: one vector per item)."""
    count, top = conn.execute(_SCOPE_SIZE, {"hy_scope": scope, "hy_now": now}).one()
    return int(count), int(top)


def scope_pages(conn: Connection, now: int, scope: str, rows: int) -> Iterator[list[Any]]:
    """:func:`vectors_of_scope`'s rows, ``rows`` at a time in item order (each page its own
    query, resumed after the last item read): the caller holds one page of rows at a time.
    For scopes of one vector per item (a page may end inside an item's vectors)."""
    after = -(2**63)
    while True:
        page = conn.execute(_SCOPE_PAGE, {"hy_scope": scope, "hy_now": now, "hy_after": after,
                                          "hy_rows": rows}).all()
        if page:
            yield page
        if len(page) < rows:
            return
        after = int(page[-1].item_id)


def get_meta(conn: Connection, key: str) -> str | None:
    return conn.execute(sa.select(meta.c.value).where(meta.c.key == key)).scalar()


def set_meta_default(conn: Connection, key: str, value: str) -> str:
    """Store ``value`` under ``key`` unless present; return the stored value."""
    current = get_meta(conn, key)
    if current is None:
        conn.execute(sa.insert(meta).values(key=key, value=value))
        return value
    return current
