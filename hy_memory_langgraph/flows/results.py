"""Small builders for the dicts the pipelines return."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from typing import Any


def elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 3)


def ops_summary(ops: Iterable[dict[str, Any]], names: Iterable[str]) -> dict[str, int]:
    """Count ops by their ``op`` field, every name in ``names`` present."""
    counts = Counter(op["op"] for op in ops)
    summary = {name: counts.get(name, 0) for name in names}
    for name, count in counts.items():
        summary.setdefault(name, count)
    return summary
