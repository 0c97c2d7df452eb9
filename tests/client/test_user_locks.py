"""The per-user lock writes share and an erasure takes alone (data-dir files and
PostgreSQL advisory locks): an erasure waits for the writes in flight, a write waits for
the erasure, other users are not held up, and a wait is bounded by MEMORY_DB_TIMEOUT_S."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.client.locks import UserLocks
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import StoreBusyError


@pytest.fixture(params=["files", "postgres"])
def config_of(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    def make(timeout: int = 30) -> MemoryConfig:
        env = {"MEMORY_DB_TIMEOUT_S": str(timeout)}
        if request.param == "postgres":
            url = request.getfixturevalue("pg_url")
            env |= {"MEMORY_DB_URL": url, "MEMORY_DB_SCHEMA_PREFIX": f"locks{id(request)}_"}
        return MemoryConfig.from_env(env, data_dir=tmp_path / "d")
    return make


def test_an_erasure_waits_for_the_writes_in_flight(config_of: Any) -> None:
    writer, eraser = UserLocks(config_of()), UserLocks(config_of())
    order: list[str] = []
    erasing = threading.Event()
    with writer.writing(["alice"]):
        with writer.writing(["alice", "bob"]):  # writes share the lock
            pass

        def erase() -> None:
            erasing.set()
            with eraser.erasing("alice"):
                order.append("erased")

        thread = threading.Thread(target=erase)
        thread.start()
        erasing.wait()
        with eraser.writing(["bob"]):  # another user's write is not held up
            order.append("bob wrote")
        order.append("alice's write done")
    thread.join(timeout=60)
    assert order == ["bob wrote", "alice's write done", "erased"]
    writer.close()
    eraser.close()


def test_a_wait_longer_than_the_timeout_is_our_error(config_of: Any) -> None:
    holder, waiter = UserLocks(config_of()), UserLocks(config_of(timeout=1))
    with holder.erasing("alice"), pytest.raises(StoreBusyError, match="MEMORY_DB_TIMEOUT_S"):
        with waiter.writing(["alice"]):
            pass
    with waiter.writing(["alice"]):  # free again once the erasure ended
        pass
    holder.close()
    waiter.close()


def test_lock_files_hold_nothing_of_the_user(tmp_path: Path) -> None:
    locks = UserLocks(MemoryConfig.from_env({}, data_dir=tmp_path / "d"))
    with locks.writing(["alice@example.com"]):
        pass
    files = list((tmp_path / "d" / "locks").iterdir())
    assert len(files) == 1 and "alice" not in files[0].name and files[0].read_bytes() == b""
    locks.close()
