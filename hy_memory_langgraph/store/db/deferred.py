"""PostgreSQL: statements without results that travel with the commit.

A write transaction that :func:`~.engine.write_tx` began itself (with ``scopes``) is
ended by the store: a ``COMMIT`` it sends, or one the change-log append carries
(:mod:`..sql.log_commit`). A statement whose result the writer never reads (a TTL
refresh, dropping the vectors of re-put items, dropping emptied lexical statistics) need
not cost a client round trip of its own: queued with :func:`defer`, it is sent in the
same simple-protocol string as the commit, before it, in the order queued (values bound
client side by the driver). It then runs after the statements the writer sent meanwhile,
so only statements nothing later in the transaction depends on are queued. Nothing
queued runs when the transaction rolls back.

Statements are never queued while someone listens to the connection's statements
(statement counters and query-plan tests see each statement through SQLAlchemy), nor
outside such a transaction: :func:`defer` then says so and the caller runs the
statement itself.

Example:
    >>> take(type("Conn", (), {"info": {}})())
    ([], [])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Connection

from hy_memory_langgraph.store.db.direct import run_text
from hy_memory_langgraph.store.db.driver import as_sqlalchemy_error, observed

__all__ = ["defer", "end_with_commit", "forget", "is_begun", "is_committed", "mark_begun",
           "mark_committed", "run_client", "take"]

_BEGUN, _COMMITTED, _QUEUE = "hy_begun", "hy_committed", "hy_deferred"


def mark_begun(conn: Connection) -> None:
    """Note that the caller began ``conn``'s transaction itself (and will end it)."""
    conn.info[_BEGUN], conn.info[_COMMITTED] = True, False
    conn.info.pop(_QUEUE, None)


def is_begun(conn: Connection) -> bool:
    """Whether ``conn`` is in a transaction :func:`~.engine.write_tx` began itself."""
    return bool(conn.info.get(_BEGUN))


def is_committed(conn: Connection) -> bool:
    """Whether a statement of the block committed the transaction :func:`is_begun` names."""
    return bool(conn.info.get(_COMMITTED))


def mark_committed(conn: Connection) -> None:
    """Note that a statement of the block committed its transaction (the change-log
    append does): nothing is left to commit."""
    conn.info[_COMMITTED] = True


def forget(conn: Connection) -> None:
    """Clear the marks and the queue (the transaction ended, one way or the other)."""
    for key in (_BEGUN, _COMMITTED, _QUEUE):
        conn.info.pop(key, None)


def defer(conn: Connection, sql: str, values: Sequence[Any]) -> bool:
    """Queue ``sql`` (``%s`` placeholders for ``values``) to be sent with the commit;
    ``False``: it cannot be queued here, the caller runs it now."""
    if conn.dialect.name != "postgresql" or not is_begun(conn) or observed(conn):
        return False
    conn.info.setdefault(_QUEUE, []).append((sql, list(values)))
    return True


def take(conn: Connection) -> tuple[list[str], list[Any]]:
    """The queued statements and their values, in order (the queue is emptied)."""
    queued = conn.info.pop(_QUEUE, None) or []
    return [sql for sql, _ in queued], [value for _, values in queued for value in values]


def run_client(conn: Connection, sql: str, values: Sequence[Any], *, skip: int = 0) -> list[tuple[Any, ...]]:
    """Run ``sql`` (several statements allowed) with client-side binding; the rows of the
    result after the first ``skip`` ones (none for a last statement without rows).
    A driver error is raised as SQLAlchemy's (``sqlalchemy.exc.DBAPIError`` …)."""
    import psycopg  # noqa: PLC0415 - the PostgreSQL driver, present whenever this runs

    driver = conn.connection.driver_connection
    try:
        with psycopg.ClientCursor(driver) as cursor:
            cursor.execute(sql, list(values))
            for _ in range(skip):
                cursor.nextset()
            return cursor.fetchall() if cursor.description is not None else []
    except psycopg.Error as exc:
        raise as_sqlalchemy_error(conn, sql, list(values), exc) from exc


def end_with_commit(conn: Connection) -> None:
    """Send the queued statements and ``COMMIT`` in one round trip."""
    statements, values = take(conn)
    if not statements:
        run_text(conn, "COMMIT")
        return
    run_client(conn, "; ".join([*statements, "COMMIT"]), values, skip=len(statements))
