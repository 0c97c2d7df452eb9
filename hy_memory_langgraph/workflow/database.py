"""Workflow memory documents kept in a database (the ``MEMORY_DB_URL`` mode).

Same documents, same text as the markdown files of :class:`~.files.WorkflowFiles`:
one row per ``(user_id, app_id, dimension)`` holding the rendered markdown (``app_id``
is ``""`` for no memory app id), so
``memory_prompt`` reads back exactly what the files would hold. The table
``workflow_documents`` lives in the ``workflow_memory`` schema on PostgreSQL and
is versioned by :data:`MIGRATIONS`.

:meth:`WorkflowDatabase.locked` serialises one user's writers across threads
(a lock per user) and, on PostgreSQL, across processes (a session advisory lock
held on a dedicated connection for the block).

Example:
    >>> import tempfile, os
    >>> from hy_memory_langgraph.workflow.entries import parse_entries
    >>> docs = WorkflowDatabase(os.path.join(tempfile.mkdtemp(), "wf.db"))
    >>> entry = parse_entries("- [fact] 报销需要发票")[0]
    >>> with docs.locked("u1"):
    ...     docs.write("u1", "global", [entry])
    >>> [e.line() for e in docs.read("u1", "global")] == [entry.line()]
    True
    >>> docs.close()
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from hy_memory_langgraph.redact.gate import Seal, seal
from hy_memory_langgraph.store.db.engine import read_tx, release_engine, write_tx
from hy_memory_langgraph.store.db.locks import advisory_key
from hy_memory_langgraph.store.db.migrations import Migration, open_database
from hy_memory_langgraph.store.db.timeouts import DEFAULT_TIMEOUT_S
from hy_memory_langgraph.workflow.entries import Entry, parse_entries
from hy_memory_langgraph.workflow.errors import WorkflowStorageError
from hy_memory_langgraph.workflow.files import relative_name, render_document

_meta = sa.MetaData()
DOCUMENTS: Final = sa.Table(
    "workflow_documents", _meta,
    sa.Column("user_id", sa.Text, primary_key=True),
    sa.Column("app_id", sa.Text, primary_key=True),
    sa.Column("dimension", sa.Text, primary_key=True),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
)


MIGRATIONS: Final = (Migration(1, "workflow_documents table", lambda ctx: ctx.create_all(_meta)),)


class WorkflowDatabase:
    """The workflow documents of every user, in one table.

    Args:
        url: A SQLAlchemy URL (``postgresql+psycopg://…``) or a SQLite file path.
        schema: On PostgreSQL, the schema of the table (``workflow_memory``).
        timeout_s: The longest wait on the database, in seconds (``MEMORY_DB_TIMEOUT_S``).
    """

    def __init__(self, url: str | os.PathLike[str], *, schema: str | None = None,
                 sealed: Seal = seal, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        #: The privacy gate every document passes before it is written.
        self.seal = sealed
        self._engine, _ = open_database(url, "workflow_memory", MIGRATIONS, schema=schema,
                                        timeout_s=timeout_s)
        self._guard = threading.Lock()
        self._user_locks: dict[str, threading.Lock] = {}

    def close(self) -> None:
        release_engine(self._engine)

    def relative(self, user_id: str, dimension: str, app_id: str | None = None) -> str:
        return relative_name(dimension, app_id)

    @staticmethod
    def _where(user_id: str, dimension: str, app_id: str | None) -> sa.ColumnElement[bool]:
        return sa.and_(DOCUMENTS.c.user_id == user_id, DOCUMENTS.c.app_id == (app_id or ""),
                       DOCUMENTS.c.dimension == dimension)

    def read(self, user_id: str, dimension: str, app_id: str | None = None) -> list[Entry]:
        """The entries of one dimension (``[]`` when there is no document)."""
        query = sa.select(DOCUMENTS.c.body).where(self._where(user_id, dimension, app_id))
        try:
            with read_tx(self._engine) as conn:
                body = conn.execute(query).scalar()
        except SQLAlchemyError as exc:
            raise WorkflowStorageError(
                f"cannot read {relative_name(dimension, app_id)} of {user_id!r}: {exc}") from exc
        return parse_entries(body) if body else []

    def write(self, user_id: str, dimension: str, entries: list[Entry],
              app_id: str | None = None) -> None:
        """Replace a dimension document (call inside :meth:`locked`)."""
        row = {"user_id": user_id, "app_id": app_id or "", "dimension": dimension,
               "body": self.seal(render_document(dimension, entries)), "updated_at": time.time_ns() // 1000}
        try:
            with write_tx(self._engine) as conn:
                conn.execute(DOCUMENTS.delete().where(self._where(user_id, dimension, app_id)))
                conn.execute(DOCUMENTS.insert().values(**row))
        except SQLAlchemyError as exc:
            raise WorkflowStorageError(
                f"cannot write {relative_name(dimension, app_id)} of {user_id!r}: {exc}") from exc

    def delete_user(self, user_id: str) -> int:
        """Erase every document of ``user_id`` (all app scopes); the number removed."""
        with self.locked(user_id), write_tx(self._engine) as conn:
            result = conn.execute(DOCUMENTS.delete().where(DOCUMENTS.c.user_id == user_id))
        return int(result.rowcount or 0)

    def _thread_lock(self, user_id: str) -> threading.Lock:
        with self._guard:
            return self._user_locks.setdefault(user_id, threading.Lock())

    @contextmanager
    def locked(self, user_id: str) -> Iterator[None]:
        """Exclusive access to one user's documents (threads and processes)."""
        with self._thread_lock(user_id):
            if self._engine.dialect.name != "postgresql":
                yield
                return
            key = advisory_key(f"hy_workflow:{user_id}")
            with self._engine.connect() as conn:
                conn.execution_options(isolation_level="AUTOCOMMIT")
                conn.execute(sa.text("SELECT pg_advisory_lock(:k)"), {"k": key})
                try:
                    yield
                finally:
                    conn.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": key})
