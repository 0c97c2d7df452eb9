"""PostgreSQL: the change-log append that also commits, in one round trip.

The append takes the store's log lock, which is held to the commit (:mod:`..db.locks`).
Sent as its own statement, the lock would be held for two client round trips (the
append, then ``COMMIT``), and writers of different users would queue behind it. Here
the transaction's opening when no statement carried it yet, the statements the writer
queued for the commit (:mod:`..db.deferred`), the lock, the
append, the blanking of deleted items' names and ``COMMIT`` travel as one
simple-protocol string (values bound client side by the driver), so the lock is held
for as long as the server takes to run them.

Used only in a transaction :func:`~..db.engine.write_tx` began with ``scopes``, and
only while no one listens to the store's statements (statement counters and query-plan
tests see every statement through SQLAlchemy instead).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Connection

from hy_memory_langgraph.store.db import deferred
from hy_memory_langgraph.store.db.driver import observed
from hy_memory_langgraph.store.schema.tables import changes
from hy_memory_langgraph.store.sql.statements import table_name

__all__ = ["can_commit_with_log", "commit_with_log"]

_APPEND = ("INSERT INTO {table} (item_id, op, namespace, key) "
           "SELECT e.item_id, e.op, e.namespace, e.key FROM (SELECT pg_advisory_xact_lock(%s)) AS held, "
           "unnest(%s::bigint[], %s::text[], %s::text[], %s::text[]) "
           "WITH ORDINALITY AS e(item_id, op, namespace, key, n) ORDER BY e.n RETURNING seq")
_FORGET = "UPDATE {table} SET namespace = '', key = '' WHERE item_id = ANY(%s::bigint[])"


def can_commit_with_log(conn: Connection) -> bool:
    """Whether :func:`commit_with_log` may end ``conn``'s transaction."""
    return conn.dialect.name == "postgresql" and deferred.is_begun(conn) and not observed(conn)


def commit_with_log(conn: Connection, entries: Sequence[dict[str, Any]], lock_key: int,
                    forget: Sequence[int]) -> list[int]:
    """Take the log lock, append ``entries``, blank the log names of ``forget`` (deleted
    item ids) and commit; returns the entries' positions. On an error nothing is
    committed and the caller's transaction rolls back."""
    table = table_name(conn, changes)
    statements = [_APPEND.format(table=table)]
    values: list[Any] = [lock_key, [e["item_id"] for e in entries], [e["op"] for e in entries],
                         [e["namespace"] for e in entries], [e["key"] for e in entries]]
    if forget:
        statements.append(_FORGET.format(table=table))
        values.append(list(forget))
    statements.append("COMMIT")
    # after BEGIN and the scope locks when nothing was sent yet, and the queued statements
    rows, _ = deferred.run_owed(conn, statements, values, queued=True)
    deferred.mark_committed(conn)
    return [int(row[0]) for row in rows]
