"""Checkpoint a SQLite store's write-ahead log off the writers' path.

SQLite copies its write-ahead log back into the database file (a *checkpoint*) from the
connection whose commit takes the log past 1,000 pages: one lite add in every few dozen
paid for copying those pages and two ``fsync`` calls (p95 of a lite add 7.9–9.3 ms).
A :class:`HyMemoryStore` on a SQLite file checkpoints from a :class:`WalCheckpointer`
thread instead: after a write, at most ``delay_s`` later (writes meanwhile share it), one
``PASSIVE`` checkpoint, which never waits for readers or writers. When writes pause, the
next writer finds the log fully copied and starts it over, so it stays small. Its own
connections keep a writer's checkpoint only past :data:`WRITER_CHECKPOINT_PAGES` (writes
that never pause; the thread has copied most of the log by then, so it costs little). The
thread starts with the first write and stops when the store closes, after a last
checkpoint; closing the last connection checkpoints what is left.

Example:
    >>> import os, tempfile
    >>> from hy_memory_langgraph.store.db.engine import create_store_engine, release_engine, write_tx
    >>> engine, _ = create_store_engine(os.path.join(tempfile.mkdtemp(), "s.db"),
    ...                                 wal_autocheckpoint=WRITER_CHECKPOINT_PAGES)
    >>> checkpointer = WalCheckpointer(engine, delay_s=0.01)
    >>> with write_tx(engine) as conn:
    ...     _ = conn.exec_driver_sql("CREATE TABLE t (x INTEGER)")
    >>> checkpointer.written()
    >>> checkpointer.close()
    >>> checkpointer.checkpoints >= 1
    True
    >>> release_engine(engine)
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable

from sqlalchemy.engine import Engine

from hy_memory_langgraph.store.db.daemon import Daemon

logger = logging.getLogger(__name__)

#: Seconds between a write and the checkpoint that follows it (writes meanwhile share it).
DELAY_S = 0.25
#: Seconds an idle thread waits before checking that its store is still in use.
IDLE_CHECK_S = 5.0
#: Log pages past which a writer checkpoints itself (32 MB at 4 KB pages; SQLite: 1,000).
#: Lite adds at full speed write ~75 pages each and outrun the thread's delay: at 2,000
#: pages one add in ~27 copied the log (and synced twice) itself; at 8,000 that happens a
#: quarter as often and a lite add of LoCoMo turns is ~4% faster (``python -m
#: bench.lite_add_cost default checkpoint-pages=2000``, docs/benchmarks.md).
WRITER_CHECKPOINT_PAGES = 8000


class WalCheckpointer:
    """A daemon thread that checkpoints ``engine``'s SQLite log after writes.

    Args:
        engine: A SQLite file engine (its connections should checkpoint late or never:
            ``create_store_engine(..., wal_autocheckpoint=WRITER_CHECKPOINT_PAGES)``).
        delay_s: Seconds from a write to its checkpoint (default :data:`DELAY_S`).
    """

    def __init__(self, engine: Engine, *, delay_s: float | None = None) -> None:
        self._engine = engine
        self._delay_s = DELAY_S if delay_s is None else delay_s
        self._pending = threading.Event()
        self._daemon = Daemon("hy-store-wal-checkpointer", _run, weakref.WeakMethod(self._checkpoint),
                             self._pending, self._delay_s)
        self._settled = threading.Condition()
        self._noted = 0  # writes noted so far
        self._covered = 0  # writes noted before the last successful checkpoint began
        self.checkpoints = 0

    @property
    def running(self) -> bool:
        return self._daemon.running

    def written(self) -> None:
        """Note a committed write: a checkpoint follows within ``delay_s``."""
        if self._daemon.thread is None:
            self._daemon.start()
        with self._settled:
            self._noted += 1
        self._pending.set()

    def wait_settled(self, timeout: float | None = None) -> bool:
        """Wait until a checkpoint that began after the last noted write has finished
        (``True``), or ``timeout`` seconds passed (``False``). For tests and operators
        who need the log copied before they look at it."""
        with self._settled:
            return self._settled.wait_for(lambda: self._covered >= self._noted, timeout)

    def close(self) -> None:
        """Stop the thread after a last checkpoint of what was written (idempotent)."""
        self._daemon.stop(self._pending)

    def _checkpoint(self) -> None:
        with self._settled:
            covering = self._noted
        try:
            with self._engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")
            self.checkpoints += 1
        except Exception:  # the next write tries again; SQLite keeps the log meanwhile
            logger.exception("checkpoint of %s failed", self._engine.url)
            return
        with self._settled:
            self._covered = max(self._covered, covering)
            self._settled.notify_all()


def _run(checkpoint: weakref.WeakMethod[Callable[[], None]], pending: threading.Event, delay_s: float,
         closed: threading.Event) -> None:
    """The thread: a checkpoint ``delay_s`` after each write, until closed. It holds its
    checkpointer (and so the engine) only weakly: a store dropped without ``close()`` lets
    the thread end within :data:`IDLE_CHECK_S`."""
    while True:
        if not pending.wait(IDLE_CHECK_S):
            if checkpoint() is None:
                return
            continue
        closed.wait(delay_s)  # let the writes of the next moment join in
        pending.clear()
        run = checkpoint()
        if run is None:
            return
        run()
        del run
        if closed.is_set():
            return
