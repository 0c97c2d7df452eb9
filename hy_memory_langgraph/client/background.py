"""Background writes: a client's queue, the worker loop that empties it, what callers see.

``add(..., background=True)`` prepares the write as any add does, then
:meth:`Background.enqueue` stores it in the queue (:mod:`hy_memory_langgraph.jobs.queue`,
one row, one transaction, sealed) and returns. A worker (:meth:`Background.serve`: the
client's thread, started with the first queued write, or ``hy-memory worker`` in another
process) takes runs from the queue and runs the client's own write graph on each,
compiled with a checkpointer on the queue's database (:mod:`hy_memory_langgraph.jobs.checkpoints`),
one thread per run, with ``durability="sync"``: every step is saved before the next one
starts. So:

* a worker killed mid-run leaves its run to the next worker, which resumes it at the node
  it stopped in (a crash after extraction resumes at reconcile: no second extraction);
* the nodes that write memories write a journal entry in the same transaction
  (:mod:`hy_memory_langgraph.services.journal`), so a node re-run after a crash applies
  nothing twice;
* a model call that fails raises to the run (``raise_errors``), which is retried from its
  checkpoint after a backoff (:func:`backoff`); the last of :data:`RETRY_ATTEMPTS`
  attempts lets every stage take its documented fallback (the raw turns are stored when
  extraction fails), and the requests show as ``failed`` with the reason. A run that
  cannot even store its fallback keeps its write (``failed``, payload kept).

Each request's pipeline log gets a ``queue`` stage: the time it waited, the run it went
into and how many requests that run took together.

Example:
    >>> client = HyMemoryClient(mode="pro", llm=model, data_dir="/tmp/m")  # doctest: +SKIP
    >>> client.add("I moved to Lyon", user_id="u1", background=True)["status"]  # doctest: +SKIP
    'queued'
    >>> client.flush()["outstanding"]  # doctest: +SKIP
    0
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from hy_memory_langgraph.client.locks import UserLocks
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import HyMemoryError, StoreCorruptionError
from hy_memory_langgraph.flows.contracts import PreparedWrite
from hy_memory_langgraph.jobs.checkpoints import Checkpoints, advisory_lease
from hy_memory_langgraph.jobs.codec import decode_write, encode_write, merge_key, merge_writes, session_key
from hy_memory_langgraph.jobs.lease import FileLease, Lease, holder_of, queue_lock_key, worker_held
from hy_memory_langgraph.jobs.pending import PendingTurn, pending_turns
from hy_memory_langgraph.jobs.queue import JobQueue, Run, thread_id_of
from hy_memory_langgraph.models import embedding_owners
from hy_memory_langgraph.pipeline_log.meter import StageMeter
from hy_memory_langgraph.pipeline_log.recorder import PipelineRecorder
from hy_memory_langgraph.redact.gate import gate
from hy_memory_langgraph.scenes import PRODUCTIVITY_SCENES
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.journal import forget_entries
from hy_memory_langgraph.store.db.engine import schema_name

logger = logging.getLogger(__name__)

#: Attempts of a run whose model calls fail; the last one takes the fallbacks.
RETRY_ATTEMPTS: Final = 6
#: Wait before the first retry, doubled at each next one (5, 10, 20, 40, 80 s: 155 s).
RETRY_BASE_S: Final = 5.0
#: How often an idle worker looks for writes other processes queued.
IDLE_POLL_S: Final = 0.5
#: How long erasure waits for a worker to stop running the user's writes.
ERASE_WAIT_S: Final = 120.0


def backoff(attempt: int) -> float:
    """Seconds before the attempt after failed attempt ``attempt`` (1, 2, …).

    Example:
        >>> [backoff(a) for a in (1, 2, 5)]
        [5.0, 10.0, 80.0]
    """
    return min(RETRY_BASE_S * 2 ** (attempt - 1), 300.0)


class _Stopped(Exception):
    """The run was cancelled (erasure) or the worker is stopping."""


class Background:
    """The background queue of one client (or of ``hy-memory worker``).

    Args:
        config: Where the queue lives (``background.db`` of the data dir, or the
            ``background`` schema of ``MEMORY_DB_URL``) and the coalescing delay.
        context: The client's run-time context (the worker runs with it).
        graph: The client's compiled write graph (the worker runs a copy with a
            checkpointer: the same nodes and edges).
        recorder: The client's pipeline log.
        locks: The client's user locks: a run holds its user's lock shared, as a
            synchronous write does (an erasure of the user waits for it).
    """

    def __init__(self, config: MemoryConfig, context: MemoryContext,
                 graph: CompiledStateGraph[Any, Any, Any, Any], recorder: PipelineRecorder,
                 locks: UserLocks) -> None:
        self.config = config
        self.context = context
        self.graph = graph
        self.recorder = recorder
        self.locks = locks
        self.target, self.schema = config.store_target(config.background_db_path.stem)
        self._seal = gate(config.redact_secrets)
        self._queue: JobQueue | None = None
        self._checkpoints: Checkpoints | None = None
        self._lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._progress = threading.Condition()
        self._flushing = 0
        self._lease: Lease | None = None

    # ------------------------------------------------------------------ resources
    @property
    def queue(self) -> JobQueue:
        """The queue (opened, and created when missing, on first use)."""
        with self._lock:
            if self._queue is None:
                self._queue = JobQueue(self.target, schema=self.schema, sealed=self._seal,
                                       timeout_s=float(self.config.db_timeout_s))
            return self._queue

    def _exists(self) -> bool:
        """Whether there may be a queue to read (SQLite: its file exists)."""
        return self._queue is not None or self.schema is not None or Path(self.target).exists()

    @property
    def checkpoints(self) -> Checkpoints:
        with self._lock:
            if self._checkpoints is None:
                self.queue  # noqa: B018 - the queue's setup creates the schema first
                self._checkpoints = Checkpoints(self.target, schema=self.schema, sealed=self._seal,
                                                timeout_s=float(self.config.db_timeout_s))
            return self._checkpoints

    # ------------------------------------------------------------------ producers
    def enqueue(self, write: PreparedWrite) -> None:
        """Queue a prepared write (one transaction) and wake the client's worker."""
        self.queue.enqueue(encode_write(write), request_id=write["request_id"], user_id=write["user_id"],
                           session_key=session_key(write["user_id"], write.get("session_id")),
                           merge_key=merge_key(write), at_ts=write["at"].timestamp(),
                           delay=self.config.background_delay_s)
        self.start()
        self._wake.set()

    # ------------------------------------------------------------------ what callers see
    def pending_turns(self, user_ids: Sequence[str]) -> list[PendingTurn]:
        """The turns of the queued writes of ``user_ids`` (for read-your-writes)."""
        return pending_turns(self.queue, user_ids) if self._exists() else []

    def pending(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """Queued, running and failed requests (of ``user_id``), in queue order."""
        if not self._exists():
            return []
        users = None if user_id is None else [user_id]
        return [job.public() for job in self.queue.jobs(user_ids=users, states=("queued", "running", "failed"))]

    def counts(self) -> dict[str, int]:
        if not self._exists():
            return {"queued": 0, "running": 0, "failed": 0, "cancelled": 0}
        return self.queue.counts()

    def flush(self, timeout: float | None = None, *, retry_failed: bool = False) -> dict[str, Any]:
        """Process every queued write now (delays and backoffs ignored) and wait until
        none is queued or running, or ``timeout`` seconds passed.

        Returns ``outstanding`` (requests still queued or running: 0 unless the timeout
        passed) and ``failed`` (requests that failed, with their reasons in :meth:`pending`).
        """
        if not self._exists():
            return {"outstanding": 0, "failed": 0}
        if retry_failed:
            self.queue.requeue_failed()
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._progress:
            self._flushing += 1
        try:
            self.start()
            self._wake.set()
            while True:
                outstanding = self.queue.outstanding()
                if outstanding == 0 or (deadline is not None and time.monotonic() >= deadline):
                    break
                with self._progress:  # woken after each run of this worker; polls others'
                    self._progress.wait(0.05 if deadline is None else
                                        max(0.0, min(0.05, deadline - time.monotonic())))
        finally:
            with self._progress:
                self._flushing -= 1
        return {"outstanding": outstanding, "failed": self.queue.counts()["failed"]}

    # ------------------------------------------------------------------ erasure
    def erase_user(self, user_id: str, stores: Sequence[Any]) -> None:
        """Remove ``user_id``'s queued, running and failed requests, their checkpoints
        and their journal entries in ``stores``; a run of theirs in progress is stopped
        first (waited for, at most :data:`ERASE_WAIT_S`), so nothing it writes survives
        the erasure that follows.

        Raises:
            HyMemoryError: a live worker kept running the user's write.
        """
        if self._exists():  # before the erasure's exclusive lock: the run holds it shared
            running = self.queue.cancel_user(user_id)
            self._wake.set()
            self._wait_stopped([run for run, _ in running])
            runs = self.queue.delete_user(user_id)
            if runs:
                self.checkpoints.delete_runs(thread_id_of(r) for r in runs)
                self.checkpoints.flush_erasure()
            self.queue.flush_erasure()
        forget_entries(stores, user_id)

    def _wait_stopped(self, run_ids: list[int]) -> None:
        deadline = time.monotonic() + ERASE_WAIT_S
        while run_ids:
            workers = self.queue.workers_of(run_ids)
            run_ids = [r for r, key in workers.items() if key is not None and self._alive(int(key))]
            if not run_ids:
                return
            if time.monotonic() >= deadline:
                raise HyMemoryError(f"a worker kept running a write of this user for {ERASE_WAIT_S:.0f} s; "
                                    "nothing was erased: call delete_all again")
            time.sleep(0.02)

    def _alive(self, key: int) -> bool:
        """Whether the worker with lease ``key`` (of any process) still holds its lease."""
        if self._lease is not None and self._lease.key == key:
            return True
        if self.schema is None:
            return holder_of(self._lock_path) == key
        with self.queue.engine.connect() as conn:
            return bool(conn.execute(sa.select(worker_held(queue_lock_key(schema_name(self.schema)), key))).scalar())

    @property
    def _lock_path(self) -> Path:
        return Path(self.target).with_suffix(".lock")

    # ------------------------------------------------------------------ the worker
    def start(self) -> None:
        """Start the client's worker thread (once)."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._stop.clear()
                self._thread = threading.Thread(target=self.serve, name="hy-memory-worker", daemon=True)
                self._thread.start()

    def serve(self, stop: threading.Event | None = None, *, drain: bool = False) -> None:
        """The worker loop: take runs and run them until ``stop`` (default: the client's
        close) is set, or, with ``drain``, until nothing is queued or running."""
        stop = stop or self._stop
        lease: Lease | None = None
        try:
            while not stop.is_set():
                try:
                    lease = lease or self._take_lease()
                    if lease is None:  # another process works this data dir: wait for it
                        if drain and self.queue.outstanding() == 0:
                            return
                        self._wake.wait(IDLE_POLL_S)
                        self._wake.clear()
                        continue
                    run = self.queue.claim(lease, ignore_delay=drain or self._flushing > 0)
                    if run is not None:
                        self._process(run, lease, stop)
                        with self._progress:
                            self._progress.notify_all()
                        continue
                    self._sweep()
                    if drain and self.queue.outstanding() == 0:
                        return
                    self._wake.wait(self._idle_wait())
                    self._wake.clear()
                except Exception:  # a worker never dies of one failure: it logs and goes on
                    logger.exception("background worker: a run could not be taken or ended; retrying")
                    stop.wait(1.0)
        finally:
            if lease is not None:
                lease.release()
            self._lease = None

    def _take_lease(self) -> Lease | None:
        """This worker's lease (SQLite: ``None`` while another process holds the lock)."""
        if self.schema is not None:
            lease: Lease = advisory_lease(str(self.target), self.schema, float(self.config.db_timeout_s))
        else:
            self.queue  # noqa: B018 - the file and table exist before the lock is taken
            file_lease = FileLease(self._lock_path)
            if not file_lease.acquire(wait=False):
                return None
            lease = file_lease
        self._lease = lease
        self._sweep()
        return lease

    def _sweep(self) -> None:
        """Finish the cleanup of ended runs whose worker died (or failed) before it."""
        for run_id, user_id in self.queue.done_runs():
            self._forget(run_id, user_id)

    def _idle_wait(self) -> float:
        ready = self.queue.next_ready()
        if ready is None:
            return IDLE_POLL_S
        return max(0.01, min(IDLE_POLL_S, ready - time.time()))

    def _process(self, run: Run, lease: Lease, stop: threading.Event) -> None:
        """Run the write graph on ``run`` and end it in the queue."""
        try:
            writes = [decode_write(job.payload or {}) for job in run.jobs]
        except StoreCorruptionError as exc:
            self.queue.fail(run, lease, str(exc))
            return
        write = {**merge_writes(writes), "run_id": run.thread_id, "started": time.perf_counter()}
        self._record_queue(run)
        final = run.attempt >= RETRY_ATTEMPTS
        llm = self.context.llm.for_background(raise_errors=not final) if self.context.llm else None
        context = dataclasses.replace(self.context, llm=llm)
        config: RunnableConfig = {"configurable": {"thread_id": run.thread_id}}
        try:
            graph = self.graph.copy(update={"checkpointer": self.checkpoints.saver})
            resume = self.checkpoints.saver.get_tuple(config) is not None
            with embedding_owners([run.user_id]), self.locks.writing([run.user_id]):
                for _ in graph.stream(None if resume else write, config, context=context, durability="sync",
                                      stream_mode="updates", subgraphs=True):
                    if stop.is_set() or not self.queue.holds(run, lease):
                        raise _Stopped
        except _Stopped:
            self._flush_log(run)  # before the release: an erasure waiting for it then drops them
            self.queue.release(run, lease)
            return
        except Exception as exc:  # noqa: BLE001 - every failure is kept with the run, retried or shown
            self._flush_log(run)
            error = f"{type(exc).__name__}: {exc}"
            if final:
                self.queue.fail(run, lease, f"the write could not be stored after {run.attempt} attempts: {error}")
            else:
                self.queue.retry(run, lease, error, time.time() + backoff(run.attempt))
            return
        self._flush_log(run)
        fell_back = final and llm is not None and llm.failures > 0
        self.queue.finish(run, lease, error=(
            f"the model failed in {run.attempt} attempts; the fallback stored the write" if fell_back else None))
        self._forget(run.run_id, run.user_id)

    def _forget(self, run_id: int, user_id: str) -> None:
        """Delete what only a run in progress needs: journal entries, checkpoints, rows."""
        stores = [self.context.stores.chat(), self.context.stores.trace(),
                  *(self.context.stores.productivity(s) for s in PRODUCTIVITY_SCENES)]
        forget_entries(stores, user_id, thread_id_of(run_id))
        self.checkpoints.delete_runs([thread_id_of(run_id)])
        self.queue.forget_done([run_id])

    def _flush_log(self, run: Run) -> None:
        for job in run.jobs:
            self.recorder.flush(job.request_id, [run.user_id])

    def _record_queue(self, run: Run) -> None:
        """A ``queue`` stage in each request's pipeline log: its wait, its run, the
        requests taken together."""
        head = run.jobs[0].request_id
        for job in run.jobs:
            self.recorder.stage(job.request_id, graph="memory_background", node="queue",
                                duration_ms=max(0.0, run.claimed_at - job.created_at) * 1000,
                                trace=StageMeter(), update={
                                    "run": head, "coalesced": len(run.jobs), "attempt": run.attempt})

    def close(self) -> None:
        """Stop the worker (after the step it is in: a run in progress is resumed by the
        next worker) and release the queue."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None:
            thread.join()
        with self._lock:
            if self._checkpoints is not None:
                self._checkpoints.close()
                self._checkpoints = None
            if self._queue is not None:
                self._queue.close()
                self._queue = None
