"""Refuse inputs that carry credentials (the CLI manages them, inputs never do)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from hy_memory_langgraph.workflow.errors import CredentialsRefusedError

__all__ = ["CREDENTIAL_NAMES", "find_credential", "refuse_credentials"]

CREDENTIAL_NAMES = ("Cookie", "ETEAMSID", "Token", "header.operator")
# In text: the words themselves, not inside a longer ASCII word ("tokenizer" is fine).
_IN_TEXT = re.compile(
    r"(?<![A-Za-z0-9])(?:set-)?cookies?(?![A-Za-z0-9])"
    r"|eteamsid"
    r"|(?<![A-Za-z0-9])(?:access|refresh|auth|x|api|session|bearer)?[-_]?tokens?(?![A-Za-z0-9])"
    r"|header\s*\.\s*operator",
    re.IGNORECASE,
)
# In dict keys: any key that names one ("accessToken", "X-Cookie", "eteamsId").
_IN_KEY = re.compile(r"cookie|eteamsid|token", re.IGNORECASE)


def find_credential(text: str) -> str | None:
    """The credential word found in ``text``, or ``None``."""
    match = _IN_TEXT.search(text)
    return match.group(0) if match else None


def _walk(value: Any, path: str) -> Iterator[tuple[str, str, bool]]:
    """(path, text, is_key) for every key and string value of a JSON-like value."""
    if isinstance(value, dict):
        for key, item in value.items():
            sub = f"{path}.{key}"
            yield sub, str(key), True
            yield from _walk(item, sub)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}[{i}]")
    elif isinstance(value, str):
        yield path, value, False


def refuse_credentials(fields: dict[str, Any]) -> None:
    """Raise :class:`CredentialsRefusedError` naming the field that carries a credential.

    Args:
        fields: ``{field name: value}`` of everything the caller passed
            (messages and dynamic context); keys of dicts are checked too, and a
            nested ``header`` → ``operator`` counts as ``header.operator``.
    """
    for name, value in fields.items():
        for path, text, is_key in _walk(value, name):
            hit = None
            if is_key:
                if _IN_KEY.search(text):
                    hit = text
                elif text.lower() == "operator" and path.lower().endswith("header.operator"):
                    hit = "header.operator"
            else:
                hit = find_credential(text)
            if hit:
                raise CredentialsRefusedError(
                    f"{path} carries a credential ({hit!r}); inputs must never contain "
                    f"{', '.join(CREDENTIAL_NAMES)} (the CLI manages them): remove it and "
                    "call again. Nothing was saved."
                )
