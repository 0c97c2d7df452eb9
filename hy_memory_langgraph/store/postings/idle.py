"""Index a store's pending lexical documents once its writes pause.

A write that leaves documents pending (:mod:`.write`) names their namespaces here. When
no write has named any for :data:`QUIET_S`, a daemon thread gives them their postings,
one namespace at a time, through the callback the store passes (its own lock and write
transaction). An agent that writes a turn and searches at its next turn, a model call
later, then finds nothing left to index; writes that follow each other without a pause
(bulk ingest) are never interrupted: their documents wait for the pending limit, the
next read or the pause. The thread holds its indexer only weakly and ends within
:data:`IDLE_CHECK_S` of a store dropped without ``close()``.

Example:
    >>> done = []
    >>> indexer = PendingIndexer(done.append, quiet_s=0.001)
    >>> indexer.noted({"chat.u1"})
    >>> indexer.wait_idle(timeout=60)
    True
    >>> indexer.close()
    >>> done
    ['chat.u1']
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Collection

from hy_memory_langgraph.store.db.daemon import Daemon

logger = logging.getLogger(__name__)

#: Seconds without a write that leaves documents pending before the thread indexes them.
QUIET_S = 0.05
#: Seconds an idle thread waits before checking that its store is still in use.
IDLE_CHECK_S = 5.0


class PendingIndexer:
    """Calls ``index(namespace)`` for each namespace noted, once writes pause.

    Args:
        index: Gives one encoded namespace's pending documents their postings (the
            store's own method; errors are logged, and the next read indexes them).
        quiet_s: Seconds without a note before indexing (default :data:`QUIET_S`).
    """

    def __init__(self, index: Callable[[str], object], *, quiet_s: float | None = None) -> None:
        self._index = index
        self._quiet_s = QUIET_S if quiet_s is None else quiet_s
        self._wake = threading.Event()
        self._daemon = Daemon("hy-store-pending-indexer", _run, weakref.WeakMethod(self._index_waiting),
                             self._wake, self._quiet_s)
        self._idle = threading.Condition()
        self._waiting: set[str] = set()
        self._busy = False

    def noted(self, namespaces: Collection[str]) -> None:
        """Namespaces a committed write left with pending documents."""
        if not namespaces or self._daemon.closed.is_set():
            return
        with self._idle:
            self._waiting.update(namespaces)
        if self._daemon.thread is None:
            self._daemon.start()
        self._wake.set()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every namespace noted has been indexed (``True``) or ``timeout``
        seconds passed (``False``). For tests and operators."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._waiting and not self._busy, timeout)

    def close(self) -> None:
        """Stop the thread (idempotent). What is still pending stays in the database and is
        indexed by the next read or write of its namespace."""
        self._daemon.stop(self._wake)
        with self._idle:
            self._waiting.clear()
            self._idle.notify_all()

    @property
    def started(self) -> bool:
        """Whether the thread was started (a store that never leaves documents pending
        starts none)."""
        return self._daemon.thread is not None

    def _index_waiting(self) -> None:
        with self._idle:
            namespaces, self._waiting, self._busy = sorted(self._waiting), set(), True
        try:
            for namespace in namespaces:
                if self._daemon.closed.is_set():
                    return
                try:
                    self._index(namespace)
                except Exception:  # the next read of the namespace indexes it
                    logger.exception("indexing the pending lexical documents of %s failed", namespace)
        finally:
            with self._idle:
                self._busy = False
                self._idle.notify_all()


def _run(index_waiting: weakref.WeakMethod[Callable[[], None]], wake: threading.Event, quiet_s: float,
         closed: threading.Event) -> None:
    """The thread: index what was noted once ``quiet_s`` passes without a note."""
    while True:
        if not wake.wait(IDLE_CHECK_S):
            if index_waiting() is None:
                return
            continue
        while True:  # until a whole quiet_s passes without a new note
            wake.clear()
            if closed.wait(quiet_s):
                return
            if not wake.is_set():
                break
        run = index_waiting()
        if run is None:
            return
        run()
        del run
