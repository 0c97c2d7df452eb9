"""A bound, on our side, on every round trip to a PostgreSQL server: a frozen server
never hangs a call.

The server's own timeouts (``statement_timeout``, ``lock_timeout``, set on each
connection from the store's timeout) end what a live server runs too long, and the
driver's ``connect_timeout`` bounds connecting. A server that does not answer at all,
frozen (a stopped process, a paused VM or container) or gone with the connection open,
enforces nothing, and its kernel may keep acknowledging what we send, so no TCP timeout
fires either. The watchdog covers that case: a statement, commit, rollback or ping still
running ``limit_s`` after it began has its connection's socket shut down. The driver's
wait then ends with a lost-connection error, the pool drops the connection, and the
store raises :class:`~hy_memory_langgraph.errors.StoreUnavailableError` naming the
server and the timeout (:meth:`Watchdog.fired` tells such an error from others).

One daemon thread per watchdog checks the running round trips every ``check_s``; a
round trip costs a dictionary insert and removal.

Example:
    >>> import socket
    >>> ours, theirs = socket.socketpair()
    >>> class Conn:  # what the watchdog needs of a driver connection: its socket
    ...     class pgconn:
    ...         socket = ours.fileno()
    >>> dog = Watchdog(limit_s=0.05, check_s=0.01)
    >>> conn = Conn()
    >>> dog.arm(conn)
    >>> ours.recv(1)  # blocks like a driver waiting for a frozen server, until shut down
    b''
    >>> dog.fired(conn)
    True
    >>> dog.close(); ours.close(); theirs.close()
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from hy_memory_langgraph.store.db.daemon import Daemon

logger = logging.getLogger(__name__)


class Watchdog:
    """Shuts down the socket of a connection whose round trip outlasts ``limit_s``.

    Args:
        limit_s: The longest a round trip may take.
        check_s: How often the thread looks (the bound is ``limit_s + check_s``).
    """

    def __init__(self, limit_s: float, *, check_s: float | None = None) -> None:
        self.limit_s = limit_s
        self._check_s = min(1.0, limit_s / 4) if check_s is None else check_s
        self._armed: dict[int, tuple[float, Any]] = {}  # id(driver conn) -> (deadline, conn)
        self._fired: weakref.WeakSet[Any] = weakref.WeakSet()
        self._wake = threading.Event()
        self._daemon = Daemon("hy-store-watchdog", _run, weakref.WeakMethod(self._check), self._wake,
                              self._check_s)

    def arm(self, conn: Any) -> None:
        """A round trip on the driver connection ``conn`` begins (or begins again)."""
        self._armed[id(conn)] = (time.monotonic() + self.limit_s, conn)
        if self._daemon.thread is None:
            self._daemon.start()

    def disarm(self, conn: Any) -> None:
        """The round trip on ``conn`` ended."""
        self._armed.pop(id(conn), None)

    def fired(self, conn: Any) -> bool:
        """Whether the watchdog shut ``conn`` down (its error is a timeout)."""
        return conn is not None and conn in self._fired

    def close(self) -> None:
        """Stop the thread (idempotent)."""
        self._daemon.stop(self._wake)
        self._armed.clear()

    def _check(self) -> None:
        now = time.monotonic()
        for key, (deadline, conn) in list(self._armed.items()):
            if deadline <= now and self._armed.get(key, (None, None))[1] is conn:
                self._armed.pop(key, None)
                self._fired.add(conn)
                _shut_down(conn)


def _shut_down(conn: Any) -> None:
    """Shut the socket of a psycopg connection down (both ways): a wait on it returns."""
    try:
        fd = os.dup(conn.pgconn.socket)
    except Exception:  # noqa: BLE001 - already closed: nothing waits on it
        return
    try:
        with socket.socket(fileno=fd) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError as exc:
        logger.debug("shutting down a timed-out connection failed: %s", exc)


def _run(check: weakref.WeakMethod[Callable[[], None]], wake: threading.Event, check_s: float,
         closed: threading.Event) -> None:
    """The thread: check every ``check_s`` until closed or the watchdog is gone."""
    while not closed.wait(check_s):
        run = check()
        if run is None:
            return
        run()
        del run
