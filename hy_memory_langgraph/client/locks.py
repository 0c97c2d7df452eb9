"""Erasure wins races: a user's writes and the erasure of that user take one lock.

Every write of a user (``add``) holds the user's lock *shared* for as long as it runs;
``delete_all(user)`` holds it *exclusive*. So an erasure waits for the user's writes in
flight to finish, and a write that starts meanwhile waits for the erasure: no write can
read the user's memory before an erasure and write what it read back after it (a lite
write keeps the session's last turns as context, a pro write sends them to the model).
After ``delete_all`` returns, nothing acknowledged before it started remains.

The lock spans processes: with a data dir, ``flock`` on a file under ``{data_dir}/locks``
named by a digest of the user id (the file holds nothing); with ``MEMORY_DB_URL``,
PostgreSQL session advisory locks, so writers on several machines wait too. A wait longer
than ``MEMORY_DB_TIMEOUT_S`` raises :class:`~hy_memory_langgraph.errors.StoreBusyError`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa

from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import StoreBusyError
from hy_memory_langgraph.store.db.engine import create_store_engine, release_engine
from hy_memory_langgraph.store.db.locks import advisory_key

_FIRST_WAIT_S: Final = 0.001
_LONGEST_WAIT_S: Final = 0.05


class UserLocks:
    """The per-user write/erase locks of one data dir or database.

    Args:
        config: Where the memory lives (``data_dir``, or ``db_url`` with its schema
            prefix) and ``db_timeout_s``, the longest wait.

    Example:
        >>> import tempfile
        >>> locks = UserLocks(MemoryConfig.from_env({}, data_dir=tempfile.mkdtemp()))
        >>> with locks.writing(["alice", "bob"]):
        ...     pass
        >>> with locks.erasing("alice"):
        ...     pass
        >>> locks.close()
    """

    def __init__(self, config: MemoryConfig) -> None:
        self._timeout = float(config.db_timeout_s)
        self._url = config.db_url
        self._space = f"hy_memory_user:{config.db_schema_prefix}:"
        self._dir = Path(config.data_dir) / "locks"
        self._engine: sa.Engine | None = None
        self._guard = threading.Lock()

    @contextlib.contextmanager
    def writing(self, user_ids: Iterable[str]) -> Iterator[None]:
        """Hold the locks of ``user_ids`` shared (a write of their memory)."""
        with contextlib.ExitStack() as held:
            for user in sorted(set(user_ids)):  # one order: two writers never deadlock
                held.enter_context(self._hold(user, shared=True))
            yield

    @contextlib.contextmanager
    def erasing(self, user_id: str) -> Iterator[None]:
        """Hold the lock of ``user_id`` exclusive (the erasure of their memory)."""
        with self._hold(user_id, shared=False):
            yield

    def close(self) -> None:
        with self._guard:
            if self._engine is not None:
                release_engine(self._engine)
                self._engine = None

    # -- helpers --------------------------------------------------------------------
    def _hold(self, user: str, *, shared: bool) -> contextlib.AbstractContextManager[None]:
        return self._advisory(user, shared) if self._url else self._file(user, shared)

    @contextlib.contextmanager
    def _file(self, user: str, shared: bool) -> Iterator[None]:
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
            name = hashlib.blake2b(user.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
            handle = open(self._dir / f"{name}.lock", "a+b")  # noqa: SIM115
        except OSError:  # a read-only data dir: nothing can be written there anyway
            yield
            return
        with handle:  # closing it releases the lock
            mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
            self._wait(user, lambda: _try_flock(handle.fileno(), mode))
            yield

    @contextlib.contextmanager
    def _advisory(self, user: str, shared: bool) -> Iterator[None]:
        key = advisory_key(self._space + user)
        kind = "_shared" if shared else ""
        with self._pg().connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            self._wait(user, lambda: bool(conn.execute(
                sa.text(f"SELECT pg_try_advisory_lock{kind}(:k)"), {"k": key}).scalar()))
            try:
                yield
            finally:
                conn.execute(sa.text(f"SELECT pg_advisory_unlock{kind}(:k)"), {"k": key})

    def _pg(self) -> sa.Engine:
        with self._guard:
            if self._engine is None:
                assert self._url is not None
                self._engine, _ = create_store_engine(self._url, timeout_s=self._timeout)
            return self._engine

    def _wait(self, user: str, attempt: Any) -> None:
        deadline = time.monotonic() + self._timeout
        pause = _FIRST_WAIT_S
        while not attempt():
            if time.monotonic() >= deadline:
                raise StoreBusyError(
                    f"the memory of user {user!r} stayed locked by another write or erasure for "
                    f"{self._timeout:g} s (MEMORY_DB_TIMEOUT_S); retry, or raise the timeout")
            time.sleep(pause)
            pause = min(pause * 2, _LONGEST_WAIT_S)


def _try_flock(fd: int, mode: int) -> bool:
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True

