"""Versioned migrations: a database made by an older schema is migrated on open.

The "old" database is built with the frozen version-1 tables and no version table,
exactly what releases before versioning wrote, with rows in it. Runs on SQLite and
PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from store_helpers import index_config, keys

from hy_memory_langgraph.errors import StoreError
from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.store.db.engine import (
    create_store_engine,
    release_engine,
    write_tx,
)
from hy_memory_langgraph.store.db.migrations import (
    VERSIONS,
    Migration,
    applied_versions,
    setup,
)
from hy_memory_langgraph.store.schema import v1 as schema_v1
from hy_memory_langgraph.store.schema.tables import COMPONENT, MIGRATIONS
from hy_memory_langgraph.testing import HashingEmbeddings


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str | None]]:
    """``(path or URL, schema)`` of an empty database."""
    if request.param == "postgres":
        yield request.getfixturevalue("pg_url"), "old_store"
    else:
        yield str(tmp_path / "old.db"), None


def _write_v1_database(path: str, schema: str | None) -> None:
    """Create the pre-versioning layout and fill it as an old release would have."""
    engine, _ = create_store_engine(path, schema=schema)
    embed = HashingEmbeddings(dims=64)
    t = schema_v1.metadata.tables
    try:
        with write_tx(engine) as conn:
            if schema:
                conn.execute(sa.schema.CreateSchema(schema, if_not_exists=True))
            schema_v1.metadata.create_all(conn)
            conn.execute(t["hy_store_meta"].insert(), [{"key": "store_uid", "value": "old"},
                                                       {"key": "dims", "value": "64"}])
            for i, (ns, text) in enumerate([("notes.u1", "green tea with jasmine"),
                                            ("notes.u1", "black coffee"),
                                            ("notes.u2.deep", "green tea ceremony")], start=1):
                item_id = conn.execute(t["hy_store_items"].insert().values(
                    namespace=ns, key=f"k{i}", value=json.dumps({"text": text}),
                    created_at=1, updated_at=i, ttl_minutes=None, expires_at=None)
                    .returning(t["hy_store_items"].c.id)).scalar_one()
                vector = np.asarray(embed.embed_query(text), dtype="<f4").tobytes()
                conn.execute(t["hy_store_vectors"].insert().values(
                    item_id=item_id, pos=0, field="text", text=text, embedding=vector))
                conn.execute(t["hy_store_changes"].insert().values(
                    item_id=item_id, op="put", namespace=ns, key=f"k{i}"))
    finally:
        release_engine(engine)


def _versions(path: str, schema: str | None) -> set[int]:
    engine, _ = create_store_engine(path, schema=schema)
    try:
        with engine.connect() as conn:
            return applied_versions(conn, COMPONENT)
    finally:
        release_engine(engine)


def test_old_database_is_migrated_on_open(target: tuple[str, str | None]) -> None:
    path, schema = target
    _write_v1_database(path, schema)
    assert _versions(path, schema) == set()
    with HyMemoryStore(path, schema=schema, index=index_config(["text"])) as store:
        assert store.get(("notes", "u1"), "k1").value == {"text": "green tea with jasmine"}
        assert sorted(keys(store.search(("notes",), query="green tea", limit=2))) == ["k1", "k3"]
        assert keys(store.search(("notes", "u2"), query="green tea", limit=5)) == ["k3"]
        store.put(("notes", "u2", "deep"), "k4", {"text": "green tea again"})
        store.put(("notes", "u2"), "k5", {"text": "green tea, not embedded"}, index=False)
        store.put(("notes", "u1"), "k1", {"text": "green tea, no longer embedded"}, index=False)
        found = store.search(("notes",), query="green tea", limit=5)
        assert sorted(i.key for i in found if i.score is not None) == ["k2", "k3", "k4"]
        assert sorted(i.key for i in found if i.score is None) == ["k1", "k5"]  # no vectors
    assert _versions(path, schema) == {m.version for m in MIGRATIONS}
    engine, _ = create_store_engine(path, schema=schema)
    try:
        with engine.connect() as conn:
            items = sa.Table("hy_store_items", sa.MetaData(), autoload_with=conn, schema=schema)
            scopes = dict(conn.execute(sa.select(items.c.key, items.c.scope)).all())
    finally:
        release_engine(engine)
    # rows written since version 6 have a scope only with vectors; older rows keep theirs
    assert scopes == {"k1": None, "k2": "notes.u1", "k3": "notes.u2", "k4": "notes.u2", "k5": None}


def test_setup_is_idempotent_and_append_only(target: tuple[str, str | None]) -> None:
    path, schema = target
    HyMemoryStore(path, schema=schema).close()
    HyMemoryStore(path, schema=schema).close()  # second open: nothing left to do
    engine, _ = create_store_engine(path, schema=schema)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.select(VERSIONS.c.version).where(
                VERSIONS.c.component == COMPONENT).order_by(VERSIONS.c.version)).scalars().all()
        assert rows == [m.version for m in MIGRATIONS] == [1, 2, 3, 4, 5, 6]
        newest = len(MIGRATIONS) + 1
        extra = (*MIGRATIONS, Migration(newest, "a later release", lambda ctx: ctx.execute(
            f"CREATE TABLE {ctx.table('later')} (x INTEGER)")))
        assert setup(engine, COMPONENT, extra) == newest
        with pytest.raises(StoreError, match="newer than this release"):
            setup(engine, COMPONENT, MIGRATIONS)
        with pytest.raises(StoreError, match="numbered"):
            setup(engine, COMPONENT, (MIGRATIONS[1],))
    finally:
        release_engine(engine)


def test_every_component_records_its_versions(tmp_path: Path, pg_url: str) -> None:
    from hy_memory_langgraph.chain.store import ChainStore
    from hy_memory_langgraph.runlog import PipelineLogStore
    from hy_memory_langgraph.workflow.database import WorkflowDatabase

    for opened, component, schema, versions in [
        (ChainStore(pg_url, schema="hy_code"), "version_chain", "hy_code", {1}),
        (PipelineLogStore(pg_url, retention_days=1, schema="pipeline_log"), "pipeline_log", "pipeline_log", {1, 2}),
        (WorkflowDatabase(pg_url, schema="workflow_memory"), "workflow_memory", "workflow_memory", {1}),
    ]:
        opened.close()
        engine, _ = create_store_engine(pg_url, schema=schema)
        try:
            with engine.connect() as conn:
                assert applied_versions(conn, component) == versions
        finally:
            release_engine(engine)
