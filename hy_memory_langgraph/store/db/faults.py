"""Database faults as our errors: what failed, where, and what to do about it.

Drivers and SQLAlchemy raise their own exception types for a full disk, a damaged file,
a busy database or a server that went away. :func:`database_faults` turns each into a
:class:`~hy_memory_langgraph.errors.StoreError` subclass naming the database and the
fix, with the original chained as ``__cause__``:

* :class:`StoreFullError`: SQLite ``SQLITE_FULL`` (disk or ``max_page_count``),
  PostgreSQL ``53100`` (disk full);
* :class:`StoreCorruptionError`: SQLite ``SQLITE_CORRUPT`` / ``SQLITE_NOTADB``
  ("database disk image is malformed", "file is not a database");
* :class:`ReadOnlyStoreError`: SQLite ``SQLITE_READONLY``, PostgreSQL read-only
  transactions;
* :class:`StoreBusyError`: a lock held past the busy timeout, a PostgreSQL statement or
  lock wait cancelled by its timeout (``57014``, ``55P03``), no pooled connection free
  within the timeout;
* :class:`StoreUnavailableError`: a connection refused, timed out, closed or invalidated
  (server down, restarting or frozen: :mod:`.timeouts`);
* anything else the driver raised: :class:`StoreError`.

Example:
    >>> import sqlite3, sqlalchemy as sa
    >>> error = sa.exc.OperationalError("INSERT", {}, sqlite3.OperationalError("database or disk is full"))
    >>> type(translate(error, "/data/chat_memory.db")).__name__
    'StoreFullError'
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

import sqlalchemy as sa

from hy_memory_langgraph.errors import (
    HyMemoryError,
    ReadOnlyStoreError,
    StoreBusyError,
    StoreCorruptionError,
    StoreError,
    StoreFullError,
    StoreUnavailableError,
)
from hy_memory_langgraph.store.db.timeouts import TIMEOUT_SETTING

_FULL: Final = ("database or disk is full", "sqlite_full", "no space left", "disk full", "53100")
_CORRUPT: Final = ("malformed", "not a database", "sqlite_corrupt", "sqlite_notadb", "file is encrypted")
_READ_ONLY: Final = ("readonly database", "sqlite_readonly", "read-only transaction", "25006")
_BUSY: Final = ("database is locked", "sqlite_busy", "lock timeout", "55p03", "statement timeout", "57014")
_GONE: Final = ("connection refused", "server closed the connection", "terminating connection",
                "connection is closed", "could not connect", "the connection is lost", "57p01",
                "consuming input failed", "connection timed out", "admin shutdown", "timeout expired")


def _text(exc: sa.exc.DBAPIError) -> str:
    orig = exc.orig
    parts = [str(orig), getattr(orig, "sqlite_errorname", "") or "", getattr(orig, "sqlstate", "") or ""]
    return " ".join(parts).lower()


def translate(exc: sa.exc.DBAPIError, where: str) -> HyMemoryError:
    """Our error for a driver error met on the database ``where`` (a file or URL)."""
    text, detail = _text(exc), str(exc.orig).strip()
    if any(k in text for k in _FULL):
        return StoreFullError(f"{where}: the disk (or the database's size limit) is full ({detail}); "
                              "nothing of this write was stored: free space and retry")
    if any(k in text for k in _CORRUPT):
        return StoreCorruptionError(
            f"{where} is damaged ({detail}): restore it from a backup, or move it aside and "
            "import an export (hy-memory export, then import) into a new data dir")
    if any(k in text for k in _READ_ONLY):
        return ReadOnlyStoreError(f"{where} can only be read here ({detail}): searches work, writes "
                                  "need a writable data dir")
    if any(k in text for k in _BUSY):
        return StoreBusyError(f"{where} was busy past the timeout, {TIMEOUT_SETTING}: another writer held a lock "
                              f"or a statement ran that long ({detail}); retry, or raise the timeout")
    if "3d000" in text or ('database "' in text and "does not exist" in text):
        return StoreUnavailableError(f"{where}: the database does not exist ({detail}): create it "
                                     "(CREATE DATABASE …) or point MEMORY_DB_URL / db_url at one that does")
    if getattr(exc, "connection_invalidated", False) or any(k in text for k in _GONE):
        return StoreUnavailableError(f"{where} is unreachable ({detail}): check that the database "
                                     "server is running and reachable (connecting waits up to "
                                     f"{TIMEOUT_SETTING}), then retry")
    return StoreError(f"{where}: the database failed ({type(exc.orig).__name__}: {detail})")


@contextmanager
def database_faults(where: str) -> Iterator[None]:
    """Raise driver errors of the block as our errors (see the module docstring)."""
    try:
        yield
    except sa.exc.DBAPIError as exc:
        raise translate(exc, where) from exc
    except sa.exc.TimeoutError as exc:  # the pool: every connection lent out for that long
        raise StoreBusyError(f"{where}: no connection of the pool came free within the timeout, "
                             f"{TIMEOUT_SETTING} ({exc}); retry with fewer concurrent calls, or raise "
                             "the timeout") from exc
