"""Versioned schema migrations, the same on SQLite files and PostgreSQL schemas.

Every component that owns tables (the memory store, the version chain, the
pipeline log, workflow documents) declares an append-only tuple of
:class:`Migration` s numbered 1, 2, 3… and opens its database with
:func:`open_database`. :func:`setup` runs on every open. It first reads the versions
recorded, in a read transaction: a database already at the newest version is opened
without taking the write lock, so opening never waits for another process's write and
writes nothing (a full disk, a long write elsewhere). Otherwise, inside one write
transaction (serialised with other processes: SQLite's write lock, PostgreSQL's
advisory lock) it creates the schema and the version table ``hy_schema_migrations``
when missing, applies the migrations not yet recorded, in order, and records each.
Running it again changes nothing.

A SQLite database a full disk keeps from opening (a new one, or one whose write-ahead
log index cannot be created) opens as a read-only stand-in (:mod:`.full_disk`): reads
answer, writes raise :class:`~hy_memory_langgraph.errors.StoreFullError`.

Rules for authors: until the first release, version 1 creates each component's
tables from their current definitions. After it, never edit or reorder a released
migration; add a new one. A migration sees the database as the previous one left it,
so it writes raw SQL through :class:`MigrationContext` rather than use the current
table definitions; the change that first alters a table version 1 creates also gives
version 1 a frozen copy of the released definitions.

Example:
    >>> import sqlalchemy as sa
    >>> from hy_memory_langgraph.store.db.engine import create_store_engine, release_engine
    >>> engine, _ = create_store_engine("sqlite://" + "/:memory:")
    >>> steps = (Migration(1, "create t", lambda ctx: ctx.execute("CREATE TABLE t (x INT)")),)
    >>> setup(engine, "demo", steps), setup(engine, "demo", steps)
    (1, 1)
    >>> release_engine(engine)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.schema import CreateSchema

from hy_memory_langgraph.errors import ReadOnlyStoreError, StoreError
from hy_memory_langgraph.store.db.engine import (
    create_store_engine,
    is_absent,
    is_read_only,
    read_tx,
    release_engine,
    schema_of,
    write_tx,
)
from hy_memory_langgraph.store.db.full_disk import stand_in
from hy_memory_langgraph.store.db.timeouts import DEFAULT_TIMEOUT_S

_meta = sa.MetaData()
VERSIONS = sa.Table(
    "hy_schema_migrations",
    _meta,
    sa.Column("component", sa.String(64), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("applied_at", sa.DateTime(timezone=True), nullable=False,
              server_default=sa.func.current_timestamp()),
)


class MigrationContext:
    """What a migration step gets: the connection and helpers for raw DDL.

    Attributes:
        conn: The connection, inside the setup transaction.
        schema: The PostgreSQL schema of the component (``None`` on SQLite).
    """

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.schema = schema_of(conn)

    @property
    def dialect(self) -> str:
        return self.conn.dialect.name

    def table(self, name: str) -> str:
        """The quoted, schema-qualified name of a table, for raw SQL."""
        quote = self.conn.dialect.identifier_preparer.quote
        return f"{quote(self.schema)}.{quote(name)}" if self.schema else quote(name)

    def execute(self, statement: str, params: dict[str, Any] | None = None) -> Any:
        """Run raw SQL (use :meth:`table` for table names)."""
        return self.conn.execute(sa.text(statement), params or {})

    def create_all(self, metadata: sa.MetaData) -> None:
        """Create the tables of ``metadata`` that do not exist yet (in the schema)."""
        metadata.create_all(self.conn, checkfirst=True)


@dataclass(frozen=True)
class Migration:
    """One step of a component's schema history.

    Attributes:
        version: 1, 2, 3… with no gaps.
        description: What it does (recorded in the version table).
        apply: The step; runs inside the setup transaction.
    """

    version: int
    description: str
    apply: Callable[[MigrationContext], None]


def _check_sequence(component: str, migrations: Sequence[Migration]) -> None:
    numbers = [m.version for m in migrations]
    if numbers != list(range(1, len(numbers) + 1)):
        raise StoreError(f"{component} migrations must be numbered 1..n, got {numbers}")


def _refuse_unknown(component: str, done: set[int], newest: int) -> None:
    unknown = sorted(v for v in done if v > newest)
    if unknown:
        raise StoreError(
            f"the {component} tables are at version {max(unknown)}, newer than this release "
            f"knows ({newest}); upgrade hy-memory-langgraph on every instance sharing the database"
        )


def applied_versions(conn: Connection, component: str) -> set[int]:
    """Versions of ``component`` recorded in the database (``set()`` before setup)."""
    if not sa.inspect(conn).has_table(VERSIONS.name, schema=schema_of(conn)):
        return set()
    rows = conn.execute(sa.select(VERSIONS.c.version).where(VERSIONS.c.component == component))
    return {int(v) for v in rows.scalars()}


def setup(engine: Engine, component: str, migrations: Sequence[Migration]) -> int:
    """Bring ``component``'s tables to the newest version; returns it.

    Raises:
        StoreError: The database was migrated by a newer release (unknown versions).
    """
    _check_sequence(component, migrations)
    newest = len(migrations)
    with read_tx(engine) as conn:  # the common case: nothing to do, no write lock taken
        done = applied_versions(conn, component)
    _refuse_unknown(component, done, newest)
    if done == set(range(1, newest + 1)):
        return newest
    if is_read_only(engine) and not is_absent(engine):
        raise ReadOnlyStoreError(
            f"the {component} tables need migrating (at version {max(done, default=0)}, this "
            f"release uses {newest}) but the database is read-only; open it once writable")
    with write_tx(engine, schema_setup=True) as conn:
        schema = schema_of(conn)
        if schema is not None:
            conn.execute(CreateSchema(schema, if_not_exists=True))
        VERSIONS.create(conn, checkfirst=True)
        done = applied_versions(conn, component)  # again: another process may have migrated
        _refuse_unknown(component, done, newest)
        context = MigrationContext(conn)
        for step in migrations:
            if step.version in done:
                continue
            step.apply(context)
            conn.execute(VERSIONS.insert().values(
                component=component, version=step.version, description=step.description))
    return newest


def open_database(path: str | os.PathLike[str], component: str, migrations: Sequence[Migration], *,
                  schema: str | None = None, wal_autocheckpoint: int | None = None,
                  timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[Engine, Path | None]:
    """Open the database at ``path`` (:func:`~.engine.create_store_engine`) with
    ``component``'s tables at the newest version (:func:`setup`).

    Returns:
        The engine (give it back with :func:`~.engine.release_engine`; it is released
        here when the setup fails) and the local SQLite file, if any (``None`` for a new
        database a full disk kept from being created: see the module docstring).
    """
    engine, local = create_store_engine(path, schema=schema, wal_autocheckpoint=wal_autocheckpoint,
                                        timeout_s=timeout_s)
    try:
        setup(engine, component, migrations)
    except sa.exc.DBAPIError as exc:
        stand = stand_in(engine, local, exc, timeout_s)
        release_engine(engine)
        if stand is None:
            raise
        try:
            setup(stand, component, migrations)
        except BaseException:
            release_engine(stand)
            raise exc from None
        return stand, None
    except BaseException:
        release_engine(engine)
        raise
    return engine, local
