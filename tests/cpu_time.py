"""CPU time of a call: what a complexity test compares with its budget, never the clock.

A busy machine stretches wall time many times over (other processes hold the cores) but
barely moves the CPU seconds a call itself spends; a quadratic or backtracking path on a
megabyte of text spends minutes of them. Budgets are set at about ten times what the call
measures on an idle machine here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["LINEAR_BUDGET_S", "cpu_seconds"]

#: CPU seconds a redaction pass over a megabyte of adversarial text may spend: a linear
#: pass spends 0.5 to 5.5 s here (the most on texts made of label words, and machines
#: differ: the same commit measured 4.8 and 5.5 s on two days); a quadratic or backtracking
#: path spends minutes.
LINEAR_BUDGET_S = 20.0

T = TypeVar("T")


def cpu_seconds(call: Callable[[], T]) -> tuple[T, float]:
    """``call()``'s result and the CPU seconds this process spent in it (all threads)."""
    started = time.process_time()
    result = call()
    return result, time.process_time() - started
