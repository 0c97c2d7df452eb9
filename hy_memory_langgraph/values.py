"""Caller values checked at the door: text that is valid Unicode, JSON objects that are
JSON, of bounded depth, with valid Unicode keys and strings.

The NUL character (U+0000) is dropped from what passes (:func:`without_nul`):
PostgreSQL cannot store it and SQLite can, so without this one conversation would be
written on one backend and refused on the other.

Example:
    >>> require_text("fine", "content")
    'fine'
    >>> json_object({"a": [1, {"b": None}]}, "metadata")
    {'a': [1, {'b': None}]}
"""

from __future__ import annotations

import json
from typing import Any, Final

from hy_memory_langgraph.errors import InvalidInputError

#: Deepest nesting of a caller's JSON value (metadata, tool arguments, imported rows).
MAX_JSON_DEPTH: Final = 64


def without_nul(value: Any) -> Any:
    """``value`` with U+0000 removed from every string in it, dict keys too (containers
    are copied). Call it on checked values (bounded depth).

    Example:
        >>> without_nul({"a\\x00": ["b\\x00c", 1]})
        {'a': ['bc', 1]}
    """
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {without_nul(k): without_nul(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [without_nul(v) for v in value]
    return value


def require_text(value: Any, field: str) -> str:
    """``value`` when it is a string of valid Unicode (no lone surrogate), else raise;
    U+0000 is dropped."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string (got {type(value).__name__})")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(f"{field} contains a lone surrogate (not valid Unicode text); "
                                "remove the broken characters") from None
    return value.replace("\x00", "") if "\x00" in value else value


def json_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """How deep ``value`` nests (``limit + 1`` as soon as it is deeper: never recurses)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if depth > limit:
                return limit + 1
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _require_string_keys(value: Any, field: str) -> None:
    """Refuse a dict key in ``value`` that is not a string (``value`` is of bounded depth:
    :func:`json_depth` checked it). ``json.dumps`` would turn ``1`` into ``"1"``, so
    ``{1: "a", "1": "b"}`` would silently lose one of its values."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                if not isinstance(key, str):
                    raise InvalidInputError(
                        f"{field} has the key {key!r} ({type(key).__name__}); JSON keys are "
                        "strings, and a converted key could overwrite another one: pass "
                        f"{str(key)!r} if that is the key you mean")
                stack.append(inner)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def json_object(value: Any, field: str, *, max_depth: int = MAX_JSON_DEPTH) -> dict[str, Any]:
    """``value`` when it is a dict of JSON values, at most ``max_depth`` deep, with valid
    Unicode throughout (a copy without U+0000 if it held one); ``None`` gives ``{}``."""
    value = {} if value is None else value
    if not isinstance(value, dict):
        raise InvalidInputError(f"{field} must be a dict of JSON-serialisable values or None")
    if json_depth(value, max_depth) > max_depth:
        raise InvalidInputError(f"{field} nests deeper than {max_depth} levels; flatten it")
    _require_string_keys(value, field)
    try:
        dumped = json.dumps(value, allow_nan=False, ensure_ascii=False)
        dumped.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(f"{field} contains a lone surrogate (not valid Unicode text); "
                                "remove the broken characters") from None
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"{field} must hold only JSON values (str, number, bool, None, list, dict): {exc}; "
            "convert e.g. datetimes with .isoformat()") from exc
    return without_nul(value) if "\\u0000" in dumped else value
