"""A frozen PostgreSQL server (every process stopped with SIGSTOP: it accepts and answers
nothing) never hangs a call: ``add`` and ``search`` fail with our error naming the server
within a bound set by ``MEMORY_DB_TIMEOUT_S``, a client opened meanwhile too; once the
server runs again, the same client reads and writes, and nothing acknowledged is lost.

The server is one this test starts for itself: freezing the shared one would stall the
other tests and people using it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import HyMemoryError, StoreBusyError, StoreUnavailableError
from hy_memory_langgraph.store.db.timeouts import round_trip_limit
from hy_memory_langgraph.testing import HashingEmbeddings
from tests.pg_server import PgServer, start_private_server

TIMEOUT_S = 2
#: Generous: the bound is the timeout plus the watchdog's grace and its check interval;
#: a loaded machine may add scheduling delays, never a multiple of the timeout.
BOUND_S = 10 * TIMEOUT_S


@pytest.fixture
def frozen_server() -> Iterator[PgServer]:
    try:
        server = start_private_server()
    except RuntimeError as exc:
        pytest.fail(f"a frozen server needs PostgreSQL binaries of this test's own: {exc}")
    try:
        yield server
    finally:
        server.thaw()  # whatever the test did: a stopped server cannot be stopped cleanly
        server.stop()


def _client(url: str, data_dir: Path) -> HyMemoryClient:
    config = MemoryConfig.from_env({"MEMORY_DB_TIMEOUT_S": str(TIMEOUT_S)}, data_dir=data_dir, db_url=url)
    return HyMemoryClient(mode="lite", config=config, embeddings=HashingEmbeddings(dims=32))


def _search_with_a_new_client(url: str, data_dir: Path) -> None:
    with _client(url, data_dir) as client:
        client.search("tea", user_ids=["alice"])


def _bounded(call: Callable[[], Any]) -> tuple[float, BaseException | None]:
    """Run ``call`` in a thread, wait for it to end (the test fails if it does not within
    a minute, rather than hanging), and return how long it took and what it raised."""
    done: dict[str, Any] = {}

    def run() -> None:
        start = time.monotonic()
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            done["error"] = exc
        done["elapsed"] = time.monotonic() - start

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the call hung on a frozen server"
    return done["elapsed"], done.get("error")


def test_a_frozen_server_fails_add_and_search_within_the_timeout(frozen_server: PgServer, tmp_path: Path) -> None:
    admin = sa.create_engine(frozen_server.url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    with admin.connect() as conn:
        conn.execute(sa.text('CREATE DATABASE "frozen"'))
    admin.dispose()
    url = frozen_server.database_url("frozen")
    host = sa.make_url(url).host
    client = _client(url, tmp_path / "a")
    try:
        assert client.add("I like green tea", user_id="alice")["success"] is True
        assert [m["content"] for m in client.search("green tea", user_ids=["alice"])["memories"]] == [
            "I like green tea"]

        frozen_server.freeze()
        calls: dict[str, Callable[[], Any]] = {
            "add": lambda: client.add("I like black coffee", user_id="alice"),
            "search": lambda: client.search("green tea", user_ids=["alice"]),
            "list": lambda: client.list_memories("alice"),
            "new client": lambda: _search_with_a_new_client(url, tmp_path / "b"),
        }
        for name, call in calls.items():
            elapsed, error = _bounded(call)
            assert isinstance(error, (StoreUnavailableError, StoreBusyError)), (name, repr(error))
            assert host in str(error) and "MEMORY_DB_TIMEOUT_S" in str(error), (name, str(error))
            assert elapsed < BOUND_S, (name, elapsed)
            if name != "new client":  # one wait, never a second after it (a retry doubled it)
                assert elapsed < 2 * round_trip_limit(TIMEOUT_S), (name, elapsed)
        frozen_server.thaw()

        # The same client goes on: its broken connections were dropped.
        assert client.add("I like oolong tea", user_id="alice")["success"] is True
        contents = {m["content"] for m in client.list_memories("alice")["memories"]}
        assert {"I like green tea", "I like oolong tea"} <= contents
        assert "I like oolong tea" in [m["content"] for m in client.search("oolong", user_ids=["alice"])["memories"]]
    finally:
        frozen_server.thaw()
        client.close()


def test_a_store_opened_on_a_frozen_server_fails_within_the_timeout(frozen_server: PgServer) -> None:
    from hy_memory_langgraph.store import HyMemoryStore

    frozen_server.freeze()
    elapsed, error = _bounded(lambda: HyMemoryStore(frozen_server.url, schema="frozen", index=None,
                                                    timeout_s=TIMEOUT_S))
    assert isinstance(error, HyMemoryError), repr(error)
    assert "127.0.0.1" in str(error) and "MEMORY_DB_TIMEOUT_S" in str(error), str(error)
    assert elapsed < BOUND_S, elapsed


def test_a_frozen_server_never_hangs_the_background_worker(frozen_server: PgServer, tmp_path: Path) -> None:
    """The server freezes while a queued write runs (its model call in progress): the
    worker's next round trips (LangGraph's checkpointer and the worker's lease are on
    psycopg connections of their own) end within the bound, so ``close`` returns; once the
    server runs again, a new client's worker finishes the write."""
    from hy_memory_langgraph.testing import ScriptedChatModel

    admin = sa.create_engine(frozen_server.url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    with admin.connect() as conn:
        conn.execute(sa.text('CREATE DATABASE "frozen_bg"'))
    admin.dispose()
    url = frozen_server.database_url("frozen_bg")
    started, go = threading.Event(), threading.Event()

    def extract(_messages: Any) -> str:
        started.set()
        go.wait(60)
        return '{"facts": [{"content": "I like green tea", "subject": "user", "owner": "user"}]}'

    def pro_client() -> HyMemoryClient:
        config = MemoryConfig.from_env({"MEMORY_DB_TIMEOUT_S": str(TIMEOUT_S)}, data_dir=tmp_path, db_url=url)
        model = ScriptedChatModel.from_stages({"chat_extract": extract})
        return HyMemoryClient(mode="pro", llm=model, config=config, embeddings=HashingEmbeddings(dims=32))

    client = pro_client()
    try:
        assert client.add("I like green tea", user_id="alice", background=True)["status"] == "queued"
        assert started.wait(60), "the worker never ran the write"
        frozen_server.freeze()
        go.set()
        elapsed, error = _bounded(client.close)
        assert error is None, repr(error)
        assert elapsed < 3 * BOUND_S, elapsed  # a few bounded round trips in a row at most
    finally:
        go.set()
        frozen_server.thaw()
    with pro_client() as again:
        assert again.flush(timeout=120)["outstanding"] == 0
        assert [m["content"] for m in again.search("green tea", user_ids=["alice"])["memories"]] == [
            "I like green tea"]
