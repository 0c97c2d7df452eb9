"""A lock that is safe across threads and processes (advisory lock file).

Threads of one process are serialised by a per-path :class:`threading.Lock`;
processes by ``fcntl.flock`` (POSIX) or ``msvcrt.locking`` (Windows) on the lock file.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_registry_lock = threading.Lock()
_thread_locks: dict[str, threading.Lock] = {}


def _thread_lock(path: Path) -> threading.Lock:
    key = os.path.abspath(path)
    with _registry_lock:
        return _thread_locks.setdefault(key, threading.Lock())


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) for the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with _thread_lock(path), open(path, "a+b") as handle:
        _acquire(handle.fileno())
        try:
            yield
        finally:
            _release(handle.fileno())


try:  # POSIX
    import fcntl

    def _acquire(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # pragma: no cover - Windows
    import msvcrt

    def _acquire(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                return
            except OSError:
                continue

    def _release(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
