"""Writers of different users on one PostgreSQL store run side by side; writers of one
user, and every append to the change log, still take turns (``store/db/locks.py``).

Waits are observed, never timed: a writer is known to be blocked when the server shows
its backend waiting for an advisory lock.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
import time
from typing import Any

import pytest
from langgraph.store.base import PutOp

from hy_memory_langgraph.errors import ConflictError
from hy_memory_langgraph.store import GuardOp, HyMemoryStore
from hy_memory_langgraph.store.db.engine import write_tx
from hy_memory_langgraph.store.db.locks import lock_log, scope_keys
from hy_memory_langgraph.store.namespaces import encode
from hy_memory_langgraph.store.schema.tables import scope_of
from hy_memory_langgraph.testing import HashingEmbeddings
from tests.reliability.pg_admin import admin_scalar

DEADLINE_S = 120  # a hang guard only: every wait below ends on an event
WRITERS = 4
PUTS = 40
INCREMENTS = 10


def _index() -> dict[str, Any]:
    return {"dims": 32, "embed": HashingEmbeddings(dims=32), "fields": ["text"]}


def _advisory_waiters(url: str) -> int:
    return admin_scalar(url, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                             "AND wait_event_type = 'Lock' AND wait_event = 'advisory'")


def _wait_for_waiters(url: str, n: int) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while _advisory_waiters(url) < n:
        assert time.monotonic() < deadline, f"no writer came to wait for the lock within {DEADLINE_S} s"
        time.sleep(0.05)


def _put_in_child(url: str, schema: str, user: str, out: Any) -> None:
    with HyMemoryStore(url, schema=schema, index=None) as store:
        store.put(("u", user), "note", {"text": f"{user} writes"})
    out.put(user)


def _thread(fn: Any) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, errors


def test_scope_keys_are_sorted_distinct_and_per_scope() -> None:
    keys = scope_keys(["b", "a", "b"])
    assert keys == sorted(keys) and len(keys) == 2
    assert scope_keys([scope_of(encode(("u", "alice", "notes")))]) == scope_keys([scope_of(encode(("u", "alice")))])


def test_another_users_writer_goes_on_while_one_user_is_locked(pg_url: str) -> None:
    with HyMemoryStore(pg_url, schema="par", index=None) as store:
        store.put(("u", "alice"), "seed", {"text": "seed"})
        ctx = mp.get_context("spawn")
        out = ctx.Queue()
        with write_tx(store._engine, scopes=[scope_of(encode(("u", "alice")))]) as conn:
            conn.exec_driver_sql("SELECT 1")  # alice's writer, mid-way: its first statement took the lock
            blocked, errors = _thread(lambda: store.put(("u", "alice", "notes"), "n1", {"text": "waits"}))
            child = ctx.Process(target=_put_in_child, args=(pg_url, "par", "bob", out))
            child.start()
            assert out.get(timeout=DEADLINE_S) == "bob"  # bob's write committed meanwhile
            child.join(DEADLINE_S)
            assert child.exitcode == 0
            _wait_for_waiters(pg_url, 1)
            assert blocked.is_alive()  # alice's other writer waits for the lock
        blocked.join(DEADLINE_S)
        assert not blocked.is_alive() and errors == []
        assert store.get(("u", "bob"), "note").value == {"text": "bob writes"}
        assert store.get(("u", "alice", "notes"), "n1").value == {"text": "waits"}


def test_the_change_log_is_appended_in_commit_order(pg_url: str) -> None:
    with HyMemoryStore(pg_url, schema="order", index=_index()) as reader, \
            HyMemoryStore(pg_url, schema="order", index=_index()) as writer:
        writer.put(("u", "bob"), "a", {"text": "first"})
        assert [i.key for i in reader.search(("u", "bob"), query="first")] == ["a"]  # cached
        with write_tx(writer._engine, scopes=()) as conn:
            lock_log(conn)  # an append in flight: every other append waits behind it
            late, errors = _thread(lambda: writer.put(("u", "bob"), "b", {"text": "second"}))
            _wait_for_waiters(pg_url, 1)
            assert late.is_alive()
            assert {i.key for i in reader.search(("u", "bob"), query="second")} == {"a"}
        late.join(DEADLINE_S)
        assert errors == []
        assert {i.key for i in reader.search(("u", "bob"), query="second")} == {"a", "b"}


def _worker(url: str, schema: str, me: int, barrier: Any, out: Any) -> None:
    lost = 0
    with HyMemoryStore(url, schema=schema, index=_index()) as store:
        barrier.wait(DEADLINE_S)
        for i in range(PUTS):
            store.put(("u", f"user{me}"), f"k{i}", {"text": f"memory {i} of user {me}", "i": i})
            if i % 4 == 3:
                store.delete(("u", f"user{me}"), f"k{i - 1}")
        for _ in range(INCREMENTS):
            while True:  # compare-and-set on one item every writer shares
                current = store.get(("shared", "counter"), "n")
                assert current is not None
                n = current.value["n"]
                try:
                    store.batch([GuardOp(("shared", "counter"), "n", {"n": n}),
                                 PutOp(("shared", "counter"), "n", {"n": n + 1, "text": "counter"})])
                    break
                except ConflictError:
                    lost += 1
    out.put((me, lost))


@pytest.mark.parametrize("writers", [WRITERS])
def test_parallel_writers_lose_nothing_and_readers_catch_up(pg_url: str, writers: int) -> None:
    with HyMemoryStore(pg_url, schema="many", index=_index()) as reader:
        reader.put(("shared", "counter"), "n", {"n": 0, "text": "counter"})
        for me in range(writers):  # the reader caches every user's scope before the writes
            reader.put(("u", f"user{me}"), "seed", {"text": "seed"})
            assert reader.search(("u", f"user{me}"), query="seed")
        ctx = mp.get_context("spawn")
        barrier, out = ctx.Barrier(writers), ctx.Queue()
        procs = [ctx.Process(target=_worker, args=(pg_url, "many", me, barrier, out)) for me in range(writers)]
        for proc in procs:
            proc.start()
        try:
            done = dict(out.get(timeout=DEADLINE_S * 2) for _ in procs)
        finally:
            for proc in procs:
                proc.join(DEADLINE_S)
                if proc.is_alive():
                    proc.kill()
        assert sorted(done) == list(range(writers)) and all(p.exitcode == 0 for p in procs)
        assert reader.get(("shared", "counter"), "n").value["n"] == writers * INCREMENTS  # no lost update
        deleted = {i - 1 for i in range(PUTS) if i % 4 == 3}
        with HyMemoryStore(pg_url, schema="many", index=_index()) as fresh:
            for me in range(writers):
                ns = ("u", f"user{me}")
                expected = {"seed"} | {f"k{i}" for i in range(PUTS) if i not in deleted}
                assert {i.key for i in fresh.search(ns, limit=1000)} == expected
                query = f"memory 7 of user {me}"
                caught_up = {i.key: i.score for i in reader.search(ns, query=query, limit=1000)}
                rebuilt = {i.key: i.score for i in fresh.search(ns, query=query, limit=1000)}
                assert caught_up == pytest.approx(rebuilt, abs=1e-5) and set(caught_up) == expected
