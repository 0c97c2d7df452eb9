"""Refuse inputs that carry credentials (the CLI manages them, inputs never do).

A credential is recognised by its value, not by a word: in free text, what the secret
detector of :mod:`hy_memory_langgraph.redact` finds (cookie headers, ``ETEAMSID=…``,
``X-Token: …``, API keys, bearer tokens, passwords in URLs, private keys,
``password=…``); in structured input (``dynamicContext``), any value under a
credential-named key (cookie, ETEAMSID, token, secret, password, authorization) or at
``header.operator``. "报销单里的 token 字段就是指发票号" mentions a token but carries none,
so it is saved as usual.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from hy_memory_langgraph.redact import find_secret
from hy_memory_langgraph.workflow.errors import CredentialsRefusedError

_CREDENTIAL_NAMES = ("Cookie", "ETEAMSID", "Token", "header.operator")
# Keys of structured input whose non-empty value is a credential.
_KEYS: Final = re.compile(r"cookie|eteamsid|token|secret|passw(?:or)?d|pwd|api[-_]?key|"
                          r"authorization", re.IGNORECASE)


def find_credential(text: str) -> str | None:
    """The kind of credential found in free ``text``, or ``None``."""
    return find_secret(text)


def _walk(value: Any, path: str, key: str = "") -> Iterator[tuple[str, str, str]]:
    """``(path, key, text)`` for every string value of a JSON-like value."""
    if isinstance(value, dict):
        for k, item in value.items():
            yield from _walk(item, f"{path}.{k}", str(k))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}[{i}]", key)
    elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
        yield path, key, str(value)


def _credential(path: str, key: str, text: str) -> str | None:
    if not text.strip():
        return None
    if path.lower().endswith("header.operator"):
        return "header.operator"
    if key and _KEYS.search(key):
        return key
    return find_secret(text)


def refuse_credentials(fields: dict[str, Any]) -> None:
    """Raise :class:`CredentialsRefusedError` naming the field that carries a credential.

    Args:
        fields: ``{field name: value}`` of everything the caller passed (messages and
            dynamic context); nested values are checked with their key path.
    """
    for name, value in fields.items():
        for path, key, text in _walk(value, name):
            hit = _credential(path, key, text)
            if hit:
                raise CredentialsRefusedError(
                    f"{path} carries a credential ({hit}); inputs must never contain "
                    f"{', '.join(_CREDENTIAL_NAMES)} values or other secrets (the CLI manages "
                    "them): remove it and call again. Nothing was saved."
                )
