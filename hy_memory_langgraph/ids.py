"""Identifiers passed by callers (user, session, workspace, memory and workflow ids).

Validation lives here so every entry point (client, graphs, workflow memory, CLI)
accepts and rejects the same ids with the same message.

Example:
    >>> require_id("user_123", "user_id")
    'user_123'
"""

from __future__ import annotations

from typing import Any

from hy_memory_langgraph.errors import InvalidInputError

__all__ = ["optional_id", "require_id"]


def require_id(value: object, field: str) -> str:
    """Return ``value`` as a stripped id, or raise naming ``field`` and the fix."""
    if not isinstance(value, str) or not value.strip():
        hint = ("an id returned by add() or search()" if field == "memory_id"
                else f"the id of the user the memory belongs to, e.g. {field}='user_123'")
        raise InvalidInputError(f"{field} must be a non-empty string (got {value!r}); pass {hint}")
    return value.strip()


def optional_id(value: Any, field: str) -> str | None:
    """``None`` (also for a blank string) or the stripped id; non-strings raise."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string or None (got {type(value).__name__})")
    return value.strip() or None
