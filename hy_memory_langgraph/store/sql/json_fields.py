"""Dialect-specific access to fields inside the JSON ``value`` column.

:mod:`.filters` compiles filters against the small :class:`JsonAccess` interface;
only this module knows SQL function names. JSON paths travel as bind
parameters, never as SQL text.

Every predicate returned here is two-valued (``TRUE``/``FALSE``, never
``NULL``): a missing field has the kind ``"missing"``, and typed values are only
compared under a guard on their kind. So ``NOT`` of any predicate is safe.

Example:
    >>> from hy_memory_langgraph.store.schema.tables import items
    >>> acc = json_access("sqlite", items.c.value)
    >>> print(acc.kind_is(("a", 0), "number"))  # doctest: +ELLIPSIS
    coalesce(json_type(hy_store_items.value, :json_type_1), :coalesce_1) IN (...)
"""

from __future__ import annotations

import json
import re
import zlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.sql.elements import quoted_name

from hy_memory_langgraph.errors import ConfigError

#: A PostgreSQL function reading a text as jsonb, ``{}`` when it is not JSON
#: (``{name}``: ``schema.function``).
PG_READER_SQL = ("CREATE OR REPLACE FUNCTION {name}(t text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS "
                 "$$ BEGIN RETURN t::jsonb; EXCEPTION WHEN others THEN RETURN '{{}}'::jsonb; END $$")

#: A dotted filter key's segment (letters, digits, ``_``, ``-``): safe to spell in SQL text.
SEGMENT_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,127}")

Kind = Literal["missing", "null", "bool", "number", "string", "array", "object"]
Segment = str | int
CompareOp = Literal["eq", "gt", "ge", "lt", "le", "in"]


def _needs_kind_guard(kind: str, value: object) -> bool:
    """Whether SQLite's json_extract could equal ``value`` for a field of another kind.

    Booleans extract as 1/0 and arrays/objects as their JSON text; nothing else
    can collide with a number or string operand.
    """
    values = value if isinstance(value, list) else [value]
    if kind == "number":
        return any(v in (0, 1) for v in values)
    return any(isinstance(v, str) and v[:1] in ("[", "{") for v in values)


def _apply(expr: sa.ColumnElement[Any], op: CompareOp, value: object) -> sa.ColumnElement[bool]:
    if op == "in":
        return expr.in_(list(value))  # type: ignore[call-overload]
    return getattr(expr, f"__{op}__")(value)


class JsonAccess(ABC):
    """Typed access to JSON fields of one column, per SQL dialect."""

    def __init__(self, column: sa.ColumnElement[str]) -> None:
        self.column = column

    @abstractmethod
    def kind_is(self, path: Sequence[Segment], *kinds: Kind) -> sa.ColumnElement[bool]:
        """True when the JSON kind at ``path`` is one of ``kinds``."""

    @abstractmethod
    def is_bool(self, path: Sequence[Segment], value: bool) -> sa.ColumnElement[bool]:
        """True when the field is the JSON boolean ``value``."""

    @abstractmethod
    def number(self, path: Sequence[Segment]) -> sa.ColumnElement[float]:
        """The field as a number, or SQL ``NULL`` when it is not a JSON number."""

    @abstractmethod
    def string(self, path: Sequence[Segment]) -> sa.ColumnElement[str]:
        """The field as text, or SQL ``NULL`` when it is not a JSON string."""

    @abstractmethod
    def array_length(self, path: Sequence[Segment]) -> sa.ColumnElement[int]:
        """Length of the JSON array at ``path`` (``NULL`` when not an array)."""

    def narrowing(self, path: Sequence[Segment], value: str | bool) -> sa.ColumnElement[bool] | None:
        """An extra condition implied by ``field == value`` that an index can answer (the
        exact test stays beside it), or ``None`` when the backend has none."""
        return None

    def typed(self, path: Sequence[Segment], kind: Literal["number", "string"]) -> sa.ColumnElement[Any]:
        """The field as a number or string (``NULL`` unless it has that kind)."""
        return self.number(path) if kind == "number" else self.string(path)

    def compare(
        self, path: Sequence[Segment], kind: Literal["number", "string"], op: CompareOp, value: object
    ) -> sa.ColumnElement[bool]:
        """Two-valued ``field <op> value``, true only when the field has ``kind``."""
        return sa.and_(self.kind_is(path, kind), _apply(self.typed(path, kind), op, value))


class SqliteJson(JsonAccess):
    """SQLite JSON1 functions (``json_type``, ``json_extract``, ...).

    Comparisons test the extracted value first and the kind second: SQLite
    short-circuits ``AND``, so most non-matching rows cost one JSON lookup.
    """

    _KINDS: dict[str, tuple[str, ...]] = {
        "missing": ("missing",),
        "null": ("null",),
        "bool": ("true", "false"),
        "number": ("integer", "real"),
        "string": ("text",),
        "array": ("array",),
        "object": ("object",),
    }

    def __init__(self, column: sa.ColumnElement[str], *, raw: sa.ColumnElement[str] | None = None,
                 indexed: frozenset[tuple[str, ...]] = frozenset()) -> None:
        super().__init__(column)
        self.raw = raw if raw is not None else column
        self.indexed = indexed

    @staticmethod
    def _path(path: Sequence[Segment]) -> str:
        # Keys are validated (SEGMENT_RE) and quoted; ints are array indexes.
        parts = [f"[{seg}]" if isinstance(seg, int) else f'."{seg}"' for seg in path]
        return "$" + "".join(parts)

    def narrowing(self, path: Sequence[Segment], value: str | bool) -> sa.ColumnElement[bool] | None:
        """For a declared field (:func:`sqlite_field_index`): ``field_expr = value`` over
        the very expression its index holds, which the planner then answers from it."""
        if not isinstance(value, str) or tuple(path) not in self.indexed:
            return None
        return sqlite_field_expr(self.raw, tuple(str(seg) for seg in path)) == value

    def _type(self, path: Sequence[Segment]) -> sa.ColumnElement[str]:
        return sa.func.coalesce(sa.func.json_type(self.column, self._path(path)), "missing")

    def kind_is(self, path: Sequence[Segment], *kinds: Kind) -> sa.ColumnElement[bool]:
        names = [name for kind in kinds for name in self._KINDS[kind]]
        return self._type(path).in_(names)

    def is_bool(self, path: Sequence[Segment], value: bool) -> sa.ColumnElement[bool]:
        return self._type(path) == ("true" if value else "false")

    def _extract(self, path: Sequence[Segment]) -> sa.ColumnElement[object]:
        return sa.func.json_extract(self.column, self._path(path))

    def number(self, path: Sequence[Segment]) -> sa.ColumnElement[float]:
        return sa.case((self.kind_is(path, "number"), self._extract(path)), else_=sa.null())

    def string(self, path: Sequence[Segment]) -> sa.ColumnElement[str]:
        return sa.case((self.kind_is(path, "string"), self._extract(path)), else_=sa.null())

    def array_length(self, path: Sequence[Segment]) -> sa.ColumnElement[int]:
        return sa.func.json_array_length(self.column, self._path(path))

    def compare(
        self, path: Sequence[Segment], kind: Literal["number", "string"], op: CompareOp, value: object
    ) -> sa.ColumnElement[bool]:
        raw = _apply(self._extract(path), op, value)
        if op in ("eq", "in") and not _needs_kind_guard(kind, value):
            # json_extract yields INTEGER/REAL for numbers, TEXT for strings, NULL for
            # null/missing: an equality can only hold for the right kind. One lookup.
            return sa.func.coalesce(raw, sa.false())
        # Otherwise test the value first (SQLite short-circuits AND) and the kind second;
        # ``raw`` can be NULL only when the kind test is FALSE, so this stays two-valued.
        return sa.and_(raw, self.kind_is(path, kind))


def quoted_reader(reader: str) -> str:
    """``schema.function`` with the schema quoted, for raw SQL (a schema may be a keyword:
    ``user``, ``order``)."""
    schema, name = reader.split(".")
    return f'"{schema}".{name}'


def _call(reader: str, column: sa.ColumnElement[str]) -> sa.ColumnElement[object]:
    """``reader(column)`` as jsonb, the schema always quoted."""
    schema, name = reader.split(".")
    return sa.sql.functions.Function(name, column, packagenames=(quoted_name(schema, True),),
                                     type_=postgresql.JSONB)


class PostgresJson(JsonAccess):
    """PostgreSQL ``jsonb`` operators (``#>``, ``#>>``, ``jsonb_typeof``)."""

    _KINDS: dict[str, tuple[str, ...]] = {
        "missing": ("missing",),
        "null": ("null",),
        "bool": ("boolean",),
        "number": ("number",),
        "string": ("string",),
        "array": ("array",),
        "object": ("object",),
    }

    def __init__(self, column: sa.ColumnElement[str], *, reader: str | None = None,
                 indexed_reader: str | None = None) -> None:
        super().__init__(column)
        self.reader = reader
        self.indexed_reader = indexed_reader

    def narrowing(self, path: Sequence[Segment], value: str | bool) -> sa.ColumnElement[bool] | None:
        """``reader(value) @> {"a": {"b": value}}``: the GIN index on the reader's jsonb
        (``jsonb_path_ops``) answers it. Only strings and booleans: jsonb compares
        numbers exactly, the filter compares them as doubles."""
        if self.indexed_reader is None or not path or not all(isinstance(seg, str) for seg in path):
            return None
        doc: object = value
        for seg in reversed(path):
            doc = {seg: doc}
        read = _call(self.indexed_reader, self.column)
        return read.op("@>")(sa.cast(sa.bindparam(None, json.dumps(doc), type_=sa.Text, unique=True),
                                     postgresql.JSONB))

    def _doc(self) -> sa.ColumnElement[object]:
        if self.reader is not None:  # schema.function(text) -> jsonb, '{}' for what is not JSON
            return _call(self.reader, self.column)
        return sa.cast(self.column, postgresql.JSONB)

    @staticmethod
    def _path(path: Sequence[Segment]) -> sa.BindParameter[list[str]]:
        return sa.bindparam(
            None, [str(seg) for seg in path], type_=postgresql.ARRAY(sa.Text), unique=True
        )

    def _node(self, path: Sequence[Segment]) -> sa.ColumnElement[object]:
        return self._doc().op("#>")(self._path(path))

    def _text(self, path: Sequence[Segment]) -> sa.ColumnElement[str]:
        return self._doc().op("#>>")(self._path(path))

    def _type(self, path: Sequence[Segment]) -> sa.ColumnElement[str]:
        return sa.func.coalesce(sa.func.jsonb_typeof(self._node(path)), "missing")

    def kind_is(self, path: Sequence[Segment], *kinds: Kind) -> sa.ColumnElement[bool]:
        names = [name for kind in kinds for name in self._KINDS[kind]]
        return self._type(path).in_(names)

    def is_bool(self, path: Sequence[Segment], value: bool) -> sa.ColumnElement[bool]:
        return sa.and_(
            self.kind_is(path, "bool"), self._text(path) == ("true" if value else "false")
        )

    def number(self, path: Sequence[Segment]) -> sa.ColumnElement[float]:
        as_float = sa.cast(self._text(path), sa.Float)
        return sa.case((self.kind_is(path, "number"), as_float), else_=sa.null())

    def string(self, path: Sequence[Segment]) -> sa.ColumnElement[str]:
        return sa.case((self.kind_is(path, "string"), self._text(path)), else_=sa.null())

    def array_length(self, path: Sequence[Segment]) -> sa.ColumnElement[int]:
        length = sa.func.jsonb_array_length(self._node(path))
        return sa.case((self.kind_is(path, "array"), length), else_=sa.null())


def sqlite_field_expr(column: sa.ColumnElement[str], path: tuple[str, ...]) -> sa.ColumnElement[object]:
    """``json_extract(CASE WHEN json_valid(v) THEN v ELSE '{}' END, '$."a"."b"')`` with the
    path and the fallback as SQL literals (an index on an expression serves only queries
    that spell the same expression; a bound parameter never matches). The path segments
    are validated filter keys (letters, digits, ``_``, ``-``); a damaged value reads as
    ``{}``, so neither the index nor a write can fail on one."""
    if not all(SEGMENT_RE.fullmatch(seg) for seg in path):
        raise ConfigError(f"filter field {'.'.join(path)!r}: segments may hold letters, digits, '_' and '-'")
    doc = sa.case((sa.func.json_valid(column), column), else_=sa.literal_column("'{}'"))
    return sa.func.json_extract(doc, sa.literal_column("'" + SqliteJson._path(path) + "'"))


def sqlite_field_index(table: str, path: tuple[str, ...]) -> sa.Index:
    """The index of one declared filter field on SQLite, on ``table``'s ``value``: over
    :func:`sqlite_field_expr` itself, so the query and the index spell one expression.
    (It belongs to a throwaway table object: the shared table definitions stay as they are.)"""
    name = "ix_hy_store_items_f_" + "_".join(seg.replace("-", "_") for seg in path)[:40] \
        + "_" + format(zlib.crc32(".".join(path).encode()), "08x")
    value = sa.Column("value", sa.Text)
    index = sa.Index(name, sqlite_field_expr(value, path))
    sa.Table(table, sa.MetaData(), value, index)
    return index


def json_access(dialect_name: str, column: sa.ColumnElement[str], *,
                guarded: bool = False, reader: str | None = None,
                indexed_reader: str | None = None,
                indexed_fields: frozenset[tuple[str, ...]] = frozenset()) -> JsonAccess:
    """The :class:`JsonAccess` for a SQLAlchemy dialect name.

    ``guarded``: a value that is not valid JSON reads as ``{}`` instead of failing the
    whole statement (the database raises on the first such row); a store switches to it
    after meeting a damaged row, at the price of one validity check per row filtered
    (SQLite ``json_valid``; on PostgreSQL the function ``reader``, ``schema.name``, that
    :data:`PG_READER_SQL` creates). ``indexed_reader``: that function on PostgreSQL when
    a GIN index covers it; equality filters on strings and booleans then also test
    containment, which the index answers. ``indexed_fields``: the SQLite fields with an
    expression index (:func:`sqlite_field_index`); string equality on them uses it.
    """
    if dialect_name == "sqlite":
        shown = sa.case((sa.func.json_valid(column), column), else_="{}") if guarded else column
        return SqliteJson(shown, raw=column, indexed=indexed_fields)
    if dialect_name == "postgresql":
        return PostgresJson(column, reader=reader if guarded else None, indexed_reader=indexed_reader)
    raise ConfigError(f"HyMemoryStore has no JSON filter support for the {dialect_name!r} dialect")
