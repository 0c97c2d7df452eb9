"""Item values as JSON text, written as LangGraph's SQL stores write them.

LangGraph's ``SqliteStore`` stores ``orjson.dumps(dict(value))`` with orjson's defaults;
its ``PostgresStore`` stores ``Jsonb(dict(value))``, i.e. ``json.dumps``. Code moved
from either keeps working here:

* first, exactly what ``SqliteStore`` writes: ``datetime`` / ``date`` / ``time`` as
  RFC 3339 strings (``"2024-05-01T09:30:00+02:00"``; a naive datetime without offset),
  ``NaN`` and infinities as ``null``, ``UUID`` as its string, a dataclass as an object of
  its fields, an ``Enum`` as its value, tuples as arrays;
* a value orjson refuses that ``PostgresStore`` stores (a key that is not a string,
  ``{1: "a"}`` → ``{"1": "a"}``; an integer beyond 64 bits; a ``float`` subclass such
  as ``numpy.float64``), as ``PostgresStore`` writes it, unless two keys become one name
  (``{1: "a", "1": "b"}``: ``PostgresStore`` would keep only ``"b"``; refused here);
* what neither accepts (``bytes``, a set, an arbitrary object, ``NaN`` beside a key that
  is not a string, text with a lone surrogate) raises
  :class:`~hy_memory_langgraph.errors.InvalidInputError` naming the field.

``get`` and ``search`` return the value read back from that JSON, as both stores do.

Example:
    >>> import datetime, uuid
    >>> dumps({"at": datetime.date(2024, 5, 1), "score": float("nan"), "id": uuid.UUID(int=1)})
    '{"at":"2024-05-01","score":null,"id":"00000000-0000-0000-0000-000000000001"}'
    >>> dumps({1: "a"})
    '{"1":"a"}'
    >>> dumps({"m": {1: "a", "1": "b"}})
    Traceback (most recent call last):
    ...
    hy_memory_langgraph.errors.InvalidInputError: item value has two keys written as the JSON name '1' (e.g. 1 and '1'); one would be lost when stored: rename one of them
    >>> dumps({"tags": [b"raw"]})
    Traceback (most recent call last):
    ...
    hy_memory_langgraph.errors.InvalidInputError: item value field 'tags[0]' holds a value of type bytes, which LangGraph's SQL stores cannot store as JSON either; convert it to a JSON value (str, number, bool, None, list, dict)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson

from hy_memory_langgraph.errors import InvalidInputError


def dumps(value: Mapping[str, Any]) -> str:
    """``value`` as compact JSON text (see the module docstring).

    Raises:
        InvalidInputError: Neither LangGraph SQL store's serialisation accepts it.
    """
    value = dict(value)
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        pass
    text = _postgres(value)
    if text is None:
        raise InvalidInputError(_refusal(value))
    json.loads(text, object_pairs_hook=_distinct_names)  # keys made strings may collide
    return text


def _distinct_names(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members, refusing two with one name: keys that became the same JSON
    name (``{1: "a", "1": "b"}``), of which reading back would keep only the last."""
    seen: set[str] = set()
    for name, _ in pairs:
        if name in seen:
            raise InvalidInputError(f"item value has two keys written as the JSON name {name!r} (e.g. 1 "
                                    "and '1'); one would be lost when stored: rename one of them")
        seen.add(name)
    return dict(pairs)


def _postgres(value: Any) -> str | None:
    """What ``PostgresStore`` writes for ``value`` (compact, non-ASCII kept), or ``None``
    when it cannot (PostgreSQL refuses ``NaN`` and lone surrogates)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        text.encode("utf-8")
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        return None
    return text


def _alone(item: Any) -> bool:
    """Whether one serialisation or the other accepts ``item`` on its own."""
    try:
        orjson.dumps(item)
        return True
    except orjson.JSONEncodeError:
        return _postgres(item) is not None


def _refusal(value: dict[str, Any]) -> str:
    """Why ``value`` cannot be stored: the first field (or key) neither accepts, or both
    errors when only their mix is refused (e.g. ``NaN`` beside a key that is no string)."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, dict):
            for key, inner in reversed(item.items()):
                if not _alone({key: None}):
                    if isinstance(key, str):
                        return (f"item value {_where(path)} has a key with a lone surrogate (not valid "
                                "Unicode text); remove the broken characters")
                    return (f"item value {_where(path)} has the key {key!r} ({type(key).__name__}); "
                            "JSON keys are strings: convert it (e.g. str(key))")
                stack.append((f"{path}.{key}" if path else str(key), inner))
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{path}[{i}]", inner) for i, inner in reversed(list(enumerate(item))))
        elif not _alone(item):
            if isinstance(item, str):
                return (f"item value field {path!r} contains a lone surrogate (not valid Unicode "
                        "text); remove the broken characters")
            return (f"item value field {path!r} holds a value of type {type(item).__name__}, which "
                    "LangGraph's SQL stores cannot store as JSON either; convert it to a JSON value "
                    "(str, number, bool, None, list, dict)")
    errors = []
    for dump in (orjson.dumps, lambda v: json.dumps(v, allow_nan=False)):
        try:
            dump(value)
        except (TypeError, ValueError, RecursionError) as exc:
            errors.append(str(exc))
    return (f"item value cannot be stored as JSON by either of LangGraph's SQL stores "
            f"({'; '.join(errors)}): it mixes what only SqliteStore accepts (datetimes, NaN, UUIDs, "
            "dataclasses, deep nesting) with what only PostgresStore accepts (keys that are not "
            "strings, integers beyond 64 bits); convert one of them")


def _where(path: str) -> str:
    return f"field {path!r}" if path else "top level"
