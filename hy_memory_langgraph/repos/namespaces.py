"""Safe namespace labels.

LangGraph namespace labels may not be empty nor contain a period. User, workspace
and workflow ids are arbitrary strings (``"a.b@example.com"``, ``"github.com/x/y"``),
so they are percent-escaped reversibly before they become labels.
"""

from __future__ import annotations

from hy_memory_langgraph.errors import InvalidInputError

__all__ = ["encode_label", "decode_label", "require_id"]


def encode_label(value: str) -> str:
    """Escape ``%`` and ``.`` so any non-empty string is a valid label.

    Example:
        >>> encode_label("a.b")
        'a%2Eb'
    """
    return value.replace("%", "%25").replace(".", "%2E")


def decode_label(label: str) -> str:
    """Inverse of :func:`encode_label`."""
    return label.replace("%2E", ".").replace("%25", "%")


def require_id(value: object, field: str) -> str:
    """Return ``value`` as a stripped id, or raise naming ``field`` and the fix."""
    if not isinstance(value, str) or not value.strip():
        hint = ("an id returned by add() or search()" if field == "memory_id"
                else f"the id of the user the memory belongs to, e.g. {field}='user_123'")
        raise InvalidInputError(f"{field} must be a non-empty string (got {value!r}); pass {hint}")
    return value.strip()
