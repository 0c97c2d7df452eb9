"""SQLAlchemy engines for the stores: SQLite files or one PostgreSQL database.

A plain filesystem path becomes a SQLite database (parent directories are
created); anything containing ``"://"`` is taken as a SQLAlchemy URL. SQLite
connections get WAL mode, the store's busy timeout and foreign keys. Every wait on the
database is bounded by the store's timeout (:mod:`.timeouts`). A path that cannot hold a
database (a symbolic link loop, a directory, a FIFO or socket where the file should be)
is refused before anything is opened, with a :class:`StoreError` naming it and the fix.

On PostgreSQL every store lives in its own schema (``schema=``): the tables keep
their names and SQLAlchemy's ``schema_translate_map`` points them at the schema,
so the same Core statements serve every store. Stores of one process that name
the same server URL share one connection pool (reference counted).

Transactions:

* :func:`read_tx`: one consistent snapshot for the block (SQLite's read
  transaction; ``REPEATABLE READ READ ONLY`` on PostgreSQL).
* :func:`write_tx`: SQLite takes the write lock at ``BEGIN IMMEDIATE``;
  PostgreSQL takes a transaction-level advisory lock of the store's schema first,
  so the writers of one store commit one after another, in change-log order (a
  reader that sees change ``n`` has seen every change before it). The item store's
  own writes use ``write_tx(engine, scopes=...)`` instead: they lock only the scopes
  they change and take the log lock last (:mod:`.locks`), so writers of different
  users run side by side.

Example:
    >>> import tempfile, os
    >>> engine, local = create_store_engine(os.path.join(tempfile.mkdtemp(), "store.db"))
    >>> local.name
    'store.db'
    >>> release_engine(engine)
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import stat
import threading
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import StaticPool

from hy_memory_langgraph.config.parsing import symlink_loop
from hy_memory_langgraph.errors import (
    ConfigError,
    MissingExtraError,
    ReadOnlyStoreError,
    StoreCorruptionError,
    StoreError,
    StoreFullError,
)
from hy_memory_langgraph.store.db.locks import LOCK_OPTION, lock_log, lock_scopes, store_lock_key
from hy_memory_langgraph.store.db.timeouts import (
    DEFAULT_TIMEOUT_S,
    bound_server_engine,
    check_timeout,
    connect_args,
)
from hy_memory_langgraph.store.db.watchdog import Watchdog

#: SQLite: what begins a transaction, by the connection's ``_BEGIN_OPTION`` (``NONE``: each
#: statement is its own transaction, the driver being in autocommit).
_BEGIN_MODES = {"DEFERRED": "BEGIN DEFERRED", "IMMEDIATE": "BEGIN IMMEDIATE", "NONE": None}
_BEGIN_OPTION = "hy_begin"
#: Execution option marking an engine opened on a database this process may only read.
READ_ONLY_OPTION = "hy_read_only"
_ABSENT_OPTION = "hy_absent"
_FULL_OPTION = "hy_full"
_SCHEMA_RE = re.compile(r"[^a-z0-9_]+")
_SERVER_DIALECTS = ("postgresql",)

_shared_lock = threading.Lock()
_shared: dict[tuple[str, float], list[Any]] = {}  # (url, timeout) -> [base engine, references, watchdog]
_bases: dict[int, tuple[str, float]] = {}  # id(option engine) -> key of its shared base


def parse_url(text: str, *, setting: str = "the store URL") -> URL:
    """Parse a database URL; ``postgresql://`` means ``postgresql+psycopg://``.

    Raises:
        ConfigError: The URL is unparsable or names an unsupported database; the
            message names ``setting`` and what is accepted.
    """
    try:
        url = make_url(text)
    except ArgumentError as exc:
        raise ConfigError(
            f"{setting}={_hide(text)!r} is not a database URL ({exc}); expected e.g. "
            "postgresql+psycopg://user:password@host:5432/dbname"
        ) from None
    if url.drivername in ("postgres", "postgres+psycopg"):  # libpq's scheme name
        url = url.set(drivername="postgresql+psycopg")
    backend = url.get_backend_name()
    if backend not in ("sqlite", *_SERVER_DIALECTS):
        raise ConfigError(
            f"{setting} names a {backend!r} database; supported: postgresql+psycopg://… "
            "(or leave it unset for SQLite files under MEMORY_DATA_DIR)"
        )
    if backend == "postgresql":
        if url.get_driver_name() in ("", "psycopg2"):
            url = url.set(drivername="postgresql+psycopg")
        _require_psycopg(setting)
    return url


_DSN_PAIR = re.compile(r"^\s*[A-Za-z_]+\s*=")


def store_url(path: str | os.PathLike[str], *, setting: str = "the store URL") -> URL:
    """The URL of what a store is opened on: a SQLAlchemy or ``postgres://`` URL, a libpq
    DSN (``"host=... dbname=..."``), ``":memory:"`` (an in-memory SQLite database), or a
    SQLite file path.

    Example:
        >>> store_url(":memory:").render_as_string()
        'sqlite://'
        >>> store_url("dbname=mem host=/tmp user=me", setting="X").render_as_string(hide_password=False)
        'postgresql+psycopg://me@/mem?host=%2Ftmp'
    """
    text = os.fspath(path)
    if text == ":memory:":
        return URL.create("sqlite")
    if "://" in text:
        return parse_url(text, setting=setting)
    if _DSN_PAIR.match(text):
        return _dsn_url(text, setting)
    path = Path(os.path.abspath(Path(text).expanduser()))
    loop = symlink_loop(path)
    if loop is not None:
        raise StoreError(f"cannot open the database {path}: {loop} is a symbolic link that leads back "
                         "to itself (a loop); fix or remove that link, or point MEMORY_DATA_DIR (or the "
                         "store's path) elsewhere")
    return URL.create("sqlite", database=str(path.resolve()))


def _dsn_url(text: str, setting: str) -> URL:
    """A libpq ``key=value`` connection string as a ``postgresql+psycopg`` URL."""
    _require_psycopg(setting)
    from psycopg.conninfo import conninfo_to_dict

    try:
        params = {k: str(v) for k, v in conninfo_to_dict(text).items() if v is not None}
    except Exception as exc:  # noqa: BLE001 - psycopg raises ProgrammingError subclasses
        raise ConfigError(f"{setting}={_hide(text)!r} is not a libpq connection string ({exc}); "
                          "expected e.g. 'host=localhost port=5432 dbname=mem user=me'") from None
    port = params.pop("port", None)
    host = params.pop("host", None)
    if host is not None and (host.startswith("/") or "," in host):
        params["host"], host = host, None  # a socket directory or several hosts: libpq reads the query
    return URL.create("postgresql+psycopg", username=params.pop("user", None),
                      password=params.pop("password", None), host=host,
                      port=int(port) if port and port.isdigit() else None,
                      database=params.pop("dbname", None), query=params)


def _hide(text: str) -> str:
    return re.sub(r"://([^:/@]*):[^@]*@", r"://\1:***@", text)


def _require_psycopg(setting: str) -> None:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise MissingExtraError(
            f"{setting} points at PostgreSQL but the psycopg driver is not installed; "
            "run: pip install 'hy-memory-langgraph[postgres]'"
        ) from None


def schema_name(name: str) -> str:
    """A PostgreSQL schema name for a store name (lower case, ``[a-z0-9_]``, ≤ 63 chars).

    Example:
        >>> schema_name("Coding-Memory_cv")
        'coding_memory_cv'
    """
    cleaned = _SCHEMA_RE.sub("_", name.strip().lower()).strip("_")
    if not cleaned:
        raise ConfigError(f"store name {name!r} gives an empty schema name; use letters or digits")
    return cleaned[:63]


def schema_of(engine: Engine | Connection) -> str | None:
    """The schema the store's tables live in (``None`` on SQLite)."""
    translate = engine.get_execution_options().get("schema_translate_map") or {}
    return translate.get(None)


def create_store_engine(
    path: str | os.PathLike[str], *, schema: str | None = None, wal_autocheckpoint: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> tuple[Engine, Path | None]:
    """Create the engine for ``path`` and return it with the local database file.

    Args:
        path: A SQLite file path, or a SQLAlchemy URL (contains ``"://"``).
        schema: On PostgreSQL, the schema holding this store's tables (ignored on
            SQLite, where every store has its own file).
        wal_autocheckpoint: SQLite's ``wal_autocheckpoint`` for the engine's writable
            connections (``0``: they never checkpoint; someone else must, see
            :mod:`.wal`); ``None`` keeps SQLite's default of 1,000 pages.
        timeout_s: The longest wait on the database, in seconds (:mod:`.timeouts`).

    Returns:
        The engine (give it back with :func:`release_engine`), and the local SQLite
        file when there is one (``None`` for in-memory SQLite and server databases).
    """
    timeout_s = check_timeout(timeout_s)
    url = store_url(path)
    if url.get_backend_name() in _SERVER_DIALECTS:
        return _server_engine(url, schema_name(schema or "public"), timeout_s), None
    local = _local_sqlite_file(url)
    state = _file_state(local) if local is not None else "writable"
    if state == "absent":
        return absent_engine(f"cannot create the database {local}: its directory is read-only; "
                             "searches work, writes need a writable data dir"), None
    busy_ms = int(timeout_s * 1000)
    if local is not None and state == "writable":
        _create_private(local)
        _check_integrity(local, timeout_s)
    if state == "readonly":
        assert local is not None
        engine = sa.create_engine("sqlite://", creator=_read_only_connect(local, timeout_s),
                                  execution_options={READ_ONLY_OPTION: (
                                      f"{local} is read-only here (file, directory or file system): "
                                      "searches work, writes need a writable data dir")})
    else:
        engine = sa.create_engine(url, **_sqlite_kwargs(local, timeout_s))
    _install_sqlite_hooks(engine, busy_ms=busy_ms, readonly=state == "readonly", autocheckpoint=wal_autocheckpoint)
    return engine, local


def absent_engine(reason: str, *, full: bool = False) -> Engine:
    """An empty database in memory standing for one that does not exist and cannot be
    created (``reason`` says why: a read-only directory, ``full``: a full disk). Reads
    answer (with nothing); every write raises :func:`write_refusal`, so nothing is lost
    in memory."""
    options: dict[str, Any] = {READ_ONLY_OPTION: reason, _ABSENT_OPTION: True, _FULL_OPTION: full}
    engine = sa.create_engine("sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False},
                              execution_options=options)
    _install_sqlite_hooks(engine, busy_ms=0)
    return engine


def immutable_engine(file: Path, reason: str, timeout_s: float) -> Engine:
    """A read-only engine on ``file`` that takes no lock and needs no write-ahead log
    index (SQLite's ``immutable``), for a database the disk is too full to open otherwise
    (:mod:`.full_disk`). Every write raises :class:`StoreFullError` (``reason``)."""
    engine = sa.create_engine("sqlite://", creator=_read_only_connect(file, timeout_s, immutable=True),
                              execution_options={READ_ONLY_OPTION: reason, _FULL_OPTION: True})
    _install_sqlite_hooks(engine, busy_ms=int(timeout_s * 1000), readonly=True)
    return engine


def is_provisional(engine: Engine | Connection) -> bool:
    """Whether the engine stands in for a database that could not be opened as it is (not
    created, or a full disk): opening it again later may give the database itself."""
    options = engine.get_execution_options()
    return bool(options.get(_ABSENT_OPTION) or options.get(_FULL_OPTION))


def write_refusal(engine: Engine | Connection) -> StoreError | None:
    """The error a write on ``engine`` raises before it starts (``None``: writes may run):
    :class:`StoreFullError` for a database a full disk kept from being created, else
    :class:`ReadOnlyStoreError`."""
    reason = read_only_reason(engine)
    if reason is None:
        return None
    if engine.get_execution_options().get(_FULL_OPTION):
        return StoreFullError(reason)
    return ReadOnlyStoreError(reason)


def is_read_only(engine: Engine | Connection) -> bool:
    """Whether the engine was opened on a database this process may only read."""
    return bool(engine.get_execution_options().get(READ_ONLY_OPTION))


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK)


def _file_state(file: Path) -> str:
    """``"writable"``, ``"readonly"`` (an existing database we cannot write: file,
    directory or file system read-only) or ``"absent"`` (no database, and a read-only
    directory where it would be created).

    Raises:
        StoreError: a regular file stands where a directory of the path should be, or
            something other than a regular file (a directory, a FIFO, a socket) where the
            database should be.
    """
    try:
        mode: int | None = file.stat().st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise StoreError(
            f"cannot open the database {file}: it is {_kind(mode)}, not a database file; move it "
            f"aside (mv '{file}' '{file}.moved') or point MEMORY_DATA_DIR (or the store's path) elsewhere")
    if file.is_file():
        return "writable" if _writable(file) and _writable(file.parent) else "readonly"
    existing = next((p for p in (file.parent, *file.parent.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise StoreError(f"cannot create the database {file}: {existing} is a file, not a "
                         "directory; choose a data dir / path outside it")
    if existing is not None and not _writable(existing):
        return "absent"
    return "writable"


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, for a message."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def is_absent(engine: Engine | Connection) -> bool:
    """Whether the engine stands for a database that does not exist and cannot be
    created (an empty one in memory; see :func:`create_store_engine`)."""
    return bool(engine.get_execution_options().get(_ABSENT_OPTION))


def read_only_reason(engine: Engine | Connection) -> str | None:
    """Why the engine's database may only be read, or ``None``."""
    reason = engine.get_execution_options().get(READ_ONLY_OPTION)
    return str(reason) if reason else None


#: Largest database file whose pages are checked on open (``PRAGMA quick_check``: about
#: 5 ms per MB here); larger files are checked by SQLite as their pages are read.
INTEGRITY_CHECK_MAX_BYTES = 64 * 1024 * 1024


#: SQLite's primary result codes that mean a damaged file: SQLITE_CORRUPT, SQLITE_NOTADB.
_DAMAGED: Final = (11, 26)


def _check_integrity(file: Path, timeout_s: float) -> None:
    """Refuse a damaged database before anything is written into it.

    Raises:
        StoreCorruptionError: ``PRAGMA quick_check`` found damage (naming the file and the fix).
    """
    size = file.stat().st_size
    if size == 0 or size > INTEGRITY_CHECK_MAX_BYTES:
        return
    try:
        with contextlib.closing(sqlite3.connect(file, timeout=timeout_s)) as conn:
            verdict = str(conn.execute("PRAGMA quick_check(1)").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        if exc.sqlite_errorcode & 0xFF not in _DAMAGED:  # busy, full, I/O: opening says what
            return
        verdict = str(exc)
    if verdict != "ok":
        raise StoreCorruptionError(
            f"{file} is damaged ({' '.join(verdict.split())}): restore it from a backup, or move it aside and "
            "import an export (hy-memory export, then import) into a new data dir")


def _read_only_connect(file: Path, timeout_s: float, *, immutable: bool | None = None) -> Any:
    """A connection factory for a read-only database; ``immutable`` (default: when even
    the WAL index cannot be created beside it, a read-only directory or file system)."""
    immutable = not _writable(file.parent) if immutable is None else immutable

    def connect() -> sqlite3.Connection:
        query = "mode=ro" + ("&immutable=1" if immutable else "")
        return sqlite3.connect(f"file:{quote(str(file))}?{query}", uri=True,
                               timeout=timeout_s, check_same_thread=False)

    return connect


#: A pooled server connection idle longer than this is pinged before it is lent out.
IDLE_PING_S = 1.0


def _ping_after_idle(engine: Engine, watchdog: Watchdog) -> None:
    """Ping a pooled connection on checkout only when it sat idle for :data:`IDLE_PING_S`.

    A ping on every checkout (``pool_pre_ping``) costs each transaction a round trip; a
    connection in steady use is known alive. One that died anyway (a server restart
    within the second) fails its statement as a lost connection: the pool is then
    invalidated and an unguarded batch retried once (:meth:`HyMemoryStore.batch`).
    """

    @event.listens_for(engine, "connect")
    def _connected(dbapi_conn: Any, record: Any) -> None:
        record.info["hy_idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkin")
    def _returned(dbapi_conn: Any, record: Any) -> None:
        record.info["hy_idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _lent(dbapi_conn: Any, record: Any, proxy: Any) -> None:
        if time.monotonic() - record.info.get("hy_idle_since", 0.0) < IDLE_PING_S:
            return
        watchdog.arm(dbapi_conn)
        try:
            engine.dialect.do_ping(dbapi_conn)
        except Exception as exc:  # noqa: BLE001 - any failure: this connection is gone
            raise sa.exc.DisconnectionError(f"pooled connection is dead: {exc}") from exc
        finally:
            watchdog.disarm(dbapi_conn)


def _server_engine(url: URL, schema: str, timeout_s: float) -> Engine:
    key = (url.render_as_string(hide_password=False), timeout_s)
    with _shared_lock:
        entry = _shared.get(key)
        if entry is None:
            base = sa.create_engine(url, pool_size=4, max_overflow=12, pool_timeout=timeout_s,
                                    connect_args=connect_args(url, timeout_s))
            watchdog = bound_server_engine(base, timeout_s, url.render_as_string(hide_password=True))
            _ping_after_idle(base, watchdog)
            entry = _shared[key] = [base, 0, watchdog]
        entry[1] += 1
        engine = entry[0].execution_options(
            schema_translate_map={None: schema}, **{LOCK_OPTION: store_lock_key(schema)}
        )
        _bases[id(engine)] = key
    return engine


def release_engine(engine: Engine) -> None:
    """Give an engine back: SQLite engines are disposed, shared pools when unused."""
    with _shared_lock:
        key = _bases.pop(id(engine), None)
        if key is None:
            engine.dispose()
            return
        entry = _shared[key]
        entry[1] -= 1
        if entry[1] > 0:
            return
        del _shared[key]
    entry[0].dispose()
    entry[2].close()


def _create_private(file: Path) -> None:
    """Create the database file (and missing directories) readable by its owner only.

    SQLite gives its ``-wal`` / ``-shm`` files the database file's permissions. An
    existing file keeps the permissions it has.

    Raises:
        StoreError: the file cannot be created (the message names the path).
    """
    try:
        file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.close(os.open(file, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except PermissionError as exc:
        raise ReadOnlyStoreError(f"cannot create the database {file}: {exc.strerror}; "
                                 "choose a writable data dir") from exc
    except OSError as exc:
        raise StoreError(f"cannot create the database {file}: {exc.strerror or exc}; "
                         "choose another data dir / path") from exc


def _local_sqlite_file(url: URL) -> Path | None:
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database).expanduser().resolve()


def _sqlite_kwargs(local: Path | None, timeout_s: float) -> dict[str, Any]:
    arguments: dict[str, Any] = {"timeout": timeout_s, "check_same_thread": False}
    if local is None:
        # One shared connection, or every connection would see its own empty DB.
        return {"connect_args": arguments, "poolclass": StaticPool}
    return {"connect_args": arguments}


def _install_sqlite_hooks(engine: Engine, *, busy_ms: int, readonly: bool = False,
                          autocheckpoint: int | None = None) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see _on_begin)
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
            if not readonly:  # switching the journal mode is a write
                cursor.execute("PRAGMA journal_mode = WAL")
                if autocheckpoint is not None:
                    cursor.execute(f"PRAGMA wal_autocheckpoint = {int(autocheckpoint)}")
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA foreign_keys = ON")
            # deleted content is overwritten, not left readable in free pages
            cursor.execute("PRAGMA secure_delete = ON")
            # statement journals and sorts in memory: a multi-row write's journal otherwise
            # spills to a new file under /var/tmp in every add (created, unlinked, written)
            cursor.execute("PRAGMA temp_store = MEMORY")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        begin = _BEGIN_MODES[conn.get_execution_options().get(_BEGIN_OPTION, "DEFERRED")]
        if begin is not None:
            conn.exec_driver_sql(begin)  # SQLAlchemy's recipe for pysqlite


def checkpoint(engine: Engine) -> None:
    """Move a SQLite write-ahead log into the database and truncate it (erasure: the log
    still holds pages written before a delete). No-op on other databases."""
    if engine.dialect.name != "sqlite" or is_read_only(engine):
        return
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


@contextmanager
def read_tx(engine: Engine, *, single: bool = False) -> Iterator[Connection]:
    """A transaction for reads: one consistent snapshot for the whole block.

    ``single``: the statements of the block need no common snapshot (one statement, or
    reads of independent calls); they then run without ``BEGIN``/``COMMIT`` (on
    PostgreSQL in autocommit, two round trips fewer).
    """
    with engine.connect() as conn:
        if single and conn.dialect.name == "sqlite":
            conn.execution_options(**{_BEGIN_OPTION: "NONE"})
            yield conn
            return
        if conn.dialect.name == "postgresql":
            if single:
                conn.execution_options(isolation_level="AUTOCOMMIT", postgresql_readonly=True)
                yield conn
                return
            conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        with conn.begin():
            yield conn


@contextmanager
def write_tx(engine: Engine, *, schema_setup: bool = False, scopes: Collection[str] | None = None,
             single: bool = False) -> Iterator[Connection]:
    """A write transaction, serialised with the other writers of the same store.

    With ``scopes`` (PostgreSQL), only those scopes are locked, first thing in the
    transaction; the caller may lock more with :func:`~.locks.lock_scopes` when it gave
    none, and takes :func:`~.locks.lock_log` (or an append that takes it) before it
    touches the change log. With ``single`` (and ``scopes``) on PostgreSQL, each
    statement commits on its own: for blocks whose statements need no common
    transaction and no lock.

    Raises:
        ReadOnlyStoreError: the database may only be read (``schema_setup`` lets the
            tables of an absent database be created in memory).
    """
    refusal = write_refusal(engine)
    if refusal is not None and not (schema_setup and is_absent(engine)):
        raise refusal
    with engine.connect() as conn:
        if scopes is not None and conn.dialect.name == "postgresql":
            if single:
                conn.execution_options(isolation_level="AUTOCOMMIT")
                yield conn
                return
            with conn.begin():
                lock_scopes(conn, scopes)
                yield conn
            return
        conn.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
        with conn.begin():
            if scopes is None:
                lock_log(conn)
            yield conn
