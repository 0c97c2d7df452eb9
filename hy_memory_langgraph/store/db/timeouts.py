"""How long a store waits on its database: one timeout, applied at every level.

A store's timeout (``HyMemoryStore(timeout_s=...)``; the client's
``MEMORY_DB_TIMEOUT_S``, default 30 s) bounds each wait:

* SQLite: the busy timeout, how long a writer waits for another's write lock (then
  :class:`~hy_memory_langgraph.errors.StoreBusyError`);
* PostgreSQL, connecting: libpq's ``connect_timeout`` (whole seconds, at least 2) and
  TCP keepalives and ``tcp_user_timeout``, so a peer that vanished is noticed;
* PostgreSQL, each session: ``statement_timeout`` and ``lock_timeout`` (a statement
  or a lock wait longer than the timeout is cancelled by the server: ``StoreBusyError``),
  and ``idle_in_transaction_session_timeout`` at four times the timeout (at least a
  minute), so a client frozen inside a transaction frees its locks;
* PostgreSQL, a server that answers nothing at all: the :class:`~.watchdog.Watchdog`
  shuts a connection down whose round trip outlasts the timeout plus
  :data:`WATCHDOG_GRACE` (the server's own timeouts fire first when it runs):
  :class:`~hy_memory_langgraph.errors.StoreUnavailableError` naming the server;
* a pool whose connections are all lent out: waiting for one (``pool_timeout``).

Settings given in the URL's query (``?connect_timeout=5``) are kept.

Example:
    >>> from sqlalchemy.engine import make_url
    >>> args = connect_args(make_url("postgresql+psycopg://u@h/db"), 2.5)
    >>> args["connect_timeout"], args["tcp_user_timeout"]
    (3, 2500)
    >>> session_settings(2.5)[:2]
    ['SET statement_timeout = 2500', 'SET lock_timeout = 2500']
"""

from __future__ import annotations

import math
from typing import Any, Final

from sqlalchemy import event
from sqlalchemy.engine import URL, Engine, ExceptionContext

from hy_memory_langgraph.errors import ConfigError, StoreUnavailableError
from hy_memory_langgraph.store.db.watchdog import Watchdog

#: The default of ``MEMORY_DB_TIMEOUT_S`` and of ``HyMemoryStore(timeout_s=...)``.
DEFAULT_TIMEOUT_S: Final = 30.0
#: How the timeout is named in errors.
TIMEOUT_SETTING: Final = "MEMORY_DB_TIMEOUT_S (HyMemoryStore timeout_s)"
#: The watchdog waits this share of the timeout longer than the server's own timeouts
#: (at least 1 s), so a live server cancels first and says why.
WATCHDOG_GRACE: Final = 0.5


def check_timeout(timeout_s: object) -> float:
    """``timeout_s`` as a float of seconds (``ConfigError`` unless a positive number)."""
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not (
            math.isfinite(timeout_s) and timeout_s > 0):
        raise ConfigError(f"timeout_s={timeout_s!r} must be a positive number of seconds "
                          "(MEMORY_DB_TIMEOUT_S for the client)")
    return float(timeout_s)


def connect_args(url: URL, timeout_s: float) -> dict[str, Any]:
    """libpq connection parameters bounding connecting and noticing a vanished peer
    (those the URL's query sets are left to it)."""
    ms = int(timeout_s * 1000)
    wanted: dict[str, Any] = {
        "connect_timeout": max(2, math.ceil(timeout_s)),
        "keepalives": 1,
        "keepalives_idle": max(1, math.ceil(timeout_s)),
        "keepalives_interval": max(1, math.ceil(timeout_s / 3)),
        "keepalives_count": 3,
        "tcp_user_timeout": ms,
    }
    return {key: value for key, value in wanted.items() if key not in url.query}


def session_settings(timeout_s: float) -> list[str]:
    """The ``SET`` statements each new server session runs."""
    ms = int(timeout_s * 1000)
    idle_ms = max(60_000, 4 * ms)
    return [f"SET statement_timeout = {ms}", f"SET lock_timeout = {ms}",
            f"SET idle_in_transaction_session_timeout = {idle_ms}"]


def bound_server_engine(engine: Engine, timeout_s: float, where: str) -> Watchdog:
    """Apply the timeout to ``engine``'s sessions and round trips (see the module
    docstring); returns the watchdog (close it when the engine is disposed)."""
    watchdog = Watchdog(round_trip_limit(timeout_s))
    settings = session_settings(timeout_s)

    @event.listens_for(engine, "connect")
    def _configure(dbapi_conn: Any, _record: Any) -> None:
        watchdog.arm(dbapi_conn)
        try:
            with dbapi_conn.cursor() as cursor:
                for statement in settings:
                    cursor.execute(statement)
            dbapi_conn.commit()
        finally:
            watchdog.disarm(dbapi_conn)

    @event.listens_for(engine, "before_cursor_execute")
    def _sent(conn: Any, cursor: Any, *_args: Any) -> None:
        watchdog.arm(cursor.connection)

    @event.listens_for(engine, "after_cursor_execute")
    def _answered(conn: Any, cursor: Any, *_args: Any) -> None:
        watchdog.disarm(cursor.connection)

    @event.listens_for(engine, "commit")
    @event.listens_for(engine, "rollback")
    def _ending(conn: Any) -> None:
        if not conn.invalidated:  # an invalidated one sends nothing (and may not be asked)
            watchdog.arm(conn.connection.dbapi_connection)

    @event.listens_for(engine, "reset")
    def _resetting(dbapi_conn: Any, _record: Any, _state: Any) -> None:
        watchdog.arm(dbapi_conn)

    @event.listens_for(engine, "checkin")
    def _returned(dbapi_conn: Any, _record: Any) -> None:
        if dbapi_conn is not None:
            watchdog.disarm(dbapi_conn)

    @event.listens_for(engine, "handle_error")
    def _failed(context: ExceptionContext) -> BaseException | None:
        conn = context.connection
        proxy = conn.connection if conn is not None and not conn.invalidated else None
        dbapi_conn = proxy.dbapi_connection if proxy is not None else None
        if dbapi_conn is None:
            return None
        watchdog.disarm(dbapi_conn)
        if not watchdog.fired(dbapi_conn):
            return None
        context.is_disconnect = True  # the pool drops it
        return frozen_server_error(where, watchdog.limit_s, timeout_s)

    return watchdog


def round_trip_limit(timeout_s: float) -> float:
    """How long the watchdog lets one round trip run: the timeout plus a grace period
    (:data:`WATCHDOG_GRACE` of it, at least a second), so the server's own timeouts fire
    first when it runs."""
    return timeout_s + max(1.0, WATCHDOG_GRACE * timeout_s)


def frozen_server_error(where: str, limit_s: float, timeout_s: float) -> StoreUnavailableError:
    """The error of a round trip to ``where`` the watchdog ended after ``limit_s``."""
    return StoreUnavailableError(
        f"{where} did not answer within {limit_s:g} s ({TIMEOUT_SETTING}={timeout_s:g} s "
        "plus a grace period): the server is frozen, overloaded or cut off; check that it "
        "runs and is reachable, then retry (or raise the timeout)")
