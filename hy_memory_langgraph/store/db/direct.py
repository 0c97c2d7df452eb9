"""Run the store's prebuilt statements straight on the driver (SQLite and psycopg).

SQLAlchemy's execution path (cache lookup, parameter processing, result metadata,
events) costs several times what SQLite takes to run one of the small statements a
write is made of: replayed on the driver, the twelve statements of a lite chat ``add``
take about 0.3 ms, through ``Connection.execute`` well over 1 ms. On PostgreSQL it was
a quarter of the time a writer of grouped one-operation calls spent. The statements of
every write and point read are built once at module level; this module compiles each
once per shape (the parameter names, the length of each expanding ``IN`` list, the
schema the connection's ``schema_translate_map`` names) and runs it on the driver
connection of the caller's transaction, with the same bind and result processing
SQLAlchemy would apply. On PostgreSQL the statement is compiled with positional ``%s``
placeholders (psycopg's), its casts and schema written into the SQL.

``Connection.execute`` is used instead on other dialects and drivers, while anyone
listens to cursor events (statement counters, query-plan tests see every statement) or
the engine echoes statements, under a schema translation on SQLite, and for shapes the
driver path does not cover (an empty ``IN`` list, column defaults, literal-execute
parameters). Driver errors are raised as SQLAlchemy's own (``sqlalchemy.exc.IntegrityError``
…), a lost server connection invalidated, as ``Connection.execute`` would.

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
import copy
import dataclasses
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql import ClauseElement

from hy_memory_langgraph.store.db import deferred
from hy_memory_langgraph.store.db.driver import as_sqlalchemy_error, observed

__all__ = ["MAX_DIALECTS", "MAX_SHAPES", "ROWS_PER_INSERT", "fetch", "fetch_many", "insert_returning", "insert_text",
           "run", "run_text"]

Params = Mapping[str, Any]


@dataclasses.dataclass
class _Shape:
    """One statement compiled for the driver: SQL with ``IN`` placeholders to expand,
    where each positional parameter comes from, and how rows come back (the result
    processors are known once the driver has described a result: PostgreSQL's depend on
    the column types the server reports)."""

    sql: str
    #: (name, placeholder of one element when expanding else None, constant or None)
    sources: tuple[tuple[str, str | None, Any], ...]
    given: frozenset[str]
    processors: Mapping[str, Callable[[Any], Any]]
    row: type | None
    result_types: tuple[Any, ...]
    #: The placeholder of one value ("?" on SQLite, "%s" on PostgreSQL).
    mark: str
    #: The values of a parameter set in one call, when every parameter is given (each
    #: through its bind processor, if it has one) and none expands.
    flat: Callable[[Params], Sequence[Any]] | None = None
    row_processors: tuple[Callable[[Any], Any] | None, ...] | None = None


#: Compiled shapes (and multi-row texts) kept; the store has a few dozen.
MAX_SHAPES = 1024
_SHAPES: dict[tuple[Any, ...], tuple[ClauseElement, Dialect, _Shape | None]] = {}
#: PostgreSQL dialects with psycopg's positional paramstyle, per engine dialect (at most
#: ``MAX_DIALECTS`` kept).
MAX_DIALECTS = 64
_POSITIONAL: dict[int, tuple[Dialect, Dialect]] = {}


def _positional(dialect: Dialect) -> Dialect:
    """``dialect`` itself when its placeholders are positional, else a twin whose are
    (``%s``: what psycopg takes as well as its named style)."""
    if dialect.positional:
        return dialect
    cached = _POSITIONAL.get(id(dialect))
    if cached is None or cached[0] is not dialect:
        if len(_POSITIONAL) >= MAX_DIALECTS:  # engines come and go (tests, short-lived stores)
            _POSITIONAL.clear()
        twin = copy.copy(dialect)
        twin.paramstyle, twin.positional = "format", True
        cached = _POSITIONAL[id(dialect)] = (dialect, twin)
    return cached[1]


def _element(compiled: Any, bind: Any) -> str:
    """The placeholder SQLAlchemy writes for one element of an expanding parameter
    (with the element's cast where the dialect casts binds)."""
    one = compiled.bindtemplate % {"name": bind.key}
    impl = bind.type._unwrapped_dialect_impl(compiled.dialect)
    if getattr(compiled.dialect, "_bind_typing_render_casts", False) and impl.render_bind_cast:
        return str(compiled.render_bind_cast(bind.type, impl, one))
    return one


def _compile(conn: Connection, stmt: ClauseElement, names: tuple[str, ...],
             translate: Mapping[Any, Any] | None) -> _Shape | None:
    """The driver shape of ``stmt`` called with parameters ``names``; ``None``: not
    covered (parameter names SQLAlchemy escapes, or a parameter it expects but is not given)."""
    column_keys = list(names) if isinstance(stmt, (sa.Insert, sa.Update)) else None
    extra: dict[str, Any] = {"schema_translate_map": translate, "render_schema_translate": True} if translate else {}
    if isinstance(stmt, sa.Insert) and not stmt._returning:
        extra["for_executemany"] = True  # no implicit RETURNING of the new key: nobody reads it
    compiled: Any = stmt.compile(dialect=_positional(conn.dialect), column_keys=column_keys, **extra)
    if (compiled.escaped_bind_names or compiled.positiontup is None or compiled.literal_execute_params
            or _fills_defaults(compiled)):
        return None
    sources = []
    for name in compiled.positiontup:
        bind = compiled.binds[name]
        if name not in names and (bind.required or bind.callable is not None):
            return None
        sources.append((name, _element(compiled, bind) if bind.expanding else None,
                        None if name in names else bind.effective_value))
    result_columns = compiled._result_columns
    row = None
    if result_columns:
        keys = [column[0] for column in result_columns]
        row = collections.namedtuple("Row", keys, rename=True)  # type: ignore[misc]
    processors = dict(compiled._bind_processors)
    mark = "?" if compiled.dialect.paramstyle == "qmark" else "%s"
    return _Shape(str(compiled), tuple(sources), frozenset(names), processors, row,
                  tuple(column[3] for column in result_columns), mark, _flat(sources, processors, names))


def _flat(sources: list[tuple[str, str | None, Any]], processors: Mapping[str, Any],
          names: tuple[str, ...]) -> Callable[[Params], Sequence[Any]] | None:
    """A getter of the positional values when each is a given parameter (none expanding),
    bind processors applied to the values that are not ``None``."""
    order = [name for name, _, _ in sources]
    if not order or any(element is not None for _, element, _ in sources) or any(n not in names for n in order):
        return None
    get = operator.itemgetter(*order) if len(order) > 1 else (lambda params: (params[order[0]],))
    processed = [(i, processors[n]) for i, n in enumerate(order) if n in processors]
    if not processed:
        return get

    def get_processed(params: Params) -> list[Any]:
        values = list(get(params))
        for i, process in processed:
            if values[i] is not None:
                values[i] = process(values[i])
        return values

    return get_processed


def _fills_defaults(compiled: Any) -> bool:
    """Whether SQLAlchemy computes column defaults for the statement at execution."""
    return bool(getattr(compiled, "insert_prefetch", None) or getattr(compiled, "update_prefetch", None)
                or getattr(compiled, "postfetch", None))


def _translation(conn: Connection) -> Mapping[Any, Any] | None | bool:
    """The schema translation the driver path compiles in (``None``: none); ``False``:
    ``conn``'s statements may not skip SQLAlchemy (another dialect or driver, someone
    listening to or logging statements, a schema translation on SQLite)."""
    name = conn.dialect.name
    if (name != "sqlite" and conn.dialect.driver != "psycopg") or observed(conn):
        return False
    translate = conn.get_execution_options().get("schema_translate_map")
    if name == "sqlite":
        return False if translate else None
    return translate or None


def _shape(conn: Connection, stmt: ClauseElement, params: Params) -> _Shape | None:
    translate = _translation(conn)
    if translate is False:
        return None
    names = tuple(params)
    dialect = conn.dialect
    key = (id(stmt), names, id(dialect), tuple(translate.items()) if translate else None)
    cached = _SHAPES.get(key)
    if cached is None or cached[0] is not stmt or cached[1] is not dialect:
        if len(_SHAPES) >= MAX_SHAPES:  # meant for statements built once; stay bounded anyway
            _SHAPES.clear()
        cached = _SHAPES[key] = (stmt, dialect, _compile(conn, stmt, names, translate or None))
    return cached[2]


def _bound(shape: _Shape, params: Params) -> tuple[str, Sequence[Any]] | None:
    """SQL and positional values for one parameter set (``None``: an empty ``IN`` list)."""
    if shape.flat is not None:
        return shape.sql, shape.flat(params)
    sql, values = shape.sql, []
    for name, element, constant in shape.sources:
        value = params[name] if name in shape.given else constant
        process = shape.processors.get(name)
        if element is None:
            values.append(process(value) if process is not None and value is not None else value)
            continue
        if not value:
            return None
        values.extend(process(v) if process is not None and v is not None else v for v in value)
        sql = sql.replace(f"__[POSTCOMPILE_{name}]", ", ".join([element] * len(value)), 1)
    return sql, values


def _described(shape: _Shape, cursor: Any) -> Any:
    """The cursor's column description while ``shape``'s result processors are not known
    (psycopg builds one anew at each asking), else ``None``."""
    return cursor.description if shape.row_processors is None else None


def _rows(conn: Connection, shape: _Shape, described: Any, raw: list[tuple[Any, ...]]) -> list[Any]:
    """Rows with attribute access, values through SQLAlchemy's result processors (chosen
    on the first result, by the column types the driver ``described``)."""
    assert shape.row is not None
    processors = shape.row_processors
    if processors is None:
        codes = [column[1] for column in described] if described else []
        if len(codes) != len(shape.result_types):
            codes = [None] * len(shape.result_types)
        processors = shape.row_processors = tuple(
            kind._cached_result_processor(conn.dialect, code) for kind, code in zip(shape.result_types, codes))
    make = shape.row._make  # type: ignore[attr-defined]
    if not any(processors):
        return [make(r) for r in raw]
    return [make(p(v) if p is not None and v is not None else v for p, v in zip(processors, r))
            for r in raw]


def fetch(conn: Connection, stmt: ClauseElement, params: Params | None = None) -> list[Any]:
    """Rows of a ``SELECT`` (or a ``… RETURNING``), each with attribute access."""
    params = params or {}
    shape = _shape(conn, stmt, params)
    bound = _bound(shape, params) if shape is not None and shape.row is not None else None
    if bound is None:
        return list(conn.execute(stmt, params))
    assert shape is not None
    if _carries_opening(conn, shape):
        raw, described = deferred.run_owed(conn, [bound[0]], bound[1], describe=shape.row_processors is None)
        return _rows(conn, shape, described, raw)
    driver = conn.connection.driver_connection
    try:
        cursor = driver.execute(*bound)
        raw = cursor.fetchall()
    except conn.dialect.loaded_dbapi.Error as exc:
        raise as_sqlalchemy_error(conn, *bound, exc) from exc
    return _rows(conn, shape, _described(shape, cursor), raw)


def fetch_many(conn: Connection, requests: Sequence[tuple[ClauseElement, Params]]) -> list[list[Any]]:
    """The rows of each ``(statement, parameters)``, as :func:`fetch` gives them; on
    PostgreSQL in one round trip (psycopg's pipeline mode, values still bound by the
    server) when every statement takes the driver path. For reads without a shared
    transaction opening held back (:mod:`.deferred`)."""
    shapes = [_shape(conn, stmt, params) for stmt, params in requests]
    bound = [_bound(shape, params) if shape is not None and shape.row is not None else None
             for shape, (_, params) in zip(shapes, requests, strict=True)]
    if (len(requests) < 2 or any(b is None for b in bound) or any(s.mark != "%s" for s in shapes)  # type: ignore[union-attr]
            or not deferred.is_open(conn)):
        return [fetch(conn, stmt, params) for stmt, params in requests]
    driver = conn.connection.driver_connection
    try:
        with driver.pipeline():
            cursors = [driver.execute(*b) for b in bound]  # type: ignore[misc]
        results = [(cursor.fetchall(), _described(shape, cursor))  # type: ignore[arg-type]
                   for shape, cursor in zip(shapes, cursors, strict=True)]
    except conn.dialect.loaded_dbapi.Error as exc:
        raise as_sqlalchemy_error(conn, "; ".join(b[0] for b in bound), [b[1] for b in bound], exc) from exc  # type: ignore[index]
    return [_rows(conn, shape, described, raw)  # type: ignore[arg-type]
            for shape, (raw, described) in zip(shapes, results, strict=True)]


def _carries_opening(conn: Connection, shape: _Shape, carry: bool = True) -> bool:
    """Whether the statement of ``shape`` carries a transaction opening held back on
    ``conn`` in its round trip (:func:`.deferred.run_owed`, values then bound client
    side); ``False`` when there is none, or after sending it on its own where it cannot
    be carried (``carry`` false: several statements to send)."""
    if shape.mark != "%s" or deferred.is_open(conn):  # only PostgreSQL holds an opening back
        return False
    if not carry:
        deferred.send_opening(conn)
        return False
    return True


def run_text(conn: Connection, sql: str) -> None:
    """Run SQL text without parameters or rows (``BEGIN IMMEDIATE``): on the driver where
    statements may skip SQLAlchemy, else with ``Connection.exec_driver_sql``."""
    if _translation(conn) is False:
        conn.exec_driver_sql(sql)
        return
    if conn.dialect.name == "postgresql":
        sql = "; ".join([*deferred.opening(conn), sql])
    try:
        conn.connection.driver_connection.execute(sql)
    except conn.dialect.loaded_dbapi.Error as exc:
        raise as_sqlalchemy_error(conn, sql, (), exc) from exc


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


def _execute_many(driver: Any, sql: str, values: list[Sequence[Any]]) -> None:
    """One statement over several value sets (psycopg: on a cursor, pipelined)."""
    if hasattr(driver, "executemany"):  # sqlite3
        driver.executemany(sql, values)
        return
    cursor = driver.cursor()
    try:
        cursor.executemany(sql, values)
    finally:
        cursor.close()


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
    assert shape is not None
    if _carries_opening(conn, shape, carry=len(bound) == 1):
        deferred.run_owed(conn, [bound[0][0]], bound[0][1])
        return
    driver = conn.connection.driver_connection
    sql = bound[0][0]
    try:
        if len(bound) == 1:
            driver.execute(sql, bound[0][1])
        elif all(b[0] == sql for b in bound):
            _execute_many(driver, sql, [b[1] for b in bound])
        else:
            for b in bound:
                driver.execute(*b)
    except conn.dialect.loaded_dbapi.Error as exc:
        raise as_sqlalchemy_error(conn, sql, [b[1] for b in bound], exc) from exc


def _values_group(sql: str, mark: str, width: int) -> tuple[int, int] | None:
    """Start and end of the single ``VALUES (…)`` group of an ``INSERT`` of ``width``
    placeholders (``None``: not such an insert)."""
    at = sql.find("VALUES (")
    if at < 0 or sql.count(mark) != width or "%%" in sql:
        return None
    start = at + len("VALUES ")
    depth, quote = 0, ""
    for end in range(start, len(sql)):
        char = sql[end]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                group = sql[start:end + 1]
                return (start, end + 1) if group.count(mark) == width else None
    return None


def _many_values(shape: _Shape, count: int) -> str | None:
    """``shape``'s SQL with ``count`` value groups (``None``: not a plain one-group insert)."""
    key = (shape.sql, count)
    cached = _MANY_VALUES.get(key)
    if cached is None:
        span = _values_group(shape.sql, shape.mark, len(shape.sources))
        if span is None:
            return None
        if len(_MANY_VALUES) >= MAX_SHAPES:
            _MANY_VALUES.clear()
        group = shape.sql[span[0]:span[1]]
        cached = _MANY_VALUES[key] = shape.sql[:span[0]] + ", ".join([group] * count) + shape.sql[span[1]:]
    return cached


_MANY_VALUES: dict[tuple[str, int], str] = {}
#: Rows per multi-row ``INSERT`` (SQLite allows 32,766 parameters per statement,
#: PostgreSQL 65,535).
ROWS_PER_INSERT = 500


def insert_text(conn: Connection, stmt: ClauseElement, rows: Sequence[Params]) -> tuple[str, list[Any]] | None:
    """One multi-row ``INSERT`` of ``rows`` as SQL with ``%s`` placeholders and its values
    (for :func:`.deferred.defer`); ``None`` where the driver path does not cover it (not
    PostgreSQL, no rows, more than :data:`ROWS_PER_INSERT`, a shape it cannot batch)."""
    if not rows or len(rows) > ROWS_PER_INSERT:
        return None
    shape = _shape(conn, stmt, rows[0])
    if (shape is None or shape.mark != "%s" or shape.row is not None or any(s[1] is not None for s in shape.sources)
            or any(set(r) != shape.given for r in rows)):
        return None
    sql = _many_values(shape, len(rows))
    if sql is None:
        return None
    return sql, [v for row in rows for v in _bound(shape, row)[1]]  # type: ignore[index]


def insert_returning(conn: Connection, stmt: ClauseElement, rows: Sequence[Params]) -> list[Any]:
    """The ``RETURNING`` rows of an ``INSERT … RETURNING`` of every row of ``rows``, in one
    multi-row statement per :data:`ROWS_PER_INSERT` rows (rows come back in no particular order)."""
    if not rows:
        return []
    shape = _shape(conn, stmt, rows[0])
    if (shape is None or shape.row is None or any(s[1] is not None for s in shape.sources)
            or any(set(r) != shape.given for r in rows) or _many_values(shape, 1) is None):
        return list(conn.execute(stmt, list(rows)))
    driver = conn.connection.driver_connection
    out: list[tuple[Any, ...]] = []
    described = None
    carried = _carries_opening(conn, shape, carry=len(rows) <= ROWS_PER_INSERT)
    for start in range(0, len(rows), ROWS_PER_INSERT):
        part = rows[start:start + ROWS_PER_INSERT]
        sql = _many_values(shape, len(part))
        assert sql is not None
        values = [v for row in part for v in _bound(shape, row)[1]]  # type: ignore[index]
        if carried:
            raw, described = deferred.run_owed(conn, [sql], values, describe=shape.row_processors is None)
            out.extend(raw)
            continue
        try:
            cursor = driver.execute(sql, values)
            out.extend(cursor.fetchall())
            described = _described(shape, cursor)
        except conn.dialect.loaded_dbapi.Error as exc:
            raise as_sqlalchemy_error(conn, sql, values, exc) from exc
    return _rows(conn, shape, described, out)
