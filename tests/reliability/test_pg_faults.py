"""PostgreSQL faults: a connection killed under the store (as by a server restart) never
reaches the caller as a driver error; an idempotent write is retried once; a server that
stays down is a StoreUnavailableError naming the database."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from langgraph.store.base import PutOp

from hy_memory_langgraph.errors import StoreUnavailableError
from hy_memory_langgraph.store import GuardOp, HyMemoryStore
from tests.reliability.pg_admin import admin_scalar


def _kill_connections(url: str) -> int:
    """Terminate every other backend of the store's database (what a restart does)."""
    return admin_scalar(url, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                             "WHERE datname = current_database() AND pid <> pg_backend_pid()")


def test_writes_and_reads_go_on_after_the_servers_connections_die(pg_url: str) -> None:
    with HyMemoryStore(pg_url, schema="faults", index=None) as store:
        store.put(("n",), "a", {"text": "before"})
        assert _kill_connections(pg_url) >= 1
        store.put(("n",), "b", {"text": "after"})  # pooled connections were dead
        assert store.get(("n",), "a").value == {"text": "before"}
        assert _kill_connections(pg_url) >= 1
        assert [i.key for i in store.search(("n",))] == ["b", "a"]


def test_an_unguarded_batch_is_retried_once_and_a_guarded_one_is_not(pg_url: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    with HyMemoryStore(pg_url, schema="retry", index=None) as store:
        calls: list[int] = []
        real = store._execute

        def lost_once(plan: Any, *args: object) -> list:
            calls.append(len(plan.results))
            if len(calls) == 1:
                raise sa.exc.OperationalError("COMMIT", {}, Exception("server closed the connection unexpectedly"))
            return real(plan, *args)

        monkeypatch.setattr(store, "_execute", lost_once)
        store.put(("n",), "a", {"text": "x"})
        assert len(calls) == 2 and store.get(("n",), "a") is not None
        calls.clear()
        with pytest.raises(StoreUnavailableError, match="unreachable.*retry"):
            store.batch([GuardOp(("n",), "a", None), PutOp(("n",), "a", {"text": "y"})])
        assert len(calls) == 1


def test_a_server_that_is_down_is_our_error_naming_it() -> None:
    url = "postgresql+psycopg://nobody:secret@127.0.0.1:9/none?connect_timeout=2"
    with pytest.raises(StoreUnavailableError, match=r"127\.0\.0\.1:9.*unreachable") as info:
        HyMemoryStore(url, schema="down", index=None)
    assert "secret" not in str(info.value)


def test_a_database_that_does_not_exist_is_our_error_with_the_fix(pg_url: str) -> None:
    from hy_memory_langgraph.client import HyMemoryClient
    from hy_memory_langgraph.testing import HashingEmbeddings

    missing = sa.make_url(pg_url).set(database="hy_no_such_db").render_as_string(hide_password=False)
    with pytest.raises(StoreUnavailableError, match="does not exist.*CREATE DATABASE"):
        HyMemoryClient(mode="lite", db_url=missing, embeddings=HashingEmbeddings(dims=32))


def test_a_connection_lost_inside_a_write_is_the_drivers_error_and_the_store_goes_on(pg_url: str) -> None:
    from hy_memory_langgraph.store.db.engine import write_tx

    with HyMemoryStore(pg_url, schema="midway", index=None) as store:
        store.put(("u", "a"), "k", {"text": "before"})
        with pytest.raises(sa.exc.DBAPIError), write_tx(store._engine, scopes=["u.a"]) as conn:
            pid = int(conn.exec_driver_sql("SELECT pg_backend_pid()").scalar() or 0)
            assert admin_scalar(pg_url, f"SELECT count(pg_terminate_backend({pid}))") == 1
            conn.exec_driver_sql("SELECT 1")  # the server is gone mid-transaction
        store.put(("u", "a"), "k2", {"text": "after"})
        assert {i.key for i in store.search(("u", "a"))} == {"k", "k2"}

