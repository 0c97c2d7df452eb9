"""The queue's own PostgreSQL connections (LangGraph's checkpointer, a worker's lease),
bounded like the store's: no round trip waits on a frozen server for ever.

The store's engine arms its watchdog through SQLAlchemy's events; these connections are
psycopg's own, handed to LangGraph's ``PostgresSaver``. Every round trip on them goes
through a cursor's ``execute`` / ``executemany`` or a pipeline's sync, so the connection
class here arms the watchdog around exactly those (its cursors and its pipeline are ours):
whatever the checkpointer sends, today's methods or a later version's, is watched. Each
session also runs the store's ``statement_timeout`` and ``lock_timeout``.

A round trip the watchdog ended raises
:class:`~hy_memory_langgraph.errors.StoreUnavailableError` naming the server and the
timeout; the connection is then broken (:attr:`WatchedConnection.broken`) and its owner
opens a new one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg.rows import dict_row
from sqlalchemy.engine import make_url

from hy_memory_langgraph.store.db.timeouts import (connect_args, frozen_server_error, round_trip_limit,
                                                   session_settings)
from hy_memory_langgraph.store.db.watchdog import Watchdog


class WatchedConnection(psycopg.Connection[Any]):
    """A psycopg connection whose round trips its :attr:`watchdog` bounds."""

    watchdog: Watchdog
    where: str
    timeout_s: float
    watching: bool = False

    @contextlib.contextmanager
    def watched(self) -> Iterator[None]:
        """Arm the watchdog for the block (the outermost one: a pipeline's statements
        run inside the pipeline's block); its shutdown surfaces as our error."""
        outer = not self.watching
        if outer:
            self.watchdog.arm(self)
            self.watching = True
        try:
            yield
        except psycopg.Error as exc:
            if self.watchdog.fired(self):
                raise frozen_server_error(self.where, self.watchdog.limit_s, self.timeout_s) from exc
            raise
        finally:
            if outer:
                self.watching = False
                self.watchdog.disarm(self)

    @contextlib.contextmanager
    def pipeline(self) -> Iterator[psycopg.Pipeline]:
        with self.watched(), super().pipeline() as pipeline:
            yield pipeline


class _WatchedCursor(psycopg.Cursor[Any]):
    """A cursor of a :class:`WatchedConnection`: each execution is watched."""

    connection: WatchedConnection

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        with self.connection.watched():
            return super().execute(*args, **kwargs)

    def executemany(self, *args: Any, **kwargs: Any) -> None:
        with self.connection.watched():
            super().executemany(*args, **kwargs)


def pg_connect(url: str, schema: str, timeout_s: float, watchdog: Watchdog) -> WatchedConnection:
    """A connection (autocommit, rows as dicts) whose search path is ``schema``, whose
    connecting, statements and round trips are bounded by ``timeout_s`` (``watchdog``
    is shared by the owner's connections)."""
    parsed = make_url(url).set(drivername="postgresql")
    settings = " ".join(f"-c {s.removeprefix('SET ').replace(' = ', '=')}" for s in session_settings(timeout_s))
    conn = WatchedConnection.connect(parsed.render_as_string(hide_password=False), autocommit=True,
                                     prepare_threshold=0, row_factory=dict_row, cursor_factory=_WatchedCursor,
                                     options=f"-c search_path={schema} {settings}",
                                     **connect_args(parsed, timeout_s))
    conn.watchdog, conn.timeout_s = watchdog, timeout_s
    conn.where = parsed.render_as_string(hide_password=True)
    return conn


def pg_watchdog(timeout_s: float) -> Watchdog:
    """A watchdog for the connections of one owner (close it with them)."""
    return Watchdog(round_trip_limit(timeout_s))
