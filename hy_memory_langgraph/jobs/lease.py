"""Who may work a queue, and whether the worker that took a job is still alive.

A worker holds a lease for as long as its process lives; the operating system or the
database server ends it when the process dies (a crash, ``SIGKILL``), so a job taken by a
dead worker is found at once and resumed by the next one, without a timeout to wait out:

* :class:`FileLease` (SQLite): an exclusive ``flock`` on ``background.lock`` beside the
  queue's database. One worker per data dir at a time; a second one waits for the lock.
  The holder writes its key into the file, so any process can tell which key is alive.
* :class:`AdvisoryLease` (PostgreSQL): a session-level advisory lock ``(queue key, worker
  key)`` held on a dedicated connection. Any number of workers, on any machines; a job
  whose worker's lock is gone from ``pg_locks`` is orphaned.

Both answer :meth:`Lease.orphaned`, a SQL condition over a ``worker_key`` column, used
inside the claim; :func:`holder_of` and :func:`worker_held` tell whether a worker is alive.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Protocol

import sqlalchemy as sa

from hy_memory_langgraph.errors import StoreError
from hy_memory_langgraph.store.db.locks import advisory_key

_PG_LOCKS: Final = sa.table("pg_locks", sa.column("locktype"), sa.column("database"), sa.column("classid"),
                            sa.column("objid"), sa.column("objsubid"), sa.column("granted"),
                            schema="pg_catalog")
_PG_DATABASE: Final = sa.table("pg_database", sa.column("oid"), sa.column("datname"), schema="pg_catalog")


def queue_lock_key(schema: str) -> int:
    """The first key of the advisory locks of the workers of the queue in ``schema``."""
    return advisory_key(f"hy_memory_worker:{schema}", 4) & 0x7FFFFFFF


class Lease(Protocol):
    """What a worker holds while it works a queue."""

    key: int

    def orphaned(self, column: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """SQL: the worker whose key is in ``column`` holds no lease any more."""
        ...

    def release(self) -> None: ...


class FileLease:
    """The SQLite queue's single-worker lock (``flock`` on ``path``).

    Args:
        path: The lock file (created when missing).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.key = random.SystemRandom().randrange(1, 2**31)
        self._fd: int | None = None
        self._lock = threading.Lock()

    def acquire(self, *, wait: bool) -> bool:
        """Take the lock (``wait``: block until it is free); ``False`` when another
        worker holds it and ``wait`` is false."""
        with self._lock:
            if self._fd is not None:
                return True
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                os.close(fd)
                return False
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(self.key).encode(), 0)
            self._fd = fd
            return True

    def orphaned(self, column: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """Any key but the holder's: with the lock held, no other worker runs."""
        return sa.or_(column.is_(None), column != self.key)

    def release(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def holder_of(path: Path) -> int | None:
    """The key of the worker holding the lock file ``path`` (``None``: nobody holds it)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 32, 0).decode(errors="replace").strip()
            return int(text) if text.isdigit() else None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def worker_held(namespace: int, key: Any) -> sa.ColumnElement[bool]:
    """SQL: the PostgreSQL worker ``key`` (a value or a column) of the queue whose first lock
    key is ``namespace`` still holds its lease (its session's advisory lock)."""
    database = sa.select(_PG_DATABASE.c.oid).where(
        _PG_DATABASE.c.datname == sa.func.current_database()).scalar_subquery()
    return sa.exists().where(
        _PG_LOCKS.c.locktype == "advisory", _PG_LOCKS.c.database == database,
        sa.cast(_PG_LOCKS.c.classid, sa.BigInteger) == namespace,
        sa.cast(_PG_LOCKS.c.objid, sa.BigInteger) == key,
        _PG_LOCKS.c.objsubid == 2, _PG_LOCKS.c.granted.is_(True))


class AdvisoryLease:
    """A PostgreSQL worker's lease: a session advisory lock on its own connection.

    Args:
        connect: Opens a new psycopg connection (autocommit, rows as dicts) to the queue's
            database.
        schema: The queue's schema (its locks live in their own key space).
        on_release: Called once the lease is released (closes what ``connect`` shares).
    """

    def __init__(self, connect: Any, schema: str, *, on_release: Callable[[], None] | None = None) -> None:
        self.namespace = queue_lock_key(schema)
        self._on_release = on_release
        self._conn = connect()
        rng = random.SystemRandom()
        for _ in range(16):
            key = rng.randrange(1, 2**31)
            if self._conn.execute("SELECT pg_try_advisory_lock(%s, %s) AS ok", (self.namespace, key)).fetchone()["ok"]:
                self.key = key
                return
        self._conn.close()
        raise StoreError("no free worker key after 16 tries; is pg_locks full?")

    def orphaned(self, column: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        return sa.or_(column.is_(None), sa.not_(worker_held(self.namespace, column)))

    def release(self) -> None:
        with contextlib.suppress(Exception):
            self._conn.close()
        if self._on_release is not None:
            self._on_release()
