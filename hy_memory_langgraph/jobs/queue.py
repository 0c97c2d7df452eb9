"""The queue of background writes: one table, ``memory_jobs``, in the memory's database.

SQLite: ``{data_dir}/data/background.db`` (with the checkpoints of the runs, see
:mod:`.checkpoints`); PostgreSQL: the ``background`` schema of ``MEMORY_DB_URL``. A row
is one request (``add(..., background=True)``): the prepared write as JSON, sealed by the
privacy gate at the insert, and what places and orders it. States:

* ``queued``: waiting; eligible once ``ready_at`` passed (its arrival plus the coalescing
  delay, or a retry's backoff);
* ``running``: taken by the worker whose lease key is ``worker_key``;
* ``failed``: gave up (the fallback stored the raw turns, or even that failed and the
  write is kept in ``payload``), with ``error``;
* ``cancelled``: its user's memory is being erased (``delete_all``);
* ``done``: its run ended; the row goes once the run's checkpoints are deleted.

A finished run deletes its rows. A *run* is the unit a worker takes: the first queued
request of a session (the *head*: the smallest id of the session among the queued and
running rows), with the requests of the same session queued after it that may be merged
(same :func:`~.codec.merge_key`, times within :data:`~.codec.MERGE_SPAN_S`, at most
:data:`MAX_MERGED`); its rows share ``run_id`` (the head's id, also the thread id of the
run's checkpoints) until it ends, so a resumed run takes exactly the rows it took before.
Only a session's head can be taken, so a session's requests run in arrival order, one
run at a time, whichever worker takes them; different sessions run side by side. On
PostgreSQL the claim reads with ``FOR UPDATE SKIP LOCKED``; a run whose worker lost its
lease (:mod:`.lease`) is taken again.

Example:
    >>> import tempfile, os
    >>> queue = JobQueue(os.path.join(tempfile.mkdtemp(), "background.db"))
    >>> queue.counts()
    {'queued': 0, 'running': 0, 'failed': 0, 'cancelled': 0}
    >>> queue.close()
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from hy_memory_langgraph.jobs.codec import MERGE_SPAN_S
from hy_memory_langgraph.jobs.lease import Lease
from hy_memory_langgraph.redact.gate import Seal, seal
from hy_memory_langgraph.store.db.engine import checkpoint, read_tx, release_engine, write_tx
from hy_memory_langgraph.store.db.migrations import Migration, open_database
from hy_memory_langgraph.store.db.timeouts import DEFAULT_TIMEOUT_S

#: Requests one run takes at most.
MAX_MERGED: Final = 32
#: States of rows that still wait for (or are in) a run.
ACTIVE: Final = ("queued", "running")
_STATES: Final = ("queued", "running", "failed", "cancelled")

_META = sa.MetaData()
_JOBS: Final = sa.Table(
    "memory_jobs", _META,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
    sa.Column("request_id", sa.String(128), nullable=False, unique=True),
    sa.Column("user_id", sa.String(512), nullable=False),
    sa.Column("session_key", sa.String(1100), nullable=False),
    sa.Column("merge_key", sa.String(64), nullable=False),
    sa.Column("at_ts", sa.Float, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("run_id", sa.BigInteger, nullable=True),
    sa.Column("worker_key", sa.BigInteger, nullable=True),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("ready_at", sa.Float, nullable=False),
    sa.Column("started_at", sa.Float, nullable=True),
    sa.Column("finished_at", sa.Float, nullable=True),
    sa.Column("payload", sa.Text, nullable=True),
)
sa.Index("ix_memory_jobs_session", _JOBS.c.session_key, _JOBS.c.id)
sa.Index("ix_memory_jobs_state", _JOBS.c.state, _JOBS.c.ready_at)
sa.Index("ix_memory_jobs_user", _JOBS.c.user_id)
sa.Index("ix_memory_jobs_run", _JOBS.c.run_id)


MIGRATIONS: Final = (Migration(1, "memory_jobs table", lambda ctx: ctx.create_all(_META)),)


@dataclass(frozen=True)
class _Job:
    """One queued request, as read from its row.

    Attributes:
        id: Its position in the queue (arrival order).
        request_id: The id ``add`` returned.
        payload: The prepared write's JSON (``None`` once dropped).
        at_ts: The write's time (``memory_at``), seconds since the epoch.
    """

    id: int
    request_id: str
    user_id: str
    session_key: str
    state: str
    attempts: int
    error: str | None
    created_at: float
    ready_at: float
    started_at: float | None
    at_ts: float
    run_id: int | None
    payload: dict[str, Any] | None

    @classmethod
    def of(cls, data: Any) -> _Job:
        """The job of a row read as a mapping (``Result.mappings()``)."""
        payload = json.loads(data["payload"]) if data.get("payload") else None
        return cls(id=int(data["id"]), request_id=data["request_id"], user_id=data["user_id"],
                   session_key=data["session_key"], state=data["state"], attempts=int(data["attempts"]),
                   error=data["error"], created_at=data["created_at"], ready_at=data["ready_at"],
                   started_at=data["started_at"], at_ts=data["at_ts"], run_id=data["run_id"],
                   payload=payload)

    def public(self) -> dict[str, Any]:
        """What :meth:`HyMemoryClient.pending` shows of it (no text)."""
        user, session = json.loads(self.session_key)
        return {"request_id": self.request_id, "user_id": user, "session_id": session,
                "state": self.state, "attempts": self.attempts, "error": self.error,
                "queued_at": self.created_at, "ready_at": self.ready_at,
                "started_at": self.started_at}


@dataclass(frozen=True)
class Run:
    """The requests one worker took together.

    Attributes:
        run_id: The head's id: the thread id of the run's checkpoints.
        jobs: Its requests, in arrival order (the head first).
        attempt: 1 for a first try, 2… after failed attempts (a run resumed after its
            worker died is not a new attempt).
        claimed_at: When the worker took it.
    """

    run_id: int
    jobs: tuple[_Job, ...]
    attempt: int
    claimed_at: float

    @property
    def thread_id(self) -> str:
        return f"job-{self.run_id}"

    @property
    def user_id(self) -> str:
        return self.jobs[0].user_id


def thread_id_of(run_id: int) -> str:
    """The checkpoint thread of run ``run_id``."""
    return f"job-{run_id}"


class JobQueue:
    """The ``memory_jobs`` table of one data dir or database.

    Args:
        path: A SQLite file path, or a SQLAlchemy URL (contains ``"://"``).
        schema: On PostgreSQL, the schema of the table.
        sealed: The privacy gate each payload passes at the insert.
        timeout_s: The longest wait on the database (``MEMORY_DB_TIMEOUT_S``).
    """

    def __init__(self, path: str | os.PathLike[str], *, schema: str | None = None,
                 sealed: Seal = seal, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.seal = sealed
        self.engine, _ = open_database(path, "background_jobs", MIGRATIONS, schema=schema, timeout_s=timeout_s)
        self.postgres = self.engine.dialect.name == "postgresql"

    def close(self) -> None:
        release_engine(self.engine)

    # ------------------------------------------------------------------ producers
    def enqueue(self, payload: dict[str, Any], *, request_id: str, user_id: str, session_key: str,
                merge_key: str, at_ts: float, delay: float, now: float | None = None) -> None:
        """Insert one request (one statement, one transaction); its payload passes the gate."""
        now = time.time() if now is None else now
        row = {"request_id": request_id, "user_id": user_id, "session_key": session_key,
               "merge_key": merge_key, "at_ts": at_ts, "state": "queued", "attempts": 0,
               "created_at": now, "ready_at": now + delay,
               "payload": json.dumps(self.seal(payload), ensure_ascii=False)}
        with write_tx(self.engine) as conn:
            conn.execute(_JOBS.insert().values(**row))

    # ------------------------------------------------------------------ workers
    def claim(self, lease: Lease, *, now: float | None = None, ignore_delay: bool = False) -> Run | None:
        """Take the next run for the worker holding ``lease``, or ``None``.

        The oldest eligible session head: a queued one whose ``ready_at`` passed (any,
        with ``ignore_delay``), or a running one whose worker lost its lease (resumed).
        """
        now = time.time() if now is None else now
        j, q = _JOBS.alias("j"), _JOBS.alias("q")
        head_of_session = sa.select(sa.func.min(q.c.id)).where(
            q.c.session_key == j.c.session_key, q.c.state.in_(ACTIVE)).scalar_subquery()
        ready = sa.true() if ignore_delay else j.c.ready_at <= now
        query = (sa.select(j).where(j.c.id == head_of_session, sa.or_(
            sa.and_(j.c.state == "queued", ready),
            sa.and_(j.c.state == "running", lease.orphaned(j.c.worker_key))))
            .order_by(j.c.id).limit(1))
        if self.postgres:
            query = query.with_for_update(skip_locked=True, of=j)
        with write_tx(self.engine) as conn:
            found = conn.execute(query).mappings().first()
            if found is None:
                return None
            head = _Job.of(found)
            members = self._members(conn, head)
            ids = [m.id for m in members]
            conn.execute(_JOBS.update().where(_JOBS.c.id.in_(ids)).values(
                state="running", run_id=head.id, worker_key=lease.key,
                started_at=sa.func.coalesce(_JOBS.c.started_at, now)))
        return Run(run_id=head.id, jobs=tuple(members), attempt=head.attempts + 1, claimed_at=now)

    def _members(self, conn: Connection, head: _Job) -> list[_Job]:
        """The rows a run of ``head`` takes: those it took before, or ``head`` and the
        requests that may be merged with it."""
        if head.run_id is not None:
            rows = conn.execute(sa.select(_JOBS).where(_JOBS.c.run_id == head.run_id,
                                                      _JOBS.c.state.in_(ACTIVE)).order_by(_JOBS.c.id))
            return [_Job.of(r) for r in rows.mappings()]
        later = sa.select(_JOBS).where(_JOBS.c.session_key == head.session_key, _JOBS.c.state == "queued",
                                      _JOBS.c.id > head.id).order_by(_JOBS.c.id).limit(MAX_MERGED - 1)
        if self.postgres:
            later = later.with_for_update()
        merge_key = conn.execute(sa.select(_JOBS.c.merge_key).where(_JOBS.c.id == head.id)).scalar()
        members = [head]
        for row in conn.execute(later).mappings():
            job = _Job.of(row)
            if row["merge_key"] != merge_key or job.run_id is not None \
                    or abs(job.at_ts - head.at_ts) > MERGE_SPAN_S:
                break  # contiguous only: a request never overtakes an earlier one
            members.append(job)
        return members

    def holds(self, run: Run, lease: Lease) -> bool:
        """Whether every row of ``run`` is still running under ``lease`` (not cancelled)."""
        with read_tx(self.engine, single=True) as conn:
            n = conn.execute(sa.select(sa.func.count()).select_from(_JOBS).where(
                _JOBS.c.run_id == run.run_id, _JOBS.c.state == "running",
                _JOBS.c.worker_key == lease.key)).scalar()
        return int(n or 0) == len(run.jobs)

    def finish(self, run: Run, lease: Lease, *, error: str | None = None) -> None:
        """The run ended and its write is stored: ``done`` (the worker then deletes its
        checkpoints and :meth:`forget_done` its rows), or ``failed`` with ``error`` when it
        ended in a fallback. The payload goes either way."""
        values: dict[str, Any] = {"state": "failed" if error else "done", "worker_key": None,
                                  "finished_at": time.time(), "payload": None}
        if error:
            values["error"] = self.seal(error)
        with write_tx(self.engine) as conn:
            conn.execute(_JOBS.update().where(self._owned(run, lease)).values(**values))

    def forget_done(self, run_ids: Sequence[int]) -> None:
        """Delete the ``done`` rows of ``run_ids`` (their checkpoints are gone)."""
        if run_ids:
            with write_tx(self.engine) as conn:
                conn.execute(_JOBS.delete().where(_JOBS.c.run_id.in_(list(run_ids)), _JOBS.c.state == "done"))

    def done_runs(self) -> list[tuple[int, str]]:
        """``(run id, user id)`` of the runs that ended but still have rows (their worker
        has not removed them yet, or died first)."""
        with read_tx(self.engine, single=True) as conn:
            rows = conn.execute(sa.select(_JOBS.c.run_id, _JOBS.c.user_id).distinct().where(
                _JOBS.c.state == "done")).all()
        return [(int(r[0]), str(r[1])) for r in rows if r[0] is not None]

    def retry(self, run: Run, lease: Lease, error: str, ready_at: float) -> None:
        """Back to the queue after a failed attempt, eligible again at ``ready_at``."""
        with write_tx(self.engine) as conn:
            conn.execute(_JOBS.update().where(self._owned(run, lease)).values(
                state="queued", worker_key=None, ready_at=ready_at, error=self.seal(error),
                attempts=_JOBS.c.attempts + 1))

    def fail(self, run: Run, lease: Lease, error: str) -> None:
        """Give up a run whose write could not be stored: ``failed`` with ``error``, the
        payload kept (nothing is lost; :meth:`requeue_failed` tries it again)."""
        with write_tx(self.engine) as conn:
            conn.execute(_JOBS.update().where(self._owned(run, lease)).values(
                state="failed", worker_key=None, error=self.seal(error), finished_at=time.time()))

    def requeue_failed(self, user_id: str | None = None) -> int:
        """Queue again the failed requests that kept their write (of ``user_id`` only,
        when given); the number requeued."""
        where = [_JOBS.c.state == "failed", _JOBS.c.payload.is_not(None)]
        if user_id is not None:
            where.append(_JOBS.c.user_id == user_id)
        with write_tx(self.engine) as conn:
            result = conn.execute(_JOBS.update().where(*where).values(
                state="queued", attempts=0, ready_at=time.time(), finished_at=None))
        return int(result.rowcount or 0)

    def release(self, run: Run, lease: Lease) -> None:
        """The worker stopped working ``run`` (cancelled, or shutting down mid-run: a
        running row goes back to ``queued``, keeping its run, to be resumed)."""
        with write_tx(self.engine) as conn:
            conn.execute(_JOBS.update().where(_JOBS.c.run_id == run.run_id, _JOBS.c.worker_key == lease.key,
                                             _JOBS.c.state == "running").values(state="queued", worker_key=None))
            conn.execute(_JOBS.update().where(_JOBS.c.run_id == run.run_id, _JOBS.c.worker_key == lease.key)
                         .values(worker_key=None))

    @staticmethod
    def _owned(run: Run, lease: Lease) -> sa.ColumnElement[bool]:
        return sa.and_(_JOBS.c.run_id == run.run_id, _JOBS.c.worker_key == lease.key, _JOBS.c.state == "running")

    # ------------------------------------------------------------------ readers
    def jobs(self, *, user_ids: Sequence[str] | None = None, states: Iterable[str] = _STATES,
             with_payload: bool = False) -> list[_Job]:
        """Rows in queue order (of ``user_ids`` only, when given)."""
        columns = [c for c in _JOBS.c if with_payload or c.name != "payload"]
        query = sa.select(*columns).where(_JOBS.c.state.in_(list(states))).order_by(_JOBS.c.id)
        if user_ids is not None:
            query = query.where(_JOBS.c.user_id.in_(list(user_ids)))
        with read_tx(self.engine, single=True) as conn:
            return [_Job.of(r) for r in conn.execute(query).mappings()]

    def counts(self) -> dict[str, int]:
        """Rows per state."""
        with read_tx(self.engine, single=True) as conn:
            found = dict(conn.execute(sa.select(_JOBS.c.state, sa.func.count()).group_by(_JOBS.c.state)).all())
        return {state: int(found.get(state, 0)) for state in _STATES}

    def outstanding(self) -> int:
        """Requests still to be processed (queued or running) or cleaned up (done)."""
        with read_tx(self.engine, single=True) as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(_JOBS).where(
                _JOBS.c.state.in_((*ACTIVE, "done")))).scalar() or 0)

    def next_ready(self) -> float | None:
        """The earliest ``ready_at`` of a queued request (``None``: none queued)."""
        with read_tx(self.engine, single=True) as conn:
            return conn.execute(sa.select(sa.func.min(_JOBS.c.ready_at)).where(_JOBS.c.state == "queued")).scalar()

    # ------------------------------------------------------------------ erasure
    def cancel_user(self, user_id: str) -> list[tuple[int, int | None]]:
        """Mark every row of ``user_id`` cancelled (no worker takes it again); the
        ``(run_id, worker_key)`` of the runs that were running."""
        with write_tx(self.engine) as conn:
            running = conn.execute(sa.select(_JOBS.c.run_id, _JOBS.c.worker_key).distinct().where(
                _JOBS.c.user_id == user_id, _JOBS.c.state == "running")).all()
            conn.execute(_JOBS.update().where(_JOBS.c.user_id == user_id).values(state="cancelled"))
        return [(int(r[0]), r[1]) for r in running if r[0] is not None]

    def workers_of(self, run_ids: Sequence[int]) -> dict[int, int | None]:
        """The worker still on each of ``run_ids`` (``None`` once it let go)."""
        if not run_ids:
            return {}
        with read_tx(self.engine, single=True) as conn:
            rows = conn.execute(sa.select(_JOBS.c.run_id, sa.func.max(_JOBS.c.worker_key)).where(
                _JOBS.c.run_id.in_(list(run_ids))).group_by(_JOBS.c.run_id)).all()
        return {int(r[0]): r[1] for r in rows}

    def delete_user(self, user_id: str) -> list[int]:
        """Delete every row of ``user_id``; the run ids whose checkpoints must go too."""
        with write_tx(self.engine) as conn:
            runs = conn.execute(sa.select(sa.func.coalesce(_JOBS.c.run_id, _JOBS.c.id)).distinct().where(
                _JOBS.c.user_id == user_id)).scalars().all()
            conn.execute(_JOBS.delete().where(_JOBS.c.user_id == user_id))
        return [int(r) for r in runs]

    def flush_erasure(self) -> None:
        """Fold the write-ahead log into the database after deletes (erasure)."""
        checkpoint(self.engine)
