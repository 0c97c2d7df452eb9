"""PostgreSQL: the change-log append that also commits, in one round trip.

The append takes the store's log lock, which is held to the commit (:mod:`..db.locks`).
Sent as its own statement, the lock would be held for two client round trips (the
append, then ``COMMIT``), and writers of different users would queue behind it. Here
the lock, the append, the blanking of deleted items' names and ``COMMIT`` travel as one
simple-protocol string (values bound client side by the driver), so the lock is held
for as long as the server takes to run them.

Used only in a transaction :func:`~..db.engine.write_tx` began with ``scopes``, and
only while no one listens to the store's statements (statement counters and query-plan
tests see every statement through SQLAlchemy instead).

Example:
    >>> _table(None, lambda name: name)
    'hy_store_changes'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from hy_memory_langgraph.store.db.engine import is_begun, mark_committed, schema_of

__all__ = ["can_commit_with_log", "commit_with_log"]

_APPEND = ("INSERT INTO {table} (item_id, op, namespace, key) "
           "SELECT e.item_id, e.op, e.namespace, e.key FROM (SELECT pg_advisory_xact_lock(%s)) AS held, "
           "unnest(%s::bigint[], %s::text[], %s::text[], %s::text[]) "
           "WITH ORDINALITY AS e(item_id, op, namespace, key, n) ORDER BY e.n RETURNING seq")
_FORGET = "UPDATE {table} SET namespace = '', key = '' WHERE item_id = ANY(%s::bigint[])"


def _table(schema: str | None, quote: Callable[[str], str]) -> str:
    return f"{quote(schema)}.hy_store_changes" if schema else "hy_store_changes"


def can_commit_with_log(conn: Connection) -> bool:
    """Whether :func:`commit_with_log` may end ``conn``'s transaction."""
    return (conn.dialect.name == "postgresql" and is_begun(conn) and not conn._echo
            and not conn.dispatch.before_cursor_execute and not conn.dispatch.after_cursor_execute)


def commit_with_log(conn: Connection, entries: Sequence[dict[str, Any]], lock_key: int,
                    forget: Sequence[int]) -> list[int]:
    """Take the log lock, append ``entries``, blank the log names of ``forget`` (deleted
    item ids) and commit; returns the entries' positions. On an error nothing is
    committed and the caller's transaction rolls back."""
    import psycopg  # noqa: PLC0415 - the PostgreSQL driver, present whenever this runs

    table = _table(schema_of(conn), conn.dialect.identifier_preparer.quote)
    statements = [_APPEND.format(table=table)]
    values: list[Any] = [lock_key, [e["item_id"] for e in entries], [e["op"] for e in entries],
                         [e["namespace"] for e in entries], [e["key"] for e in entries]]
    if forget:
        statements.append(_FORGET.format(table=table))
        values.append(list(forget))
    statements.append("COMMIT")
    sql = "; ".join(statements)
    driver = conn.connection.driver_connection
    try:
        with psycopg.ClientCursor(driver) as cursor:
            cursor.execute(sql, values)
            seqs = [int(row[0]) for row in cursor.fetchall()]
    except psycopg.Error as exc:
        if conn.dialect.is_disconnect(exc, driver, None):
            conn.invalidate(exc)
        raise sa.exc.DBAPIError.instance(sql, values, exc, psycopg.Error, dialect=conn.dialect) from exc
    mark_committed(conn)
    return seqs
