"""What each call of a probe script gave: its result, our error, or a foreign one
(scripts run in a subprocess, under a read-only mount or on a full disk)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hy_memory_langgraph.errors import HyMemoryError


def outcomes(calls: Mapping[str, Callable[[], Any]]) -> dict[str, Any]:
    """Each call's result, or ``"ErrorName: message"`` for our errors and ``"FOREIGN
    ErrorName: message"`` for any other exception."""
    out: dict[str, Any] = {}
    for name, call in calls.items():
        try:
            out[name] = call()
        except HyMemoryError as exc:
            out[name] = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # noqa: BLE001 - reported as foreign, for the test to refuse
            out[name] = f"FOREIGN {type(exc).__name__}: {exc}"
    return out
