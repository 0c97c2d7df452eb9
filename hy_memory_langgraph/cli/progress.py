"""A small progress bar on stderr (only drawn when stderr is a terminal, or forced)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``[#####.....]  120/500 rows  3.1 s`` redrawn in place at most 10 times a second.

    Args:
        label: What is counted ("rows", "writes").
        total: The expected count, if known (else a counter is shown).
        enabled: ``None``: draw when the stream is a terminal; ``True``/``False`` force it.
        stream: Where to draw (default ``sys.stderr``).

    Example:
        >>> bar = Progress("rows", total=2, enabled=False)
        >>> bar.update(1); bar.update(2); bar.close()
    """

    def __init__(self, label: str, *, total: int | None = None, enabled: bool | None = None,
                 stream: TextIO | None = None, width: int = 30) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.label, self.total, self.width = label, total, width
        self.count = 0
        self.started = time.monotonic()
        self._drawn = 0.0

    def _line(self) -> str:
        elapsed = time.monotonic() - self.started
        if self.total:
            filled = min(self.width, self.width * self.count // self.total)
            bar = "#" * filled + "." * (self.width - filled)
            return f"[{bar}] {self.count}/{self.total} {self.label}  {elapsed:.1f} s"
        return f"{self.count} {self.label}  {elapsed:.1f} s"

    def update(self, count: int) -> None:
        """Set the count; redraw when due."""
        self.count = count
        now = time.monotonic()
        if self.enabled and (now - self._drawn >= 0.1 or count == self.total):
            self._drawn = now
            self.stream.write("\r" + self._line())
            self.stream.flush()

    def close(self) -> None:
        """Draw the final state and end the line."""
        if self.enabled:
            self.stream.write("\r" + self._line() + "\n")
            self.stream.flush()
