"""Run the store's prebuilt statements straight on the SQLite driver.

SQLAlchemy's execution path (cache lookup, parameter processing, result metadata,
events) costs several times what SQLite takes to run one of the small statements a
write is made of: replayed on the driver, the twelve statements of a lite chat ``add``
take about 0.3 ms, through ``Connection.execute`` well over 1 ms. The statements of
every write and point read are built once at module level; this module compiles each
once per shape (the parameter names, the length of each expanding ``IN`` list) and
runs it on the driver connection of the caller's transaction, with the same bind and
result processing SQLAlchemy would apply.

``Connection.execute`` is used instead on other dialects, while anyone listens to cursor
events (statement counters, query-plan tests see every statement) or the engine echoes
statements, under a schema translation, and for shapes the driver path does not cover
(an empty ``IN`` list, column defaults, literal-execute parameters). Driver errors are raised as
SQLAlchemy's own (``sqlalchemy.exc.IntegrityError`` …), as ``Connection.execute``
would.

Example:
    >>> import sqlalchemy as sa
    >>> t = sa.table("t", sa.column("x"))
    >>> engine = sa.create_engine("sqlite://")
    >>> with engine.begin() as conn:
    ...     _ = conn.exec_driver_sql("CREATE TABLE t (x INTEGER)")
    ...     run(conn, sa.insert(t), [{"x": 1}, {"x": 2}])
    ...     [row.x for row in fetch(conn, sa.select(t.c.x).where(t.c.x > sa.bindparam("low")),
    ...                                {"low": 1})]
    [2]
"""

from __future__ import annotations

import collections
import dataclasses
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.sql import ClauseElement

from hy_memory_langgraph.store.db import deferred

__all__ = ["MAX_SHAPES", "ROWS_PER_INSERT", "fetch", "insert_returning", "run", "run_text"]

Params = Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class _Shape:
    """One statement compiled for the driver: SQL with ``IN`` placeholders to expand,
    where each positional parameter comes from, and how rows come back."""

    sql: str
    sources: tuple[tuple[str, bool, Any], ...]  # (name, expanding, constant or None)
    given: frozenset[str]
    processors: Mapping[str, Callable[[Any], Any]]
    row: type | None
    row_processors: tuple[Callable[[Any], Any] | None, ...]
    #: The values of a parameter set in one call, when every parameter is given as is.
    flat: Callable[[Params], tuple[Any, ...]] | None = None


#: Compiled shapes (and multi-row texts) kept; the store has a few dozen.
MAX_SHAPES = 1024
_SHAPES: dict[tuple[int, tuple[str, ...]], tuple[ClauseElement, _Shape | None]] = {}


def _compile(conn: Connection, stmt: ClauseElement, names: tuple[str, ...]) -> _Shape | None:
    """The driver shape of ``stmt`` called with parameters ``names``; ``None``: not
    covered (parameter names SQLAlchemy escapes, or a parameter it expects but is not given)."""
    column_keys = list(names) if isinstance(stmt, (sa.Insert, sa.Update)) else None
    compiled: Any = stmt.compile(dialect=conn.dialect, column_keys=column_keys)
    if (compiled.escaped_bind_names or compiled.positiontup is None or compiled.literal_execute_params
            or _fills_defaults(compiled)):
        return None
    sources = []
    for name in compiled.positiontup:
        bind = compiled.binds[name]
        if name not in names and (bind.required or bind.callable is not None):
            return None
        sources.append((name, bool(bind.expanding), None if name in names else bind.effective_value))
    result_columns = compiled._result_columns
    row = None
    row_processors: tuple[Callable[[Any], Any] | None, ...] = ()
    if result_columns:
        keys = [column[0] for column in result_columns]
        row = collections.namedtuple("Row", keys, rename=True)  # type: ignore[misc]
        row_processors = tuple(column[3]._cached_result_processor(conn.dialect, None)
                               for column in result_columns)
    processors = dict(compiled._bind_processors)
    return _Shape(str(compiled), tuple(sources), frozenset(names), processors, row,
                  row_processors, _flat(sources, processors, names))


def _flat(sources: list[tuple[str, bool, Any]], processors: Mapping[str, Any],
          names: tuple[str, ...]) -> Callable[[Params], tuple[Any, ...]] | None:
    """A getter of the positional values when each is a given parameter, unprocessed."""
    order = [name for name, _, _ in sources]
    if not order or any(expanding for _, expanding, _ in sources) \
            or any(n in processors or n not in names for n in order):
        return None
    if len(order) == 1:
        return lambda params: (params[order[0]],)
    return operator.itemgetter(*order)


def _fills_defaults(compiled: Any) -> bool:
    """Whether SQLAlchemy computes column defaults for the statement at execution."""
    return bool(getattr(compiled, "insert_prefetch", None) or getattr(compiled, "update_prefetch", None)
                or getattr(compiled, "postfetch", None))


def _driver_path(conn: Connection) -> bool:
    """Whether ``conn``'s statements may skip SQLAlchemy: SQLite, nobody listening to or
    logging statements, no schema translation."""
    return (conn.dialect.name == "sqlite" and not deferred.observed(conn)
            and not conn.get_execution_options().get("schema_translate_map"))


def _shape(conn: Connection, stmt: ClauseElement, params: Params) -> _Shape | None:
    if not _driver_path(conn):
        return None
    names = tuple(params)
    key = (id(stmt), names)
    cached = _SHAPES.get(key)
    if cached is None or cached[0] is not stmt:
        if len(_SHAPES) >= MAX_SHAPES:  # meant for statements built once; stay bounded anyway
            _SHAPES.clear()
        cached = _SHAPES[key] = (stmt, _compile(conn, stmt, names))
    return cached[1]


def _bound(shape: _Shape, params: Params) -> tuple[str, Sequence[Any]] | None:
    """SQL and positional values for one parameter set (``None``: an empty ``IN`` list)."""
    if shape.flat is not None:
        return shape.sql, shape.flat(params)
    sql, values = shape.sql, []
    for name, expanding, constant in shape.sources:
        value = params[name] if name in shape.given else constant
        process = shape.processors.get(name)
        if not expanding:
            values.append(process(value) if process is not None and value is not None else value)
            continue
        if not value:
            return None
        values.extend(process(v) if process is not None and v is not None else v for v in value)
        sql = sql.replace(f"__[POSTCOMPILE_{name}]", ", ".join("?" * len(value)), 1)
    return sql, values


def _rows(shape: _Shape, raw: list[tuple[Any, ...]]) -> list[Any]:
    assert shape.row is not None
    make, processors = shape.row._make, shape.row_processors  # type: ignore[attr-defined]
    if not any(processors):
        return [make(r) for r in raw]
    return [make(p(v) if p is not None and v is not None else v for p, v in zip(processors, r))
            for r in raw]


def _driver_error(conn: Connection, sql: str, values: Any, error: Exception) -> Exception:
    return sa.exc.DBAPIError.instance(sql, values, error, conn.dialect.loaded_dbapi.Error,
                                      dialect=conn.dialect)


def fetch(conn: Connection, stmt: ClauseElement, params: Params | None = None) -> list[Any]:
    """Rows of a ``SELECT`` (or a one-row ``… RETURNING``), each with attribute access."""
    params = params or {}
    shape = _shape(conn, stmt, params)
    bound = _bound(shape, params) if shape is not None and shape.row is not None else None
    if bound is None:
        return list(conn.execute(stmt, params))
    assert shape is not None
    driver = conn.connection.driver_connection
    error_class = conn.dialect.loaded_dbapi.Error
    try:
        raw = driver.execute(*bound).fetchall()
    except error_class as exc:
        raise _driver_error(conn, *bound, exc) from exc
    return _rows(shape, raw)


def run_text(conn: Connection, sql: str) -> None:
    """Run SQL text without parameters or rows (``BEGIN IMMEDIATE``): on the driver where
    statements may skip SQLAlchemy, else with ``Connection.exec_driver_sql``."""
    if not _driver_path(conn):
        conn.exec_driver_sql(sql)
        return
    try:
        conn.connection.driver_connection.execute(sql)
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _driver_error(conn, sql, (), exc) from exc


def _run_bound(shape: _Shape, rows: Sequence[Params]) -> list[tuple[str, Sequence[Any]]] | None:
    """SQL and values per row (``None``: a row the driver path does not cover)."""
    if shape.flat is not None:
        try:
            return [(shape.sql, values) for values in map(shape.flat, rows)]
        except KeyError:  # a row without a parameter the first one has: SQLAlchemy says which
            return None
    if any(set(r) != shape.given for r in rows):
        return None
    bound = [_bound(shape, row) for row in rows]
    return None if any(b is None for b in bound) else bound  # type: ignore[return-value]


def run(conn: Connection, stmt: ClauseElement, params: Params | Sequence[Params] | None = None) -> None:
    """Run a statement without results: once with a mapping, once per row with a list."""
    rows: Sequence[Params] = [params or {}] if params is None or isinstance(params, Mapping) else params
    if not rows:
        return
    shape = _shape(conn, stmt, rows[0])
    bound = _run_bound(shape, rows) if shape is not None and shape.row is None else None
    if bound is None:
        conn.execute(stmt, params)  # type: ignore[arg-type]
        return
    driver = conn.connection.driver_connection
    sql = bound[0][0]
    try:
        if len(bound) == 1:
            driver.execute(sql, bound[0][1])
        elif all(b[0] == sql for b in bound):
            driver.executemany(sql, [b[1] for b in bound])
        else:
            for b in bound:
                driver.execute(*b)
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _driver_error(conn, sql, [b[1] for b in bound], exc) from exc


def _values_group(sql: str, width: int) -> tuple[int, int] | None:
    """Start and end of the single ``VALUES (?, …)`` group of an ``INSERT`` of ``width`` columns."""
    group = "(" + ", ".join("?" * width) + ")"
    at = sql.find("VALUES " + group)
    if at < 0 or sql.count("?") != width:
        return None
    return at + len("VALUES "), at + len("VALUES ") + len(group)


def _many_values(shape: _Shape, count: int) -> str | None:
    """``shape``'s SQL with ``count`` value groups (``None``: not a plain one-group insert)."""
    key = (shape.sql, count)
    cached = _MANY_VALUES.get(key)
    if cached is None:
        span = _values_group(shape.sql, len(shape.sources))
        if span is None:
            return None
        if len(_MANY_VALUES) >= MAX_SHAPES:
            _MANY_VALUES.clear()
        group = shape.sql[span[0]:span[1]]
        cached = _MANY_VALUES[key] = shape.sql[:span[0]] + ", ".join([group] * count) + shape.sql[span[1]:]
    return cached


_MANY_VALUES: dict[tuple[str, int], str] = {}
#: Rows per multi-row ``INSERT`` (SQLite allows 32,766 parameters per statement).
ROWS_PER_INSERT = 500


def insert_returning(conn: Connection, stmt: ClauseElement, rows: Sequence[Params]) -> list[Any]:
    """The ``RETURNING`` rows of an ``INSERT … RETURNING`` of every row of ``rows``, in one
    multi-row statement per :data:`ROWS_PER_INSERT` rows (rows come back in no particular order)."""
    if not rows:
        return []
    shape = _shape(conn, stmt, rows[0])
    if (shape is None or shape.row is None or any(s[1] for s in shape.sources)
            or any(set(r) != shape.given for r in rows) or _many_values(shape, 1) is None):
        return list(conn.execute(stmt, list(rows)))
    driver = conn.connection.driver_connection
    error_class = conn.dialect.loaded_dbapi.Error
    out: list[tuple[Any, ...]] = []
    for start in range(0, len(rows), ROWS_PER_INSERT):
        part = rows[start:start + ROWS_PER_INSERT]
        sql = _many_values(shape, len(part))
        assert sql is not None
        values = [v for row in part for v in _bound(shape, row)[1]]  # type: ignore[index]
        try:
            out.extend(driver.execute(sql, values).fetchall())
        except error_class as exc:
            raise _driver_error(conn, sql, values, exc) from exc
    return _rows(shape, out)
