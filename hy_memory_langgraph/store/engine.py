"""SQLAlchemy engine creation for :class:`HyMemoryStore`.

A plain filesystem path becomes a SQLite database (parent directories are
created); anything containing ``"://"`` is taken as a SQLAlchemy URL. SQLite
connections get WAL mode, a 30 s busy timeout and foreign keys; every other
dialect is left untouched so the same Core SQL can run on PostgreSQL.

SQLite transactions are begun by us (the driver's implicit transactions are
disabled) so that write transactions can use ``BEGIN IMMEDIATE``: the write lock
is taken up front and concurrent writers queue on the busy timeout instead of
failing a lock upgrade.

Example:
    >>> import tempfile, os
    >>> engine, local = create_store_engine(os.path.join(tempfile.mkdtemp(), "store.db"))
    >>> local.name
    'store.db'
    >>> engine.dispose()
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.pool import StaticPool

__all__ = ["BUSY_TIMEOUT_MS", "checkpoint", "create_store_engine", "read_tx", "write_tx"]

BUSY_TIMEOUT_MS = 30_000
_BEGIN_MODES = {"DEFERRED": "BEGIN DEFERRED", "IMMEDIATE": "BEGIN IMMEDIATE"}
_BEGIN_OPTION = "hy_begin"


def create_store_engine(path: str | os.PathLike[str]) -> tuple[Engine, Path | None]:
    """Create the engine for ``path`` and return it with the local database file.

    Args:
        path: A SQLite file path, or a SQLAlchemy URL (contains ``"://"``).

    Returns:
        The engine, and the local SQLite file path when there is one (``None``
        for in-memory SQLite and for server databases).
    """
    text = os.fspath(path)
    if "://" in text:
        url = make_url(text)
    else:
        url = URL.create("sqlite", database=str(Path(text).expanduser().resolve()))
    local = _local_sqlite_file(url)
    if local is not None:
        _create_private(local)
    engine = sa.create_engine(url, **_engine_kwargs(url, local))
    if engine.dialect.name == "sqlite":
        _install_sqlite_hooks(engine)
    return engine, local


def _create_private(file: Path) -> None:
    """Create the database file (and missing directories) readable by its owner only.

    SQLite gives its ``-wal`` / ``-shm`` files the database file's permissions. An
    existing file keeps the permissions it has.
    """
    file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(file, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def _local_sqlite_file(url: URL) -> Path | None:
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database).expanduser().resolve()


def _engine_kwargs(url: URL, local: Path | None) -> dict[str, Any]:
    if url.get_backend_name() != "sqlite":
        return {"pool_pre_ping": True}
    connect_args: dict[str, Any] = {
        "timeout": BUSY_TIMEOUT_MS / 1000,
        "check_same_thread": False,
    }
    if local is None:
        # One shared connection, or every connection would see its own empty DB.
        return {"connect_args": connect_args, "poolclass": StaticPool}
    return {"connect_args": connect_args}


def _install_sqlite_hooks(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see _on_begin)
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_MS)}")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA foreign_keys = ON")
            # deleted content is overwritten, not left readable in free pages
            cursor.execute("PRAGMA secure_delete = ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get(_BEGIN_OPTION, "DEFERRED")
        conn.exec_driver_sql(_BEGIN_MODES[mode])


def checkpoint(engine: Engine) -> None:
    """Move a SQLite write-ahead log into the database and truncate it (erasure: the log
    still holds pages written before a delete). No-op on other databases."""
    if engine.dialect.name != "sqlite":
        return
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


@contextmanager
def read_tx(engine: Engine) -> Iterator[Connection]:
    """A transaction for reads: one consistent snapshot for the whole block."""
    with engine.connect() as conn, conn.begin():
        yield conn


@contextmanager
def write_tx(engine: Engine) -> Iterator[Connection]:
    """A write transaction; on SQLite the write lock is taken at BEGIN."""
    with engine.connect() as conn:
        conn.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
        with conn.begin():
            yield conn
