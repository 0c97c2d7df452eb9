"""Opening a SQLite database on a full disk: reads go on, writes say why not.

A full disk keeps two things of an open from happening:

* creating a new database (its first pages): it opens as an empty one
  (:func:`~.engine.absent_engine`), so a read of a store never written answers with
  nothing instead of failing;
* creating the shared-memory index (``-shm``, 32 KB) of a database closed cleanly (no
  ``-wal`` or ``-shm`` file beside it, or only the stubs the failed open left): it
  opens read-only and ``immutable``, read without locks or index. That is safe because
  nobody writes it: a writer needs those files too, and the disk has no room for them.

Either way a write raises :class:`~hy_memory_langgraph.errors.StoreFullError` naming the
file, and the stand-in is provisional (:func:`~.engine.is_provisional`): a client opens
the store again at its next call, and gets the database itself once there is room.

Example:
    >>> import sqlite3, sqlalchemy as sa
    >>> error = sa.exc.OperationalError("INSERT", {}, sqlite3.OperationalError("disk I/O error"))
    >>> stand_in(sa.create_engine("sqlite://"), None, error, 1.0) is None  # no file: not ours
    True
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from hy_memory_langgraph.errors import StoreFullError
from hy_memory_langgraph.store.db.engine import absent_engine, immutable_engine, read_tx
from hy_memory_langgraph.store.db.faults import translate

#: Free bytes below which a file system counts as full (the ``-shm`` index needs 32 KB).
NO_ROOM_BYTES: Final = 64 * 1024
#: The size of one page of a write-ahead log index (``-shm``) in use.
SHM_BYTES: Final = 32 * 1024
_SQLITE_IOERR: Final = 10


def stand_in(engine: Engine, file: Path | None, error: sa.exc.DBAPIError, timeout_s: float) -> Engine | None:
    """The engine to read the database ``file`` through when opening ``engine`` on it
    failed with ``error`` because the disk is full, or ``None`` when that is not the case
    (the caller raises ``error``)."""
    if file is None:
        return None
    full = isinstance(translate(error, str(file)), StoreFullError)
    if full and _holds_nothing(engine, file):
        return absent_engine(f"cannot create the database {file}: the disk is full; searches work "
                             "(there is nothing in it to find), writes need free space: free space and "
                             "retry", full=True)
    if (full or _io_error(error)) and _no_room(file) and _closed_cleanly(file):
        return immutable_engine(file, f"{file}: the disk is full, so the database is only read "
                                      "(searches work); writes need free space: free space and retry",
                                timeout_s)
    return None


def _io_error(error: sa.exc.DBAPIError) -> bool:
    code = getattr(error.orig, "sqlite_errorcode", None)
    return isinstance(error.orig, sqlite3.Error) and code is not None and code & 0xFF == _SQLITE_IOERR


def _no_room(file: Path) -> bool:
    try:
        return shutil.disk_usage(file.parent).free < NO_ROOM_BYTES
    except OSError:
        return False


def _closed_cleanly(file: Path) -> bool:
    """A database with content, no write-ahead log content and no index in use beside it
    (a live ``-shm`` is at least :data:`SHM_BYTES`; a failed open leaves a stub)."""
    try:
        return (file.stat().st_size > 0 and _size(file.with_name(file.name + "-wal")) == 0
                and _size(file.with_name(file.name + "-shm")) < SHM_BYTES)
    except OSError:
        return False


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _holds_nothing(engine: Engine, file: Path) -> bool:
    """Whether a SQLite database holds nothing to read: an empty file, or no table."""
    try:
        if file.stat().st_size == 0:  # never written (switching to WAL writes the header)
            return True
        with read_tx(engine) as conn:
            return not sa.inspect(conn).get_table_names()
    except (OSError, sa.exc.DBAPIError):
        return False
