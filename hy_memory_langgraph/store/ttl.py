"""TTL helpers: expiry arithmetic and the optional background sweeper thread.

Items carry ``ttl_minutes`` and ``expires_at`` (epoch microseconds). Expired
items are invisible to every read at once; :meth:`HyMemoryStore.sweep_ttl`
deletes them (rows, vectors, index entries) and :class:`TTLSweeper` calls it
periodically, like langgraph's Postgres store ``start_ttl_sweeper``.

Example:
    >>> expires_at(1_000_000, 1.0)
    61000000
    >>> sweeper = TTLSweeper(lambda: 0, interval_minutes=1)
    >>> sweeper.stop()
    True
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable

logger = logging.getLogger(__name__)

DEFAULT_SWEEP_MINUTES = 5.0
_US_PER_MINUTE = 60_000_000


def expires_at(now_us: int, ttl_minutes: float | None) -> int | None:
    """Expiry timestamp for a TTL in minutes (``None`` = never)."""
    if ttl_minutes is None:
        return None
    return now_us + int(ttl_minutes * _US_PER_MINUTE)


class TTLSweeper:
    """A daemon thread calling ``sweep`` every ``interval_minutes`` until stopped.

    Args:
        sweep: Deletes expired items, returns how many.
        interval_minutes: Time between sweeps (first sweep after one interval).
    """

    def __init__(self, sweep: Callable[[], int], *, interval_minutes: float) -> None:
        if interval_minutes <= 0:
            raise ValueError(f"sweep interval must be positive, got {interval_minutes!r}")
        self._sweep = sweep
        self._interval_s = interval_minutes * 60.0
        self._stop = threading.Event()
        self.future: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> concurrent.futures.Future[None]:
        """Start the thread (idempotent); the future resolves when it exits."""
        if self._thread is None:
            self.future.set_running_or_notify_cancel()
            self._thread = threading.Thread(target=self._run, name="hy-store-ttl-sweeper", daemon=True)
            self._thread.start()
        return self.future

    def _run(self) -> None:
        try:
            while not self._stop.wait(self._interval_s):
                try:
                    removed = self._sweep()
                    if removed:
                        logger.info("HyMemoryStore TTL sweep removed %d expired items", removed)
                except Exception:  # keep sweeping; a failed pass is retried next interval
                    logger.exception("HyMemoryStore TTL sweep failed")
        finally:
            self.future.set_result(None)

    def stop(self, timeout: float | None = None) -> bool:
        """Ask the thread to stop and wait; ``True`` once it has exited."""
        self._stop.set()
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()
