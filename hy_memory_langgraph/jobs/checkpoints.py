"""The checkpoints of background runs, in the queue's database, behind the privacy gate.

A worker runs the write graph with a LangGraph checkpointer, one thread per run
(``job-<run id>``): ``SqliteSaver`` on ``background.db`` (SQLite), ``PostgresSaver`` in the
queue's schema (PostgreSQL, on a connection whose round trips are bounded: :mod:`.pg`;
a connection the bound broke is replaced on the next use). A crash resumes the run at
the node it stopped in.

Checkpoints are persistence like any other: a model's reply that decoded a secret must
not land in a checkpoint blob. :class:`SealedSerializer` wraps LangGraph's serializer and
seals every string of every value it writes: the msgpack bytes are read back, every
string at any depth (inside extension types too: dataclasses, datetimes) passes
:func:`~hy_memory_langgraph.redact.gate.seal`, and the result is written. A value it
cannot walk (raw bytes) is refused, so nothing reaches a checkpoint unsealed. Reading
accepts only this package's state types (and LangGraph's safe ones).

Example:
    >>> from hy_memory_langgraph.messages.types import Msg
    >>> serde = SealedSerializer()
    >>> kind, data = serde.dumps_typed({"msgs": [Msg(role="user", content="pw: Hunter2!x")]})
    >>> serde.loads_typed((kind, data))["msgs"][0].content
    'pw: [REDACTED:password]'
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

import ormsgpack
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from hy_memory_langgraph.jobs.lease import AdvisoryLease
from hy_memory_langgraph.redact.gate import Seal, seal
from hy_memory_langgraph.store.db.engine import schema_name
from hy_memory_langgraph.store.db.locks import advisory_key
from hy_memory_langgraph.store.db.timeouts import DEFAULT_TIMEOUT_S, check_timeout
from hy_memory_langgraph.store.db.watchdog import Watchdog

#: The classes a write graph's state holds (what a checkpoint may bring back to life).
_STATE_TYPES: Final = (
    ("hy_memory_langgraph.messages.types", "Msg"),
    ("hy_memory_langgraph.messages.types", "ToolCall"),
    ("hy_memory_langgraph.repos.records", "ChatMemory"),
    ("hy_memory_langgraph.repos.records", "Experience"),
    ("hy_memory_langgraph.repos.records", "Fact"),
)
_OPTIONS: Final = ormsgpack.OPT_NON_STR_KEYS


class SealedSerializer(SerializerProtocol):
    """LangGraph's ``JsonPlusSerializer`` with every written string sealed.

    Args:
        sealed: The gate (``seal``; a no-op when the client turned redaction off).
    """

    def __init__(self, sealed: Seal = seal) -> None:
        self.seal = sealed
        self.inner = JsonPlusSerializer(allowed_msgpack_modules=list(_STATE_TYPES))

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        kind, data = self.inner.dumps_typed(obj)
        if kind == "null":
            return kind, data
        if kind != "msgpack":
            raise TypeError(f"a checkpoint value of type {type(obj).__name__} ({kind}) cannot pass the "
                            "privacy gate; only values msgpack can encode are checkpointed")
        return kind, self._resealed(data)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.inner.loads_typed(data)

    def _resealed(self, data: bytes) -> bytes:
        def ext(code: int, payload: bytes) -> ormsgpack.Ext:
            return ormsgpack.Ext(code, self._resealed(payload))

        try:
            value = ormsgpack.unpackb(data, ext_hook=ext, option=_OPTIONS)
        except (ormsgpack.MsgpackDecodeError, ValueError) as exc:
            raise TypeError("a checkpoint value holds bytes the privacy gate cannot read; "
                            "it is not checkpointed") from exc
        return ormsgpack.packb(self.seal(value), option=_OPTIONS)


class Checkpoints:
    """The checkpointer of one queue, in the queue's database.

    Args:
        target: The SQLite file of the queue, or the ``MEMORY_DB_URL``.
        schema: On PostgreSQL, the queue's schema (the checkpoint tables live there).
        sealed: The privacy gate of the serializer.
        timeout_s: The longest wait for SQLite's lock or for connecting to PostgreSQL
            (``MEMORY_DB_TIMEOUT_S``).
    """

    def __init__(self, target: str | os.PathLike[str], *, schema: str | None = None,
                 sealed: Seal = seal, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        timeout_s = check_timeout(timeout_s)
        self.serde = SealedSerializer(sealed)
        self._lock = threading.Lock()
        self._saver: BaseCheckpointSaver[Any]
        self.path: Path | None = None
        self._watchdog: Watchdog | None = None
        if schema is None:
            self.path = Path(target)
            self._conn: Any = _sqlite_connection(self.path, timeout_s)
            sqlite_saver = SqliteSaver(self._conn, serde=self.serde)
            sqlite_saver.setup()
            self._saver = sqlite_saver
        else:
            from hy_memory_langgraph.jobs.pg import pg_watchdog

            self.schema = schema_name(schema)
            self._url, self._timeout_s = str(target), timeout_s
            self._watchdog = pg_watchdog(timeout_s)
            self._connect_postgres()
            self._setup_postgres()

    @property
    def saver(self) -> BaseCheckpointSaver[Any]:
        """The checkpointer (PostgreSQL: on a new connection when the last one broke)."""
        with self._lock:
            if self._watchdog is not None and self._conn.broken:
                self._conn.close()
                self._connect_postgres()
            return self._saver

    def _connect_postgres(self) -> None:
        from langgraph.checkpoint.postgres import PostgresSaver  # the `postgres` extra

        from hy_memory_langgraph.jobs.pg import pg_connect

        assert self._watchdog is not None
        self._conn = pg_connect(self._url, self.schema, self._timeout_s, self._watchdog)
        self._saver = PostgresSaver(self._conn, serde=self.serde)

    def _setup_postgres(self) -> None:
        """Create the checkpoint tables once, whatever the number of workers starting.

        The lock is tried, not waited for: a setup builds indexes ``CONCURRENTLY``, which
        waits for every open transaction, a waiting lock request included."""
        key = advisory_key(f"hy_memory_checkpoints:{self.schema}")
        while not self._conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (key,)).fetchone()["ok"]:
            time.sleep(0.05)
        try:
            self._saver.setup()  # type: ignore[attr-defined]  # PostgresSaver's
        finally:
            self._conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    def delete_runs(self, thread_ids: Iterable[str]) -> None:
        """Delete the checkpoints (and pending writes) of every thread of ``thread_ids``."""
        saver = self.saver
        with self._lock:
            for thread_id in thread_ids:
                saver.delete_thread(thread_id)

    def flush_erasure(self) -> None:
        """SQLite: fold the write-ahead log into the database (zeroed pages, erasure)."""
        if self.path is not None:
            with self._lock:
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._conn.close()
        if self._watchdog is not None:
            self._watchdog.close()


def _sqlite_connection(path: Path, timeout_s: float) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, timeout=timeout_s)
    for pragma in (f"busy_timeout = {int(timeout_s * 1000)}", "journal_mode = WAL", "synchronous = NORMAL",
                   "secure_delete = ON"):
        conn.execute(f"PRAGMA {pragma}")
    return conn


def advisory_lease(url: str, schema: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> AdvisoryLease:
    """A PostgreSQL worker lease on its own connection (round trips bounded: :mod:`.pg`)."""
    from hy_memory_langgraph.jobs.pg import pg_connect, pg_watchdog

    watchdog = pg_watchdog(timeout_s)
    return AdvisoryLease(lambda: pg_connect(url, schema_name(schema), timeout_s, watchdog), schema_name(schema),
                         on_release=watchdog.close)
