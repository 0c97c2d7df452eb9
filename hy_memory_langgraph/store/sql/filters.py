"""Compile search filters to SQLAlchemy expressions (bind parameters only).

Filter language (a superset of langgraph's ``InMemoryStore`` filters):

* ``{"field": value}``: a bare scalar is equality; a bare dict is a structural
  *containment* match (the field is an object and every given sub-key matches,
  recursively; extra keys in the item are allowed, like ``InMemoryStore`` and
  JSONB ``@>``); a bare list matches an array of the same length element-wise.
* Operators: ``$eq $ne $gt $gte $lt $lte $in $nin $exists``, e.g.
  ``{"score": {"$gte": 3, "$lt": 5}}``. Top-level ``$and`` / ``$or`` take a
  non-empty list of sub-filters and nest.
* Dotted keys reach nested fields: ``{"a.b.c": 1}``. Every dotted segment must
  match :data:`SEGMENT_RE`; anything else (quotes, spaces, ``;``...) raises
  :class:`FilterError`, as do unknown operators.

Missing fields and ``null`` (documented decision, same as ``InMemoryStore``,
which reads a missing field as ``None``):

========================  ===============  ===============
condition                 field missing    field is null
========================  ===============  ===============
``x`` / ``$eq: x``        no               no
``None`` / ``$eq: None``  **yes**          yes
``$ne: x``                **yes**          yes
``$ne: None``             no               no
``$gt/$gte/$lt/$lte``     no               no
``$in: [..]``             iff None listed  iff None listed
``$nin: [..]``            **yes** unless   yes unless
                          None listed      None listed
``$exists: true``         no               yes
``$exists: false``        yes              no
========================  ===============  ===============

So ``{"$or": [{"branch": "x"}, {"branch": None}]}`` selects "branch is x, null
or absent". Types are strict: ``True`` never equals ``1``; ranges compare
numbers with numbers and strings with strings (byte order), nothing else.

Example:
    >>> from hy_memory_langgraph.store.sql.json_fields import SqliteJson
    >>> from hy_memory_langgraph.store.schema.tables import items
    >>> expr = compile_filter({"kind": "note", "score": {"$gt": 2}}, SqliteJson(items.c.value))
    >>> compile_filter({"a'; DROP TABLE x;--": 1}, SqliteJson(items.c.value))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hy_memory_langgraph.store.sql.filters.FilterError: Invalid filter key "a'; DROP TABLE x;--": ...
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.store.sql.json_fields import SEGMENT_RE, CompareOp, JsonAccess, Segment

OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"})
_LOGICAL = ("$and", "$or")
_RANGE: dict[str, CompareOp] = {"$gt": "gt", "$gte": "ge", "$lt": "lt", "$lte": "le"}
_MAX_DEPTH = 32
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

Scalar = str | int | float | bool | None


class FilterError(InvalidInputError):
    """A search filter is malformed: unsafe key, unknown operator or bad operand."""


def parse_key(key: object) -> tuple[str, ...]:
    """Split a dotted filter key into validated segments."""
    if not isinstance(key, str):
        raise FilterError(f"filter keys must be strings, got {key!r}")
    segments = tuple(key.split("."))
    for segment in segments:
        if not SEGMENT_RE.fullmatch(segment):
            raise FilterError(
                f"Invalid filter key {key!r}: each dotted segment must match "
                f"{SEGMENT_RE.pattern} (letters, digits, '_' and '-')"
            )
    return segments


def compile_filter(filter: Mapping[str, Any], json: JsonAccess) -> sa.ColumnElement[bool]:
    """Compile ``filter`` to a boolean SQL expression over ``json``'s column.

    Raises:
        FilterError: On an unsafe key, unknown operator or unusable operand.
    """
    return _document(filter, json, 0)


def _check_depth(depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise FilterError(f"filter nested deeper than {_MAX_DEPTH} levels")


def _document(doc: object, json: JsonAccess, depth: int) -> sa.ColumnElement[bool]:
    _check_depth(depth)
    if not isinstance(doc, Mapping):
        raise FilterError(f"a filter must be a mapping, got {type(doc).__name__}")
    clauses: list[sa.ColumnElement[bool]] = []
    for key, condition in doc.items():
        if key in _LOGICAL:
            clauses.append(_logical(key, condition, json, depth + 1))
        elif isinstance(key, str) and key.startswith("$"):
            raise FilterError(f"unsupported filter operator {key!r} (top level allows $and, $or)")
        else:
            clauses.append(_condition(parse_key(key), condition, json, depth + 1))
    return sa.and_(sa.true(), *clauses)


def _logical(op: str, operand: object, json: JsonAccess, depth: int) -> sa.ColumnElement[bool]:
    if not isinstance(operand, (list, tuple)) or not operand:
        raise FilterError(f"{op} takes a non-empty list of filters, got {operand!r}")
    parts = [_document(sub, json, depth) for sub in operand]
    return sa.and_(*parts) if op == "$and" else sa.or_(*parts)


def _condition(
    path: tuple[Segment, ...], condition: object, json: JsonAccess, depth: int
) -> sa.ColumnElement[bool]:
    _check_depth(depth)
    if isinstance(condition, Mapping):
        keys = list(condition)
        dollar = [k for k in keys if isinstance(k, str) and k.startswith("$")]
        if dollar and len(dollar) == len(keys):
            return sa.and_(*(_operator(path, k, condition[k], json) for k in keys))
        if dollar:
            raise FilterError(
                f"filter on {'.'.join(map(str, path))!r} mixes operators {dollar} with "
                "field names; use one or the other"
            )
        subs = [_condition(path + parse_key(k), v, json, depth + 1) for k, v in condition.items()]
        return sa.and_(json.kind_is(path, "object"), *subs)
    if isinstance(condition, (list, tuple)):
        subs = [_condition(path + (i,), v, json, depth + 1) for i, v in enumerate(condition)]
        return sa.and_(
            json.kind_is(path, "array"), json.array_length(path) == len(condition), *subs
        )
    return _equals(path, _scalar(condition, "equality"), json)


def _scalar(value: object, what: str) -> Scalar:
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, (int, float)):
        if isinstance(value, int) and not _INT64_MIN <= value <= _INT64_MAX:
            # beyond SQL integers: compared as a float (infinite past float range), order kept
            return float(value) if abs(value) < 2**1023 else (math.inf if value > 0 else -math.inf)
        return value
    raise FilterError(
        f"{what} operand must be a string, number, boolean or None, got {type(value).__name__}"
    )


def _is_nan(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _equals(path: tuple[Segment, ...], value: Scalar, json: JsonAccess) -> sa.ColumnElement[bool]:
    if _is_nan(value):  # NaN equals nothing (as in LangGraph's own stores)
        return sa.false()
    if value is None:
        return json.kind_is(path, "missing", "null")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return json.compare(path, "number", "eq", value)
    exact = json.is_bool(path, value) if isinstance(value, bool) else json.compare(path, "string", "eq", value)
    narrowing = json.narrowing(path, value)
    return exact if narrowing is None else sa.and_(narrowing, exact)


def _operator(
    path: tuple[Segment, ...], op: str, operand: object, json: JsonAccess
) -> sa.ColumnElement[bool]:
    if op == "$eq":
        return _equals(path, _scalar(operand, op), json)
    if op == "$ne":
        return sa.not_(_equals(path, _scalar(operand, op), json))
    if op in _RANGE:
        return _range(path, op, operand, json)
    if op in ("$in", "$nin"):
        hit = _member(path, op, operand, json)
        return hit if op == "$in" else sa.not_(hit)
    if op == "$exists":
        if not isinstance(operand, bool):
            raise FilterError(f"$exists takes true or false, got {operand!r}")
        missing = json.kind_is(path, "missing")
        return sa.not_(missing) if operand else missing
    raise FilterError(f"unsupported filter operator {op!r}; supported: {sorted(OPERATORS)}")


def _range(
    path: tuple[Segment, ...], op: str, operand: object, json: JsonAccess
) -> sa.ColumnElement[bool]:
    value = _scalar(operand, op)
    if _is_nan(value):  # no value is ordered against NaN
        return sa.false()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return json.compare(path, "number", _RANGE[op], value)
    if isinstance(value, str):
        return json.compare(path, "string", _RANGE[op], value)
    raise FilterError(f"{op} takes a number or a string, got {operand!r}")


def _member(
    path: tuple[Segment, ...], op: str, operand: object, json: JsonAccess
) -> sa.ColumnElement[bool]:
    if not isinstance(operand, (list, tuple, set, frozenset)):
        raise FilterError(f"{op} takes a list of values, got {operand!r}")
    values = [_scalar(v, op) for v in operand]
    strings = [v for v in values if isinstance(v, str)]
    numbers = [v for v in values
               if isinstance(v, (int, float)) and not isinstance(v, bool) and not _is_nan(v)]
    parts: list[sa.ColumnElement[bool]] = []
    if strings:
        parts.append(json.compare(path, "string", "in", strings))
    if numbers:
        parts.append(json.compare(path, "number", "in", numbers))
    parts.extend(json.is_bool(path, v) for v in {v for v in values if isinstance(v, bool)})
    if any(v is None for v in values):
        parts.append(json.kind_is(path, "missing", "null"))
    return sa.or_(sa.false(), *parts)
