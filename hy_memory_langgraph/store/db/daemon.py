"""A store component's daemon thread: started on first use, stopped when it closes.

The thread gets the component only as a weak reference (the component's ``run``
function decides what to do when it is gone), and ``closed`` as its last argument.

Example:
    >>> import threading
    >>> seen = []
    >>> def run(wake: threading.Event, closed: threading.Event) -> None:
    ...     wake.wait()
    ...     seen.append(closed.is_set())
    >>> wake = threading.Event()
    >>> daemon = Daemon("example", run, wake)
    >>> daemon.start()
    >>> daemon.stop(wake)
    >>> seen
    [True]
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class Daemon:
    """One daemon thread running ``run(*args, closed)``.

    Args:
        name: The thread's name.
        run: The thread's function.
        *args: Its arguments before ``closed`` (hold the owner weakly).
    """

    def __init__(self, name: str, run: Callable[..., None], *args: Any) -> None:
        self.closed = threading.Event()
        self.thread: threading.Thread | None = None
        self._name, self._run, self._args = name, run, args
        self._start = threading.Lock()

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def start(self) -> None:
        """Start the thread, unless it was started or the owner closed."""
        with self._start:
            if self.thread is None and not self.closed.is_set():
                self.thread = threading.Thread(target=self._run, args=(*self._args, self.closed),
                                               name=self._name, daemon=True)
                self.thread.start()

    def stop(self, wake: threading.Event) -> None:
        """Mark closed, set ``wake`` so the thread sees it, and wait for it (idempotent)."""
        self.closed.set()
        wake.set()
        if self.thread is not None:
            self.thread.join()
