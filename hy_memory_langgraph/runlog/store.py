"""The pipeline-log table: one row per stage of a request, bounded retention.

Lives in its own database file (``{data_dir}/data/pipeline_log.db``) or, with
``MEMORY_DB_URL``, in the ``pipeline_log`` schema of that database; versioned by
:data:`MIGRATIONS`. Rows older than the retention are deleted on open and, while the
process runs, at most once an hour on a write.

Example:
    >>> import tempfile, os
    >>> log = PipelineLogStore(os.path.join(tempfile.mkdtemp(), "log.db"), retention_days=7)
    >>> log.write([{"request_id": "r1", "seq": 0, "stage": "normalise", "ts": 0.0}])
    >>> log.prune(now=0.0)
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
from collections.abc import Sequence
from typing import Any, Final

import sqlalchemy as sa

from hy_memory_langgraph.store.db import direct
from hy_memory_langgraph.store.db.engine import (
    create_store_engine,
    is_read_only,
    read_tx,
    release_engine,
    write_tx,
)
from hy_memory_langgraph.store.db.migrations import Migration, MigrationContext, setup

__all__ = ["PipelineLogStore", "MIGRATIONS"]

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


def _create_v1(ctx: MigrationContext) -> None:
    # The layout before versioning (unchanged since); later changes are new migrations.
    ctx.create_all(_metadata)


MIGRATIONS: Final = (Migration(1, "pipeline_log table", _create_v1),)
_INSERT: Final = _rows.insert()


class PipelineLogStore:
    """Stage records by request id.

    Args:
        path: A SQLite file path or a SQLAlchemy URL.
        retention_days: Rows older than this many days are deleted.
        schema: On PostgreSQL, the schema of the table (ignored on SQLite).
    """

    def __init__(self, path: str | os.PathLike[str], *, retention_days: float,
                 schema: str | None = None) -> None:
        self.retention_days = retention_days
        self._engine, _ = create_store_engine(path, schema=schema)
        try:
            setup(self._engine, "pipeline_log", MIGRATIONS)
        except BaseException:
            release_engine(self._engine)
            raise
        self._lock = threading.Lock()
        self._pruned_at = 0.0
        if not is_read_only(self._engine):
            self.prune()

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        """Append ``records`` (each with ``request_id``, ``seq``, ``ts``) in one transaction."""
        if not records or is_read_only(self._engine):
            return
        rows = [{"request_id": r["request_id"], "seq": r["seq"], "ts": r["ts"],
                 "record": json.dumps(r, ensure_ascii=False, default=str)} for r in records]
        with write_tx(self._engine) as conn:
            direct.run(conn, _INSERT, rows)
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
                return int(conn.execute(_rows.delete().where(_rows.c.ts < cutoff)).rowcount or 0)

    def close(self) -> None:
        release_engine(self._engine)
