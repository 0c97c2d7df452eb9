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

The transaction's opening (``BEGIN`` and the scope locks, :mod:`.locks`) travels the
other way: :func:`~.engine.write_tx` notes it with :func:`mark_begun` instead of sending
it, and the first statement of the block carries it in its own round trip (the prebuilt
statements of :mod:`.direct`, the change-log append, the commit, take it with
:func:`opening`). A statement run through SQLAlchemy sends it first, on its own: the
engine's ``before_cursor_execute`` hook (:func:`send_opening_first`, a listener
:func:`~.driver.observed` does not count). A block that sent nothing
sends nothing, not even ``BEGIN``.

Statements are never queued, nor the opening held back, while someone listens to the
connection's statements (statement counters and query-plan tests see each statement
through SQLAlchemy), nor outside such a transaction: :func:`defer` then says so and the
caller runs the statement itself.

Example:
    >>> take(type("Conn", (), {"info": {}})())
    ([], [])
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from hy_memory_langgraph.store.db.driver import OWN_LISTENERS, as_sqlalchemy_error, observed

__all__ = ["can_defer", "defer", "end_with_commit", "forget", "is_begun", "is_committed", "is_open", "mark_begun",
           "mark_committed", "opening", "run_client", "run_described", "run_owed", "send_opening", "send_opening_first",
           "take"]

_BEGUN, _COMMITTED, _QUEUE, _OPENING = "hy_begun", "hy_committed", "hy_deferred", "hy_opening"


def mark_begun(conn: Connection, opening: Sequence[str] = ()) -> None:
    """Note that the caller began ``conn``'s transaction itself (and will end it).

    ``opening``: the statements that begin it, not sent yet; the first statement sent on
    ``conn`` carries them (:func:`opening`), one sent through SQLAlchemy sends them first
    (the engine must have :func:`send_opening_first`)."""
    info = conn.info
    info[_BEGUN], info[_COMMITTED] = True, False
    info.pop(_QUEUE, None)
    if opening:
        info[_OPENING] = list(opening)
    else:
        info.pop(_OPENING, None)


def opening(conn: Connection) -> list[str]:
    """The statements that begin ``conn``'s transaction when they were not sent yet (the
    caller sends them now, before its own, in one string); else ``[]``."""
    return conn.info.pop(_OPENING, None) or []


def send_opening(conn: Connection) -> None:
    """Send the transaction's opening now, on its own, if it was not sent yet."""
    statements = opening(conn)
    if statements:
        run_client(conn, "; ".join(statements), ())


def _before_cursor_execute(conn: Connection, cursor: Any, statement: str, parameters: Any,
                           *args: Any) -> tuple[str, Any]:
    if _OPENING in conn.info:
        send_opening(conn)
    return statement, parameters  # listened with retval=True: SQLAlchemy keeps the function as is


OWN_LISTENERS.add(_before_cursor_execute)
_HOOKED: weakref.WeakSet[Engine] = weakref.WeakSet()


def send_opening_first(engine: Engine) -> None:
    """Make every statement run through SQLAlchemy on ``engine`` (``execute``,
    ``exec_driver_sql``) send a held-back opening first (idempotent)."""
    if engine not in _HOOKED:
        event.listen(engine, "before_cursor_execute", _before_cursor_execute, retval=True)
        _HOOKED.add(engine)


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
    """Clear the marks, the queue and an opening never sent (the transaction ended, one
    way or the other)."""
    for key in (_BEGUN, _COMMITTED, _QUEUE, _OPENING):
        conn.info.pop(key, None)


def is_open(conn: Connection) -> bool:
    """Whether the transaction's opening was sent (so there is something to roll back)."""
    return _OPENING not in conn.info


def can_defer(conn: Connection) -> bool:
    """Whether statements may be queued on ``conn`` now (:func:`defer` would take them)."""
    return conn.dialect.name == "postgresql" and is_begun(conn) and not observed(conn)


def defer(conn: Connection, sql: str, values: Sequence[Any]) -> bool:
    """Queue ``sql`` (``%s`` placeholders for ``values``) to be sent with the commit;
    ``False``: it cannot be queued here, the caller runs it now."""
    if not can_defer(conn):
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
    return run_described(conn, sql, values, skip=skip)[0]


def run_described(conn: Connection, sql: str, values: Sequence[Any], *, skip: int = 0,
                  describe: bool = False) -> tuple[list[tuple[Any, ...]], Any]:
    """:func:`run_client`, with the driver's description of the rows' columns when
    ``describe`` (psycopg builds it anew at each asking), else ``None``."""
    import psycopg  # noqa: PLC0415 - the PostgreSQL driver, present whenever this runs

    driver = conn.connection.driver_connection
    try:
        with psycopg.ClientCursor(driver) as cursor:
            cursor.execute(sql, list(values))
            for _ in range(skip):
                cursor.nextset()
            result = cursor.pgresult
            rows = cursor.fetchall() if result is not None and result.status == psycopg.pq.ExecStatus.TUPLES_OK else []
            return rows, (cursor.description if describe else None)
    except psycopg.Error as exc:
        raise as_sqlalchemy_error(conn, sql, list(values), exc) from exc


def run_owed(conn: Connection, tail: Sequence[str], values: Sequence[Any], *, queued: bool = False,
             describe: bool = False) -> tuple[list[tuple[Any, ...]], Any]:
    """Run ``tail`` (statements with ``%s`` placeholders for ``values``) after what
    ``conn`` owes first, in one client-bound round trip: its held-back opening and, with
    ``queued``, the statements queued for the commit. The rows of ``tail``'s first
    statement and, with ``describe``, their description (:func:`run_described`)."""
    owed, owed_values = opening(conn), []
    if queued:
        statements, owed_values = take(conn)
        owed += statements
    return run_described(conn, "; ".join([*owed, *tail]), [*owed_values, *values], skip=len(owed),
                         describe=describe)


def end_with_commit(conn: Connection) -> None:
    """Send the opening if still held back, the queued statements and ``COMMIT`` in one
    round trip (nothing at all when the block sent and queued nothing)."""
    if not conn.info.get(_QUEUE):
        if not is_open(conn):
            return  # nothing was sent: no transaction to end
        if observed(conn):
            conn.exec_driver_sql("COMMIT")  # where whoever watches sees it
            return
    run_owed(conn, ["COMMIT"], [], queued=True)
