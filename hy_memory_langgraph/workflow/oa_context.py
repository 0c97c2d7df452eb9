"""The OA context of ``memory_prompt``: a pluggable provider plus the smart-grouping rule.

A provider is any object with ``get_oa_context(user_id) -> mapping | None``. The
mapping may hold ``version`` and ``user`` (``position``, ``department``,
``subcompany``, ``employeeId``; flat keys are accepted too). ``None`` means "not
available" (→ ``oaContext: null`` + ``oaContextMissing: true``). Raising
:class:`~hy_memory_langgraph.workflow.errors.MemoryNotSupportedError` (or returning
``{"memorySupported": False}``) means the environment does not support memory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "SMART_GROUPING_SINCE",
    "OAContextProvider",
    "StaticOAContextProvider",
    "build_oa_context",
    "compare_versions",
    "parse_version",
    "smart_grouping",
]

SMART_GROUPING_SINCE = "10.0.9909.01"
_SEGMENT = re.compile(r"^\s*[vV]?(\d+)")


@runtime_checkable
class OAContextProvider(Protocol):
    """Supplies the OA version and the current user's identity."""

    def get_oa_context(self, user_id: str) -> Mapping[str, Any] | None: ...


class StaticOAContextProvider:
    """A provider returning one fixed mapping (tests, CLI, single-tenant setups)."""

    def __init__(self, context: Mapping[str, Any] | None) -> None:
        self.context = context

    def get_oa_context(self, user_id: str) -> Mapping[str, Any] | None:
        return self.context


def parse_version(version: object) -> tuple[int, ...] | None:
    """``"10.0.9909.01"`` → ``(10, 0, 9909, 1)``; ``None`` when a segment is not numeric."""
    if not isinstance(version, str) or not version.strip():
        return None
    parts: list[int] = []
    for segment in version.strip().split("."):
        match = _SEGMENT.match(segment)
        if not match:
            return None
        parts.append(int(match.group(1)))
    return tuple(parts)


def compare_versions(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """-1, 0 or 1, segment by segment numerically (missing segments count as 0)."""
    width = max(len(a), len(b))
    pa, pb = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return (pa > pb) - (pa < pb)


def smart_grouping(version: object) -> bool:
    """True from :data:`SMART_GROUPING_SINCE` on; unknown or unparsable → False."""
    parsed = parse_version(version)
    since = parse_version(SMART_GROUPING_SINCE)
    assert since is not None
    return parsed is not None and compare_versions(parsed, since) >= 0


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def build_oa_context(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The public ``oaContext`` object from a provider mapping."""
    user = raw.get("user") if isinstance(raw.get("user"), Mapping) else raw
    version = _text(raw.get("version"))
    return {
        "version": version,
        "smartGrouping": smart_grouping(version),
        "user": {
            "position": _text(user.get("position")),
            "department": _text(user.get("department")),
            "subcompany": _text(user.get("subcompany")),
            "employeeId": _text(user.get("employeeId", user.get("employee_id"))),
        },
    }
