"""SQLite stores checkpoint their write-ahead log from a background thread, never from a
write's commit, and the log stays bounded."""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa

from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.store.db import engine as engine_module
from hy_memory_langgraph.store.db import wal
from hy_memory_langgraph.store.db.engine import (
    create_store_engine,
    release_engine,
    write_tx,
)
from hy_memory_langgraph.store.db.wal import WalCheckpointer

NS = ("docs", "u1")


def _until(condition: Callable[[], bool], seconds: float = 120.0) -> bool:
    """Wait for ``condition`` (the deadline only guards against a hang)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _write_many(store: HyMemoryStore, count: int) -> None:
    for i in range(count):  # one commit each
        store.put(NS, f"k{i:05d}", {"text": f"note {i} " + "words " * 40}, index=False)


def _wal_bytes(store: HyMemoryStore) -> int:
    assert store._local_file is not None
    return Path(f"{store._local_file}-wal").stat().st_size


def test_writers_leave_checkpoints_to_the_thread(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wal, "DELAY_S", 0.01)
    with HyMemoryStore(tmp_path / "s.db", index=None) as store:
        with store._engine.connect() as conn:
            pages = conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar()
        assert pages == wal.WRITER_CHECKPOINT_PAGES
        checkpointer = store._checkpointer
        assert checkpointer is not None and not checkpointer.running  # no write yet
        _write_many(store, 3)
        assert _until(lambda: checkpointer.checkpoints >= 1)
        assert checkpointer.running
    assert not checkpointer.running  # closing the store stopped it


def _burst_then_settle(store: HyMemoryStore, start: int, gate: threading.Event) -> int:
    """Write 100 commits while the thread is held, let it checkpoint them; the log's size."""
    checkpointer = store._checkpointer
    assert checkpointer is not None
    gate.clear()  # no checkpoint during the burst, however slow the machine is
    for i in range(start, start + 100):
        store.put(NS, f"k{i:05d}", {"text": f"note {i} " + "words " * 40}, index=False)
    gate.set()
    assert checkpointer.wait_settled(timeout=120)  # a checkpoint begun after the last write
    return _wal_bytes(store)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Checkpoints 0.01 s after writes, but each waits until the returned event is set
    (cleared: none can run, however slow the machine is)."""
    monkeypatch.setattr(wal, "DELAY_S", 0.01)
    gate = threading.Event()
    checkpoint = WalCheckpointer._checkpoint

    def wait_then_checkpoint(self: WalCheckpointer) -> None:
        gate.wait()
        checkpoint(self)

    monkeypatch.setattr(WalCheckpointer, "_checkpoint", wait_then_checkpoint)
    return gate


def test_the_log_starts_over_once_the_thread_has_copied_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: threading.Event) -> None:
    """After a pause the next writer reuses the log from its start: two bursts leave it as
    long as one (without the thread it holds both, until the writers' own threshold)."""
    gate = held
    with HyMemoryStore(tmp_path / "reused.db", index=None) as store:
        first = _burst_then_settle(store, 0, gate)
        second = _burst_then_settle(store, 100, gate)
    assert second == first, (first, second)
    monkeypatch.setattr(WalCheckpointer, "written", lambda self: None)  # nobody checkpoints
    with HyMemoryStore(tmp_path / "grown.db", index=None) as store:
        _write_many(store, 200)
        grown = _wal_bytes(store)
    assert grown >= first * 1.6, (first, grown)


def test_wait_settled_waits_for_a_checkpoint_after_the_last_write(
        tmp_path: Path, held: threading.Event) -> None:
    gate = held
    with HyMemoryStore(tmp_path / "settle.db", index=None) as store:
        checkpointer = store._checkpointer
        assert checkpointer is not None and checkpointer.wait_settled(timeout=0)  # nothing written
        _write_many(store, 2)
        assert not checkpointer.wait_settled(timeout=0.05)  # held: not settled
        gate.set()
        assert checkpointer.wait_settled(timeout=120) and checkpointer.checkpoints >= 1


def test_read_only_and_memory_stores_have_no_checkpointer(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    with HyMemoryStore("sqlite://", index=None) as store:
        assert store._checkpointer is None
        store.put(NS, "k", {"text": "x"}, index=False)
    with HyMemoryStore(tmp_path / "ro.db", index=None) as store:
        store.put(NS, "k", {"text": "x"}, index=False)
    monkeypatch.setattr(engine_module, "_writable", lambda path: False)  # as without permission
    with HyMemoryStore(tmp_path / "ro.db", index=None) as store:
        assert store.read_only and store._checkpointer is None
        assert store.get(NS, "k") is not None


def test_a_failed_checkpoint_is_logged_and_the_next_write_retries(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    engine, _ = create_store_engine(tmp_path / "e.db", wal_autocheckpoint=0)
    checkpointer = WalCheckpointer(engine, delay_s=0.005)
    calls = []
    real_connect = engine.connect

    def flaky_connect() -> sa.Connection:
        calls.append(1)
        if len(calls) == 1:
            raise sa.exc.OperationalError("PRAGMA", {}, Exception("disk I/O error"))
        return real_connect()

    engine.connect = flaky_connect  # type: ignore[method-assign]
    try:
        with caplog.at_level(logging.ERROR, logger=wal.__name__):
            checkpointer.written()
            assert _until(lambda: len(calls) >= 1 and not checkpointer._pending.is_set())
            assert _until(lambda: any("checkpoint of" in r.getMessage() for r in caplog.records))
            assert checkpointer.checkpoints == 0
            engine.connect = real_connect  # type: ignore[method-assign]
            with write_tx(engine) as conn:
                conn.exec_driver_sql("CREATE TABLE t (x INTEGER)")
            checkpointer.written()
            assert _until(lambda: checkpointer.checkpoints == 1)
    finally:
        checkpointer.close()
        release_engine(engine)


# Dropping a store without close() is what this test does: Python 3.13 reports the pooled
# SQLite connection the collector closes (a ResourceWarning, raised as an unraisable one).
@pytest.mark.filterwarnings("ignore:unclosed database:ResourceWarning",
                            "ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_store_dropped_without_close_lets_its_thread_end(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wal, "DELAY_S", 0.005)
    monkeypatch.setattr(wal, "IDLE_CHECK_S", 0.01)
    store = HyMemoryStore(tmp_path / "dropped.db", index=None)
    _write_many(store, 2)
    thread = _checkpointing_thread(store)
    del store
    gc.collect()
    assert _until(lambda: not thread.is_alive())


def _checkpointing_thread(store: HyMemoryStore) -> threading.Thread:
    checkpointer = store._checkpointer
    assert checkpointer is not None and _until(lambda: checkpointer.checkpoints >= 1)
    thread = checkpointer._daemon.thread
    assert thread is not None and thread.is_alive()
    return thread
