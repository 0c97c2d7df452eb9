"""Who takes what from the queue: a session's requests one run at a time and in arrival
order, whichever worker takes them; requests of a session that arrived within the delay
taken together (within the bounds); a run whose worker died taken again, whole. Clocks
are passed explicitly (``now=``): nothing here depends on time."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.jobs.checkpoints import advisory_lease
from hy_memory_langgraph.jobs.codec import MERGE_SPAN_S, session_key
from hy_memory_langgraph.jobs.lease import FileLease, Lease
from hy_memory_langgraph.jobs.queue import MAX_MERGED, JobQueue
from hy_memory_langgraph.testing import ScriptedChatModel


@pytest.fixture
def queue_and_leases(backend: str, tmp_path: Path,
                     request: pytest.FixtureRequest) -> Iterator[tuple[JobQueue, Callable[[], Lease]]]:
    """A fresh queue and a way to take a worker lease on it (SQLite: one at a time)."""
    leases: list[Lease] = []
    if backend == "postgres":
        schemas = request.getfixturevalue("pg_schemas")
        schema = schemas.prefix() + "background"
        queue = JobQueue(schemas.url, schema=schema)

        def lease() -> Lease:
            leases.append(advisory_lease(schemas.url, schema))
            return leases[-1]
    else:
        queue = JobQueue(tmp_path / "background.db")

        def lease() -> Lease:
            file_lease = FileLease(tmp_path / "background.lock")
            assert file_lease.acquire(wait=False)
            leases.append(file_lease)
            return file_lease
    yield queue, lease
    for held in leases:
        held.release()
    queue.close()


def _put(queue: JobQueue, rid: str, session: str = "s1", *, key: str = "k", at: float = 0.0, now: float = 0.0,
         delay: float = 0.0) -> None:
    queue.enqueue({"request_id": rid}, request_id=rid, user_id="u", session_key=session_key("u", session),
                  merge_key=key, at_ts=at, delay=delay, now=now)


def _ids(run: Any) -> list[str]:
    return [job.request_id for job in run.jobs] if run is not None else []


def test_a_session_runs_one_run_at_a_time_in_arrival_order(queue_and_leases: Any, backend: str) -> None:
    queue, take = queue_and_leases
    _put(queue, "a", key="k1")
    _put(queue, "b", key="k2")  # another merge key: its own run, after a
    _put(queue, "c", session="s2")
    first = take()
    run_a = queue.claim(first, now=1)
    assert _ids(run_a) == ["a"]
    other = take() if backend == "postgres" else first  # SQLite: one worker per data dir
    assert _ids(queue.claim(other, now=1)) == ["c"]
    assert queue.claim(other, now=1) is None  # b waits for a, whoever asks
    queue.finish(run_a, first)  # its memories are written: the session's next run may start
    assert _ids(queue.claim(other, now=1)) == ["b"]


def test_a_run_whose_worker_died_is_taken_again_whole(queue_and_leases: Any, backend: str) -> None:
    queue, take = queue_and_leases
    _put(queue, "a")
    _put(queue, "b")
    dead = take()
    run = queue.claim(dead, now=1)
    assert _ids(run) == ["a", "b"]
    _put(queue, "c")  # arrived while a and b ran: not part of their run
    dead.release()  # the process died: its lease went with it
    heir = take()
    again = queue.claim(heir, now=1)
    assert again is not None and (again.run_id, _ids(again)) == (run.run_id, ["a", "b"])
    assert again.attempt == run.attempt == 1  # a resumption is not a failed attempt
    queue.retry(again, heir, "model down", ready_at=50)
    assert queue.claim(heir, now=10) is None  # backing off
    retried = queue.claim(heir, now=50)
    assert (_ids(retried), retried.attempt) == (["a", "b"], 2)


def test_requests_within_the_delay_are_taken_together(queue_and_leases: Any) -> None:
    queue, take = queue_and_leases
    worker = take()
    _put(queue, "a", now=0, delay=5)
    _put(queue, "b", now=3, delay=5)
    assert queue.claim(worker, now=4.9) is None  # the first still waits for more
    run = queue.claim(worker, now=5)
    assert _ids(run) == ["a", "b"]
    _put(queue, "c", now=6, delay=5)  # after the run was taken: a run of its own
    queue.finish(run, worker)
    assert queue.claim(worker, now=10) is None
    assert _ids(queue.claim(worker, now=11)) == ["c"]
    _put(queue, "d", now=12, delay=5)
    assert queue.claim(worker, now=100, ignore_delay=True) is None  # c still runs: d waits for it


def test_what_may_not_be_merged_is_not(queue_and_leases: Any) -> None:
    queue, take = queue_and_leases
    worker = take()
    for i in range(MAX_MERGED + 3):
        _put(queue, f"r{i}")
    _put(queue, "later", at=MERGE_SPAN_S + 1)  # a replayed, much later conversation
    _put(queue, "other", key="k2")
    runs = []
    while (run := queue.claim(worker, now=1)) is not None:
        runs.append(_ids(run))
        queue.finish(run, worker)
    assert [len(r) for r in runs] == [MAX_MERGED, 3, 1, 1]
    assert runs[2:] == [["later"], ["other"]]


def test_two_workers_keep_each_session_in_order(make_client: Callable[..., HyMemoryClient],
                                               tmp_path: Path) -> None:
    """Two clients of one data dir or database flushing at once (two workers on
    PostgreSQL; on SQLite the second waits for the first's lock), twelve sessions of four
    requests each, every request a run of its own (their metadata differ)."""
    model = ScriptedChatModel.from_stages({"chat_extract": {"facts": []}})
    one = make_client("pro", model, data_dir=tmp_path / "d", background_delay_s=3600.0)
    two = make_client("pro", model, data_dir=tmp_path / "d", background_delay_s=3600.0)
    for step in range(4):
        for session in range(12):
            client = one if (step + session) % 2 else two
            client.add(f"session {session} step {step}", user_id="u", session_id=f"s{session}",
                       metadata={"step": step}, background=True)
    other = threading.Thread(target=two.flush)
    other.start()
    assert one.flush() == {"outstanding": 0, "failed": 0}
    other.join()
    seen: dict[str, list[int]] = {}
    for prompt in model.prompts:
        new = str(prompt[-1].content).split("<new_messages ")[-1]
        for session in range(12):
            seen.setdefault(f"s{session}", []).extend(
                step for step in range(4) if f'"session {session} step {step}"' in new)
    assert seen == {f"s{session}": [0, 1, 2, 3] for session in range(12)}


def test_one_sqlite_worker_per_data_dir_and_the_others_wait(tmp_path: Path) -> None:
    from hy_memory_langgraph.jobs.lease import holder_of

    first, second = FileLease(tmp_path / "background.lock"), FileLease(tmp_path / "background.lock")
    assert holder_of(tmp_path / "background.lock") is None
    assert first.acquire(wait=False) and not second.acquire(wait=False)
    assert holder_of(tmp_path / "background.lock") == first.key
    first.release()  # as the kernel does when its process dies
    assert holder_of(tmp_path / "background.lock") is None and second.acquire(wait=False)
    assert holder_of(tmp_path / "background.lock") == second.key
    second.release()
