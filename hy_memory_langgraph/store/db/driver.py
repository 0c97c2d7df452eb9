"""What the store's statements sent straight to the driver share.

:mod:`.direct` (prebuilt statements) and :mod:`.deferred` (statements sent with the
commit) bypass ``Connection.execute``. They may do so only while nobody watches the
connection's statements, and a driver error must reach the caller as SQLAlchemy would
have raised it: the same exception class, and a connection lost to the server
invalidated so the pool does not hand it out again, with every connection the pool made
before it (a server restart or a failover takes them all: a retry gets a new one).

Example:
    >>> import sqlite3
    >>> import sqlalchemy as sa
    >>> engine = sa.create_engine("sqlite://")
    >>> with engine.connect() as conn:
    ...     error = as_sqlalchemy_error(conn, "SELECT x", (), sqlite3.OperationalError("no such column: x"))
    >>> type(error).__name__
    'OperationalError'
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

__all__ = ["OWN_LISTENERS", "as_sqlalchemy_error", "observed"]


#: Cursor-event listeners of this package that only send what a statement needs first
#: (:mod:`.deferred`): they do not watch statements, so :func:`observed` ignores them.
OWN_LISTENERS: set[Any] = set()


def observed(conn: Connection) -> bool:
    """Whether someone sees ``conn``'s statements (echo or cursor-event listeners)."""
    if conn._echo or conn.dispatch.after_cursor_execute:
        return True
    listeners = conn.dispatch.before_cursor_execute
    return bool(listeners) and any(listener not in OWN_LISTENERS for listener in listeners)


def as_sqlalchemy_error(conn: Connection, sql: str, values: Any, error: Exception) -> sa.exc.DBAPIError:
    """``error`` (raised by the driver) as SQLAlchemy's exception for it; when it says the
    server connection is gone, ``conn`` is invalidated and the exception says so
    (``connection_invalidated``), as ``Connection.execute`` does."""
    gone = False
    if not conn.invalidated:
        try:
            gone = bool(conn.dialect.is_disconnect(error, conn.connection.dbapi_connection, None))
        except Exception:  # noqa: BLE001 - a closed fairy cannot be asked; not a disconnect then
            gone = False
    wrapped = sa.exc.DBAPIError.instance(sql, values, error, conn.dialect.loaded_dbapi.Error,
                                         connection_invalidated=gone, dialect=conn.dialect)
    if gone:  # as SQLAlchemy does: the pool's other connections, as old, are replaced too
        conn.engine.pool._invalidate(conn.connection, error)
        conn.invalidate(error)
    return wrapped
