"""Versioned migrations, ready for the first schema change after a release.

Each component's tables are created by its migration 1. A later release's change is a
synthetic migration 2 here (a column added and filled from the stored rows): a store
written by "this release" opens under "the next one" with its data kept and the
change applied once; "this release" then refuses the newer database, and a read-only
copy that needs migrating says so. Runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import sqlalchemy as sa
from store_helpers import index_config, keys

from hy_memory_langgraph.errors import ReadOnlyStoreError, StoreError
from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.store.db import engine as engine_module
from hy_memory_langgraph.store.db.engine import create_store_engine, release_engine
from hy_memory_langgraph.store.db.migrations import (
    VERSIONS,
    Migration,
    MigrationContext,
    applied_versions,
    open_database,
    setup,
)
from hy_memory_langgraph.store.schema.tables import COMPONENT, MIGRATIONS


def _add_key_length(ctx: MigrationContext) -> None:
    """The synthetic change: ``hy_store_items.key_length``, filled for the stored rows."""
    table = ctx.table("hy_store_items")
    ctx.execute(f"ALTER TABLE {table} ADD COLUMN key_length INTEGER")
    ctx.execute(f"UPDATE {table} SET key_length = length(key)")


NEXT = (*MIGRATIONS, Migration(len(MIGRATIONS) + 1, "items.key_length", _add_key_length))


class NextRelease(HyMemoryStore):
    """The store as the next release would ship it."""

    MIGRATIONS: ClassVar[Any] = NEXT


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str | None]]:
    """``(path or URL, schema)`` of an empty database."""
    if request.param == "postgres":
        yield request.getfixturevalue("pg_url"), "mem_store"
    else:
        yield str(tmp_path / "mem.db"), None


def _versions(path: str, schema: str | None) -> list[int]:
    engine, _ = create_store_engine(path, schema=schema)
    try:
        with engine.connect() as conn:
            return sorted(applied_versions(conn, COMPONENT))
    finally:
        release_engine(engine)


def _key_lengths(path: str, schema: str | None) -> dict[str, int]:
    engine, _ = create_store_engine(path, schema=schema)
    try:
        with engine.connect() as conn:
            items = sa.Table("hy_store_items", sa.MetaData(), autoload_with=conn, schema=schema)
            return dict(conn.execute(sa.select(items.c.key, items.c.key_length)).all())
    finally:
        release_engine(engine)


def test_a_later_release_migrates_the_database_once_and_keeps_its_data(target: tuple[str, str | None]) -> None:
    path, schema = target
    with HyMemoryStore(path, schema=schema, index=index_config(["text"])) as store:
        store.put(("notes", "u1"), "k1", {"text": "green tea with jasmine"})
        store.put(("notes", "u1"), "key2", {"text": "black coffee"})
    assert _versions(path, schema) == [1]
    with NextRelease(path, schema=schema, index=index_config(["text"])) as store:
        assert store.get(("notes", "u1"), "k1").value == {"text": "green tea with jasmine"}  # type: ignore[union-attr]
        assert keys(store.search(("notes",), query="green tea with jasmine", limit=1)) == ["k1"]
    assert _versions(path, schema) == [1, 2]
    assert _key_lengths(path, schema) == {"k1": 2, "key2": 4}
    NextRelease(path, schema=schema).close()  # nothing left to do: the step is not run again
    assert _versions(path, schema) == [1, 2]
    with pytest.raises(StoreError, match="newer than this release"):
        HyMemoryStore(path, schema=schema)


def test_a_read_only_database_that_needs_migrating_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "mem.db"
    HyMemoryStore(path).close()
    monkeypatch.setattr(engine_module, "_writable", lambda path: False)  # as without permission
    with pytest.raises(ReadOnlyStoreError, match="need migrating"):
        NextRelease(path)
    with HyMemoryStore(path) as store:  # at the version this release uses: it reads
        assert store.read_only and store.get(("a",), "k") is None


def test_setup_is_idempotent_and_checks_the_numbering(target: tuple[str, str | None]) -> None:
    path, schema = target
    engine, _ = open_database(path, COMPONENT, MIGRATIONS, schema=schema)
    try:
        assert setup(engine, COMPONENT, MIGRATIONS) == len(MIGRATIONS)
        with engine.connect() as conn:
            rows = conn.execute(sa.select(VERSIONS.c.version).where(VERSIONS.c.component == COMPONENT)).scalars()
            assert list(rows) == [m.version for m in MIGRATIONS] == [1]
        with pytest.raises(StoreError, match="numbered"):
            setup(engine, COMPONENT, (NEXT[1],))
    finally:
        release_engine(engine)


def test_a_failed_setup_gives_its_engine_back(tmp_path: Path) -> None:
    def broken(ctx: MigrationContext) -> None:
        raise RuntimeError("a broken migration")

    with pytest.raises(RuntimeError, match="broken"):
        open_database(tmp_path / "x.db", "demo", (Migration(1, "broken", broken),))
    engine, _ = open_database(tmp_path / "x.db", "demo", (Migration(1, "nothing", lambda ctx: None),))
    try:  # the failed step left nothing recorded
        with engine.connect() as conn:
            assert applied_versions(conn, "demo") == {1}
    finally:
        release_engine(engine)


def test_every_component_records_its_versions(pg_url: str) -> None:
    from hy_memory_langgraph.chain.store import ChainStore
    from hy_memory_langgraph.pipeline_log.store import PipelineLogStore
    from hy_memory_langgraph.workflow.database import WorkflowDatabase

    for opened, component, schema in [
        (ChainStore(pg_url, schema="hy_code"), "version_chain", "hy_code"),
        (PipelineLogStore(pg_url, retention_days=1, schema="pipeline_log"), "pipeline_log", "pipeline_log"),
        (WorkflowDatabase(pg_url, schema="workflow_memory"), "workflow_memory", "workflow_memory"),
    ]:
        opened.close()
        engine, _ = create_store_engine(pg_url, schema=schema)
        try:
            with engine.connect() as conn:
                assert applied_versions(conn, component) == {1}
        finally:
            release_engine(engine)
