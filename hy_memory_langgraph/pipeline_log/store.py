"""The pipeline-log table: one row per stage of a request, bounded retention.

Lives in its own database file (``{data_dir}/data/pipeline_log.db``) or, with
``MEMORY_DB_URL``, in the ``pipeline_log`` schema of that database; versioned by
:data:`MIGRATIONS`. Rows older than the retention are deleted on open and, while the
process runs, at most once an hour on a write.

When the records keep text (``MEMORY_PIPELINE_LOG_TEXT``), each request's users are kept
beside them (``pipeline_log_users``), so erasure finds what the log holds of a user:
:meth:`PipelineLogStore.forget_user` drops every record of the user's requests,
:meth:`PipelineLogStore.forget_texts` the records of them that quote an erased memory.
Records without text hold nothing of a user (decisions, counts, ids, fallbacks).

Example:
    >>> import tempfile, os, time
    >>> log = PipelineLogStore(os.path.join(tempfile.mkdtemp(), "log.db"), retention_days=7)
    >>> log.write([{"request_id": "r1", "seq": 0, "stage": "normalise", "ts": time.time()}])
    >>> log.prune()  # the first write pruned already; nothing is a week old
    0
    >>> [r["stage"] for r in log.read("r1")]
    ['normalise']
    >>> log.close()
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

import sqlalchemy as sa

from hy_memory_langgraph.messages.signal import MIN_QUOTE_CHARS, quotes
from hy_memory_langgraph.redact.gate import Seal, seal
from hy_memory_langgraph.store.db.engine import checkpoint, is_read_only, read_tx, release_engine, write_tx
from hy_memory_langgraph.store.db.faults import database_faults
from hy_memory_langgraph.store.db.migrations import Migration, open_database
from hy_memory_langgraph.store.db.timeouts import DEFAULT_TIMEOUT_S
from hy_memory_langgraph.store.sql.statements import chunks

_DAY: Final = 86_400.0
_PRUNE_EVERY_S: Final = 3_600.0

_metadata = sa.MetaData()
_rows = sa.Table(
    "pipeline_log", _metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("request_id", sa.String(64), nullable=False, index=True),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("ts", sa.Float, nullable=False, index=True),
    sa.Column("record", sa.Text, nullable=False),
)
_users = sa.Table(
    "pipeline_log_users", _metadata,
    sa.Column("user_id", sa.Text, nullable=False, index=True),
    sa.Column("request_id", sa.String(64), nullable=False),
    sa.Column("ts", sa.Float, nullable=False, index=True),
)


MIGRATIONS: Final = (Migration(1, "pipeline_log table, the users of each request",
                                lambda ctx: ctx.create_all(_metadata)),)
_INSERT: Final = _rows.insert()
_INSERT_USERS: Final = _users.insert()
_OF_USER: Final = sa.select(_users.c.request_id).where(_users.c.user_id == sa.bindparam("user_id"))


class PipelineLogStore:
    """Stage records by request id.

    Args:
        path: A SQLite file path or a SQLAlchemy URL.
        retention_days: Rows older than this many days are deleted.
        schema: On PostgreSQL, the schema of the table (ignored on SQLite).
        timeout_s: The longest wait on the database, in seconds (``MEMORY_DB_TIMEOUT_S``).

    Old rows are pruned by the first write, and then every while: opening writes nothing.
    """

    def __init__(self, path: str | os.PathLike[str], *, retention_days: float,
                 schema: str | None = None, sealed: Seal = seal,
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.retention_days = retention_days
        #: The privacy gate every record passes before it is written.
        self.seal = sealed
        with database_faults(os.fspath(path)):
            self._engine, _ = open_database(path, "pipeline_log", MIGRATIONS, schema=schema, timeout_s=timeout_s)
        self._lock = threading.Lock()
        self._pruned_at = 0.0  # the first write prunes

    def write(self, records: Sequence[dict[str, Any]],
              users: Mapping[str, Sequence[str]] | None = None) -> None:
        """Append ``records`` (each with ``request_id``, ``seq``, ``ts``) and the ``users``
        of their requests (by request id) in one transaction."""
        if not records or is_read_only(self._engine):
            return
        rows = [{"request_id": r["request_id"], "seq": r["seq"], "ts": r["ts"],
                 "record": json.dumps(self.seal(r), ensure_ascii=False, default=str)} for r in records]
        ts = {r["request_id"]: r["ts"] for r in records}
        owners = [{"user_id": user, "request_id": request_id, "ts": ts[request_id]}
                  for request_id, names in (users or {}).items() if request_id in ts
                  for user in dict.fromkeys(names)]
        with write_tx(self._engine) as conn:
            conn.execute(_INSERT, rows)
            if owners:
                conn.execute(_INSERT_USERS, owners)
        if time.time() - self._pruned_at > _PRUNE_EVERY_S:
            self.prune()

    def read(self, request_id: str) -> list[dict[str, Any]]:
        """The records of ``request_id`` in stage order (``[]`` when unknown or pruned)."""
        query = sa.select(_rows.c.record).where(_rows.c.request_id == request_id) \
            .order_by(_rows.c.seq, _rows.c.id)
        with read_tx(self._engine) as conn:
            rows = [row.record for row in conn.execute(query)]
        records = []
        for text in rows:
            try:
                records.append(json.loads(text))
            except (ValueError, TypeError, RecursionError):
                continue  # a damaged diagnostic record is left out
        return records

    def prune(self, *, now: float | None = None) -> int:
        """Delete rows older than the retention; returns how many went."""
        with self._lock:
            now = time.time() if now is None else now
            self._pruned_at = now
            cutoff = now - self.retention_days * _DAY
            with write_tx(self._engine) as conn:
                conn.execute(_users.delete().where(_users.c.ts < cutoff))
                return int(conn.execute(_rows.delete().where(_rows.c.ts < cutoff)).rowcount or 0)

    def forget_user(self, user_id: str) -> int:
        """Delete every record of the requests ``user_id`` took part in (a search of
        several users' memories included); returns how many went."""
        if is_read_only(self._engine):
            return 0
        with write_tx(self._engine) as conn:
            requests = [r.request_id for r in conn.execute(_OF_USER, {"user_id": user_id})]
            gone = self._drop(conn, _rows.c.request_id, requests)
            self._drop(conn, _users.c.user_id, [user_id])  # other users' rows of them: pruned later
        checkpoint(self._engine)
        return gone

    def forget_texts(self, user_id: str, texts: Sequence[str]) -> int:
        """Delete the records of ``user_id``'s requests holding a string that quotes one of
        ``texts`` or is quoted by one (:func:`~hy_memory_langgraph.messages.quotes`);
        returns how many went."""
        needles = [t.strip() for t in texts if len(t.strip()) >= MIN_QUOTE_CHARS]
        if not needles or is_read_only(self._engine):
            return 0
        query = sa.select(_rows.c.id, _rows.c.record).where(_rows.c.request_id.in_(_OF_USER))
        with write_tx(self._engine) as conn:
            ids = [row.id for row in conn.execute(query, {"user_id": user_id})
                   if any(quotes(text, needles) for text in _strings(row.record))]
            gone = self._drop(conn, _rows.c.id, ids)
        checkpoint(self._engine)
        return gone

    @staticmethod
    def _drop(conn: sa.Connection, column: sa.Column[Any], values: list[Any]) -> int:
        return sum(int(conn.execute(column.table.delete().where(column.in_(list(part)))).rowcount or 0)
                   for part in chunks(values))

    def close(self) -> None:
        release_engine(self._engine)


def _strings(record: str) -> Iterator[str]:
    """Every string of a record's JSON (a damaged record: its whole text)."""
    try:
        stack: list[Any] = [json.loads(record)]
    except (ValueError, TypeError, RecursionError):
        yield record
        return
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
