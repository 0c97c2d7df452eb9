"""Safe namespace labels.

LangGraph namespace labels may not be empty nor contain a period. User, workspace
and workflow ids are arbitrary strings (``"a.b@example.com"``, ``"github.com/x/y"``),
so they are percent-escaped reversibly before they become labels.
"""

from __future__ import annotations


def encode_label(value: str) -> str:
    """Escape ``%`` and ``.`` so any non-empty string is a valid label.

    Example:
        >>> encode_label("a.b")
        'a%2Eb'
    """
    return value.replace("%", "%25").replace(".", "%2E")
