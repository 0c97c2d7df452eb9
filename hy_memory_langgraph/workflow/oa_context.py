"""The OA context of ``memory_prompt``: pluggable providers plus the smart-grouping rule.

A provider is any object with ``get_oa_context(user_id) -> mapping | None``. The
mapping may hold ``version`` and ``user`` (``position``, ``department``,
``subcompany``, ``employeeId``; flat keys are accepted too). ``None`` means "not
available" (→ ``oaContext: null`` + ``oaContextMissing: true``). Raising
:class:`~hy_memory_langgraph.workflow.errors.MemoryNotSupportedError` (or returning
``{"memorySupported": False}``) means the environment does not support memory. Any
other exception is a provider failure: ``memory_prompt`` still returns the memory
body and reports the failure in ``diagnosis`` (``docs/design.md#workflow-memory``).

``smartGrouping`` is always computed here from ``version``; a ``smartGrouping`` key in
the provider's mapping is ignored.

Providers shipped here: :class:`CallableOAContextProvider` (a function of the user id)
and :class:`FileOAContextProvider` (a JSON file, re-read on every call). The client layer
builds one from ``MEMORY_OA_CONTEXT_PROVIDER`` / ``MEMORY_OA_CONTEXT_FILE``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from hy_memory_langgraph.config import load_oa_context_file

#: The first OA version with smart grouping (10.0.9909.01).
_SMART_GROUPING_SINCE = (10, 0, 9909, 1)

#: A function of the user id returning the raw OA context (or ``None``); it may raise.
OAContextFunction = Callable[[str], Mapping[str, Any] | None]
_SEGMENT = re.compile(r"^\s*[vV]?(\d+)")


@runtime_checkable
class OAContextProvider(Protocol):
    """Supplies the OA version and the current user's identity."""

    def get_oa_context(self, user_id: str) -> Mapping[str, Any] | None: ...


class CallableOAContextProvider:
    """Adapts a function ``fn(user_id) -> mapping | None`` (it may raise) to a provider.

    Example:
        >>> provider = CallableOAContextProvider(lambda uid: {"user": {"employeeId": uid}})
        >>> provider.get_oa_context("E42")
        {'user': {'employeeId': 'E42'}}
    """

    def __init__(self, fn: OAContextFunction) -> None:
        self.fn = fn

    def get_oa_context(self, user_id: str) -> Mapping[str, Any] | None:
        return self.fn(user_id)


class FileOAContextProvider:
    """The same OA context for every user, read from a JSON file on every call.

    The file holds ``{"version": "...", "user": {"position", "department",
    "subcompany", "employeeId"}}`` (UTF-8, a BOM is tolerated). Re-reading keeps a
    long-running process in step with edits; a file that became unreadable or invalid
    raises :class:`~hy_memory_langgraph.errors.ConfigError` naming ``source``, which
    ``memory_prompt`` reports in ``diagnosis``.

    Example:
        >>> FileOAContextProvider("/etc/oa.json").path.name
        'oa.json'
    """

    def __init__(self, path: str | Path, *, source: str = "MEMORY_OA_CONTEXT_FILE") -> None:
        self.path = Path(path)
        self.source = source

    def get_oa_context(self, user_id: str) -> Mapping[str, Any] | None:
        return load_oa_context_file(self.source, self.path)


def as_oa_context_provider(obj: Any) -> OAContextProvider:
    """``obj`` itself when it has ``get_oa_context``, else a callable wrapped as a provider.

    Raises:
        TypeError: ``obj`` is neither.
    """
    if callable(getattr(obj, "get_oa_context", None)):
        return obj  # type: ignore[no-any-return]
    if callable(obj):
        return CallableOAContextProvider(obj)
    raise TypeError(f"{type(obj).__name__} is not an OA context provider: pass an object with "
                    "get_oa_context(user_id) or a function of the user id")


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


def smart_grouping(version: object) -> bool:
    """True from :data:`_SMART_GROUPING_SINCE` on (segment by segment, numerically);
    unknown or unparsable → False."""
    parsed = parse_version(version)
    return parsed is not None and parsed >= _SMART_GROUPING_SINCE


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
