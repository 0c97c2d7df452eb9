"""HyMemoryStore: a langgraph ``BaseStore`` on SQLite or PostgreSQL with FAISS indexes.

See the package docstring of :mod:`hy_memory_langgraph.store` for the design.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import sqlalchemy as sa
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    IndexConfig,
    Op,
    Result,
    TTLConfig,
    ensure_embeddings,
)
from sqlalchemy.schema import CreateIndex

from hy_memory_langgraph.embedding_batch import EMBEDDING_OWNERS, embed_queries
from hy_memory_langgraph.errors import (
    ConfigError,
    ModelUnavailableError,
    ReadOnlyStoreError,
    StoreBusyError,
    StoreError,
    StoreFullError,
    StoreUnavailableError,
)
from hy_memory_langgraph.openmp import check_thread_count
from hy_memory_langgraph.store import namespaces
from hy_memory_langgraph.store.batch.coalesce import GROUPABLE, AsyncCoalescer, Coalescer
from hy_memory_langgraph.store.batch.guards import GuardOp
from hy_memory_langgraph.store.batch.plan import BatchPlan, plan_batch, tokenize_fields
from hy_memory_langgraph.store.batch.reads import run_key_search, run_search
from hy_memory_langgraph.store.batch.writes import Vectors, WriteResult, apply_writes
from hy_memory_langgraph.store.db import migrations
from hy_memory_langgraph.store.db.engine import (
    checkpoint,
    is_absent,
    is_provisional,
    is_read_only,
    parse_url,
    read_tx,
    release_engine,
    schema_of,
    store_url,
    write_refusal,
    write_tx,
)
from hy_memory_langgraph.store.db.faults import database_faults, translate
from hy_memory_langgraph.store.db.timeouts import DEFAULT_TIMEOUT_S
from hy_memory_langgraph.store.db.migrations import Migration
from hy_memory_langgraph.store.db.wal import (
    WRITER_CHECKPOINT_PAGES,
    WalCheckpointer,
)
from hy_memory_langgraph.store.postings import read as lexical_read
from hy_memory_langgraph.store.postings.ops import KeyHit, LexicalStatus
from hy_memory_langgraph.store.postings.read import TimeRange
from hy_memory_langgraph.store.schema.tables import (
    COMPONENT,
    MIGRATIONS,
    PG_VALUE_READER,
    items,
)
from hy_memory_langgraph.store.sql import statements as sql
from hy_memory_langgraph.store.sql.filters import compile_filter, parse_key
from hy_memory_langgraph.store.sql.json_fields import json_access, sqlite_field_index
from hy_memory_langgraph.store.ttl import DEFAULT_SWEEP_MINUTES, TTLSweeper
from hy_memory_langgraph.store.vector.cache import IndexCache, shared_index_cache
from hy_memory_langgraph.store.vector.settings import METRICS, ApproximateSearch

if TYPE_CHECKING:
    from hy_memory_langgraph.store.vector.scoped import ScopedIndex

log = logging.getLogger(__name__)
T = TypeVar("T")
#: SQLite: the names of a table's indexes (the inspector warns about expression indexes).
_SQLITE_INDEXES = sa.text("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = :table")


def _faults(method: Callable[..., T]) -> Callable[..., T]:
    """Driver errors of a store method raised as our errors naming the database."""

    @functools.wraps(method)
    def wrapper(self: HyMemoryStore, *args: Any, **kwargs: Any) -> T:
        with database_faults(self._where):
            return method(self, *args, **kwargs)

    return wrapper


def _one_statement(plan: BatchPlan, get_requests: Sequence[Any]) -> bool:
    """Whether each read of ``plan`` is one statement that needs no snapshot shared with
    the others: gets, listings and searches without a query (a ranked search also reads
    the change log), one of them or the independent calls of a group; or gets that one
    statement answers (``get_requests``: few keys of few namespaces, :func:`~.sql.keys_requests`)."""
    if len(plan.gets) > 1 and not (plan.lists or plan.searches or plan.grouped):
        return len(get_requests) == 1
    reads = len(plan.gets) + len(plan.lists) + len(plan.searches)
    return (reads == 1 or plan.grouped) and not any(op.query for _, op, _ in plan.searches)


class HyMemoryStore(BaseStore):
    """Persistent langgraph store: SQLite or PostgreSQL + per-scope FAISS indexes.

    The database is the source of truth for items *and* vectors. Each store
    object keeps FAISS indexes only for the scopes (first two namespace
    labels) it searches (exact, or approximate for a scope of at least
    ``approximate.min_vectors`` vectors), loaded lazily and evicted least
    recently used under the cache budget (``MEMORY_INDEX_CACHE_MB``). Several store objects or
    processes may share one database: each replays the ``hy_store_changes`` log
    before a search, so a write through one is seen by the next search of any.
    Tables are created and migrated on open (see :mod:`.migrations`).

    Args:
        path: SQLite file path (parent dirs are created) or SQLAlchemy URL
            (``postgresql+psycopg://…``).
        schema: On PostgreSQL, the schema holding this store's tables (default
            ``public``); see :meth:`from_url`.
        index: langgraph ``IndexConfig`` (``dims``, ``embed``, ``fields``) to
            enable semantic search; ``None`` for a plain key/value store.
        ttl: langgraph ``TTLConfig`` (``default_ttl`` minutes, ``refresh_on_read``,
            ``sweep_interval_minutes``).
        changelog_retention: Change-log rows kept; store objects further behind
            reload their cached scopes instead of replaying.
        search_threads: OpenMP threads FAISS may use for one search (``None``:
            the OpenMP default, one per core). It is set for the searching thread
            only and restored afterwards, so other threads and stores are neither
            affected nor serialised (one store object still runs one batch at a
            time). See "Threads" in the README.
        index_cache: The scope-index cache (default: the process-wide one).
        filter_fields: Value fields (dotted keys, ``"meta.kind"``) that search filters
            often test for equality with a string. SQLite gives each an expression index
            (created on open), so a selective filter costs about what its matches cost
            instead of reading every value of the namespace. PostgreSQL needs none:
            its GIN index over all values serves every field.
        approximate: When a scope's index becomes an IVF index that ranks only the
            lists nearest the query (recall@10 0.98 on 28k e5 vectors of real text with
            the defaults; see docs/benchmarks.md); restricted searches over few or a
            small share of candidates stay exact. ``None`` or ``min_vectors=0``: always
            exact.
        timeout_s: The longest wait on the database, in seconds (default 30; the
            client's ``MEMORY_DB_TIMEOUT_S``): another writer's lock, connecting to a
            server, a statement, a server that stopped answering. Then a
            :class:`~hy_memory_langgraph.errors.StoreBusyError` or
            :class:`~hy_memory_langgraph.errors.StoreUnavailableError` naming the database.

    Raises:
        ConfigError: An argument is out of range (the message names it).

    Example:
        >>> from hy_memory_langgraph.testing import HashingEmbeddings
        >>> import tempfile, os
        >>> db = os.path.join(tempfile.mkdtemp(), "memory.db")
        >>> with HyMemoryStore(db, index={"dims": 64, "embed": HashingEmbeddings(64)}) as store:
        ...     store.put(("users", "1"), "pref", {"text": "likes green tea"})
        ...     [item.key for item in store.search(("users",), query="tea")]
        ['pref']
    """

    supports_ttl = True
    #: Search filters may hold a top-level ``$or`` (capability read by the repositories).
    supports_or_filters = True
    #: Re-putting an item replaces all its vectors; ``index=False`` drops them.
    replaces_vectors_on_put = True
    #: ``GuardOp`` in a batch: the writes happen only if the guarded items are as read.
    supports_guards = True
    #: A search without a query lists items most recently updated first.
    lists_newest_first = True
    #: ``LexicalOp`` in a batch and :meth:`lexical_search`: BM25 postings kept in the
    #: database (see :mod:`.postings.ops`); :meth:`vector_search_keys` ranks without values.
    supports_lexical_index = True
    #: The tables' migration history (LangGraph's stores name theirs the same way).
    MIGRATIONS: ClassVar[Sequence[Migration]] = MIGRATIONS

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        schema: str | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        changelog_retention: int = 100_000,
        search_threads: int | None = 1,
        index_cache: IndexCache | None = None,
        filter_fields: Sequence[str] = (),
        approximate: ApproximateSearch | None = ApproximateSearch(),
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        if changelog_retention < 1:
            raise ConfigError("changelog_retention must be at least 1")
        search_threads = check_thread_count(search_threads, "search_threads")
        self.ttl_config = ttl
        self.index_config, self.embeddings, fields = _index_setup(index)
        self._fields = fields
        self._retention = changelog_retention
        self._lock = threading.RLock()
        # grouped calls are independent: their one-statement reads need no common snapshot
        self._group = Coalescer(functools.partial(self._batch_alone, grouped=True))
        self._agroup = AsyncCoalescer(functools.partial(self._abatch_alone, grouped=True))
        self._closed = False
        self._sweeper: TTLSweeper | None = None
        self._where = store_url(path).render_as_string(hide_password=True)
        self._timeout_s = timeout_s
        with database_faults(self._where):
            self._engine, self._local_file = migrations.open_database(
                path, COMPONENT, self.MIGRATIONS, schema=schema, wal_autocheckpoint=WRITER_CHECKPOINT_PAGES,
                timeout_s=timeout_s)
        self._checkpointer = (WalCheckpointer(self._engine)
                              if self._local_file is not None and not is_read_only(self._engine) else None)
        try:
            self._json_guarded = False
            cache = shared_index_cache() if index_cache is None else index_cache
            with database_faults(self._where):
                self._scoped = self._open(search_threads, cache, approximate)
            self._filter_fields = self._declare_fields(filter_fields)
            self._json = json_access(self._engine.dialect.name, items.c.value, indexed_reader=self._value_reader(),
                                     indexed_fields=self._filter_fields)
        except BaseException:
            release_engine(self._engine)
            raise

    @classmethod
    def from_url(cls, url: str, *, name: str, setting: str = "MEMORY_DB_URL",
                 **kwargs: Any) -> HyMemoryStore:
        """Open the store called ``name`` in the database at ``url``.

        On PostgreSQL its tables live in the schema ``name`` (lower-cased), so many
        stores share one database; a SQLite URL is one file per store.

        Args:
            url: ``postgresql+psycopg://user:password@host:5432/db`` (or a SQLite URL).
            name: The store name, e.g. ``"coding_memory_cv"``.
            setting: The setting named in errors about the URL.
            **kwargs: Other :class:`HyMemoryStore` arguments (``index``, ``ttl``…).

        Raises:
            ConfigError: The URL is invalid or its driver is not installed.
        """
        parse_url(url, setting=setting)
        return cls(url, schema=name, **kwargs)

    @classmethod
    def from_conn_string(cls, conn_string: str, *, index: IndexConfig | None = None,
                         ttl: TTLConfig | None = None, pipeline: bool = False,
                         pool_config: Mapping[str, Any] | None = None, **kwargs: Any) -> HyMemoryStore:
        """Open a store the way LangGraph's ``SqliteStore`` / ``PostgresStore`` are opened.

        ``conn_string`` is a SQLite file path, ``":memory:"``, a SQLAlchemy or
        ``postgres://`` URL, or a libpq DSN (``"host=... dbname=..."``). The store is
        its own context manager, sync and async, closed on exit::

            with HyMemoryStore.from_conn_string("memory.db") as store:
                store.setup()

        Args:
            conn_string: Where the store lives.
            index: LangGraph's index config (``dims``, ``embed``, ``fields`` or
                ``text_fields``).
            ttl: LangGraph's TTL config.
            pipeline: ``PostgresStore``'s psycopg pipeline switch, accepted so its
                callers run unchanged: a batch already runs its statements together.
            pool_config: ``PostgresStore``'s pool settings, accepted likewise: the
                store keeps its own SQLAlchemy pool.
            **kwargs: Other :class:`HyMemoryStore` arguments (``schema``, ...).
        """
        del pipeline, pool_config
        return cls(conn_string, index=index, ttl=ttl, **kwargs)

    def setup(self) -> None:
        """Create or migrate the tables (done on open already; safe to repeat)."""
        self._setup()

    async def asetup(self) -> None:
        """Async twin of :meth:`setup`."""
        await asyncio.get_running_loop().run_in_executor(None, self._setup)

    # The sync work behind setup, the sweep and stopping the sweeper, which
    # AsyncHyMemoryStore turns into coroutines under the same public names.

    def _setup(self) -> None:
        with self._lock:
            self._check_open()
            with database_faults(self._where):
                migrations.setup(self._engine, COMPONENT, self.MIGRATIONS)

    # ------------------------------------------------------------ lifecycle

    def _open(self, search_threads: int | None, cache: IndexCache,
              approximate: ApproximateSearch | None) -> ScopedIndex | None:
        dims = self.index_config["dims"] if self.index_config else None
        defaults = {"store_uid": uuid.uuid4().hex, **({"dims": str(dims)} if dims is not None else {})}
        with read_tx(self._engine) as conn:  # written once: opening later takes no write lock
            stored = {key: sql.get_meta(conn, key) for key in defaults}
        missing = [key for key, value in stored.items() if value is None]
        if missing and (not self.read_only or is_absent(self._engine)):  # read-only: not even defaults
            with write_tx(self._engine, schema_setup=True) as conn:
                for key in missing:
                    stored[key] = sql.set_meta_default(conn, key, defaults[key])
        if dims is not None and stored["dims"] is not None and int(stored["dims"]) != dims:
            raise ConfigError(
                f"{self.url}: this database holds {stored['dims']}-dim vectors but the index "
                f"config says dims={dims}; open it with the embedding model it was "
                "written with (e.g. HY_MEMORY_EMBEDDING_MODEL=local for the embedded "
                "e5), or use another path/data_dir")
        if dims is None:
            return None
        # The vector side (NumPy, FAISS) loads here, with the first store opened with an
        # index: a store without one plans, reads and writes without it.
        from hy_memory_langgraph.store.vector.scoped import ScopedIndex

        metric = self.index_config.get("distance_type", "cosine") if self.index_config else "cosine"
        beside_file = (self._local_file.with_name(self._local_file.name + ".ann")
                       if self._local_file is not None else None)
        with read_tx(self._engine) as conn:
            scoped = ScopedIndex(dims, cache, search_threads=search_threads, metric=metric, approximate=approximate,
                                 snapshot_dir=beside_file, store_uid=stored["store_uid"])
            scoped.open(conn)
        return scoped

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def url(self) -> str:
        """The database URL (password hidden)."""
        return self._engine.url.render_as_string(hide_password=True)

    def close(self) -> None:
        """Stop the sweeper, drop the cached indexes, release connections (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._stop_sweeper()
            if self._checkpointer is not None:
                self._checkpointer.close()
            if self._scoped is not None:
                self._scoped.close()
        finally:
            release_engine(self._engine)

    def __enter__(self) -> HyMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def aclose(self) -> None:
        """Async twin of :meth:`close`."""
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    async def __aenter__(self) -> HyMemoryStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("HyMemoryStore is closed")

    @property
    def read_only(self) -> bool:
        """Whether this store was opened on a database it may only read."""
        return is_read_only(self._engine)

    @property
    def index_cache(self) -> IndexCache | None:
        """The cache holding this store's scope indexes (``None`` without an index)."""
        return self._scoped.cache if self._scoped is not None else None

    @property
    def provisional(self) -> bool:
        """Whether this store stands in for a database that could not be opened as it is:
        one that does not exist and could not be created (a read-only directory, a full
        disk: it reads as empty), or one a full disk leaves only readable. It refuses
        writes; opening it again later may give the database itself."""
        return is_provisional(self._engine)

    @_faults
    def flush_erasure(self) -> None:
        """Leave no trace of deleted items in local files: fold the SQLite write-ahead
        log into the database, whose deleted pages are zeroed (``secure_delete``), and
        truncate the log. The store does this itself after every write that removes
        items (deletes, ``put(None)``, TTL sweeps), and drops the saved approximate
        indexes of the scopes they were removed from; no-op on server databases."""
        with self._lock:
            self._check_open()
            checkpoint(self._engine)

    # ------------------------------------------------------------ batch API

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute ops synchronously (reads see the state before this batch's writes).

        A one-operation batch (what ``put``, ``get``, ``search``... make) that arrives
        while another runs waits and runs together with the others that waited, in one
        transaction (:mod:`.batch.coalesce`); each caller still gets its own result or error.

        Raises:
            StoreError: a subclass naming the database and the fix (full, damaged,
                read-only, busy, unreachable); a batch without guards that met a lost
                server connection was retried once first.
        """
        ops = list(ops)
        if _groupable(ops):
            return [self._group.call(ops[0])]
        return self._batch_alone(ops)

    def _batch_alone(self, ops: list[Op], *, grouped: bool = False) -> list[Result]:
        """:meth:`batch` of these ops (``grouped``: one-operation calls of several callers)."""
        plan = self._plan(ops, grouped)
        texts, queries = plan.texts(), plan.queries()
        if self.embeddings is None:
            return self._run(ops, plan, {}, {})
        return self._run(ops, plan, self._vectors(texts, self.embeddings.embed_documents(texts) if texts else []),
                         self._vectors(queries, embed_queries(self.embeddings, queries)))

    def _run(self, ops: list[Op], plan: BatchPlan, text_vectors: Vectors, query_vectors: Vectors) -> list[Result]:
        """Execute ``plan``; planned again (as ``ops``) for a retry: after a value that is
        not JSON, and once after a lost connection when :meth:`_retryable` and the loss came
        before the timeout (a server that restarted; one that stopped answering already took
        the whole wait, and a second one would double it)."""
        for attempt in (1, 2):
            started = time.monotonic()
            try:
                with database_faults(self._where):
                    try:
                        return self._execute(plan, text_vectors, query_vectors)
                    except sa.exc.DBAPIError as exc:
                        if not self._guard_json(exc):
                            raise
                        plan = self._plan(ops, plan.grouped)  # the read failed first: nothing was written
                        return self._execute(plan, text_vectors, query_vectors)
            except StoreUnavailableError:
                if attempt == 2 or not self._retryable(ops) or time.monotonic() - started >= self._timeout_s:
                    raise
                log.warning("%s: the connection was lost; retrying the batch once", self._where)
                plan = self._plan(ops, plan.grouped)
        raise AssertionError("unreachable")

    def _retryable(self, ops: list[Op]) -> bool:
        """A batch that may run again after a lost connection: on a server, and without
        guards (puts and deletes of fixed values are idempotent; a guarded change that
        committed before the loss would fail its guard the second time)."""
        return self._engine.dialect.name == "postgresql" and not any(isinstance(op, GuardOp) for op in ops)

    def _guard_json(self, exc: sa.exc.DBAPIError) -> bool:
        """After the database met a value that is not JSON: filter with damaged rows read
        as ``{}`` from now on (``True``: retry), else ``False``."""
        text = str(exc.orig)
        if self._json_guarded or ("malformed JSON" not in text and "invalid input syntax for type json" not in text):
            return False
        log.warning("%s holds an item that is not valid JSON; filters skip such items from now on", self._where)
        reader = self._value_reader()  # made with the tables: it reads a damaged value as {}
        self._json = json_access(self._engine.dialect.name, items.c.value, guarded=True, reader=reader,
                                 indexed_reader=reader, indexed_fields=self._filter_fields)
        self._json_guarded = True
        return True

    def _declare_fields(self, fields: Sequence[str]) -> frozenset[tuple[str, ...]]:
        """Validate ``filter_fields``; on SQLite, create their indexes (a read-only store
        uses what exists: the narrowing test is right with or without its index)."""
        if isinstance(fields, str):
            raise ConfigError(f"filter_fields={fields!r} must be a list of field names, e.g. [{fields!r}]")
        paths = frozenset(parse_key(field) for field in fields)
        if not paths or self._engine.dialect.name != "sqlite" or self.read_only:
            return paths
        with database_faults(self._where):
            with read_tx(self._engine) as conn:  # created once: opening later takes no write lock
                present = set(conn.execute(_SQLITE_INDEXES, {"table": items.name}).scalars())
            wanted = [sqlite_field_index(items.name, path) for path in sorted(paths)]
            missing = [index for index in wanted if index.name not in present]
            if missing:
                with write_tx(self._engine, schema_setup=True) as conn:
                    for index in missing:
                        conn.execute(CreateIndex(index, if_not_exists=True))
        return paths

    def _value_reader(self) -> str | None:
        """PostgreSQL: the function the value index reads through (made with the tables)."""
        if self._engine.dialect.name != "postgresql":
            return None
        return f"{schema_of(self._engine) or 'public'}.{PG_VALUE_READER}"

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async ``batch``: embeds with ``aembed_*``, runs SQL/FAISS in a worker thread."""
        ops = list(ops)
        if _groupable(ops):
            return [await self._agroup.call(ops[0])]
        return await self._abatch_alone(ops)

    async def _abatch_alone(self, ops: list[Op], *, grouped: bool = False) -> list[Result]:
        """:meth:`abatch` of these ops (``grouped``: one-operation calls of several callers)."""
        plan = self._plan(ops, grouped)
        texts, queries = plan.texts(), plan.queries()
        text_vectors: Vectors = {}
        query_vectors: Vectors = {}
        if self.embeddings is not None:
            text_vectors = self._vectors(texts, await self.embeddings.aembed_documents(texts) if texts else [])
            query_vectors = self._vectors(queries, list(await asyncio.gather(
                *(self.embeddings.aembed_query(q) for q in queries))))
        return await asyncio.get_running_loop().run_in_executor(None, self._run, ops, plan, text_vectors,
                                                                query_vectors)

    def _plan(self, ops: Iterable[Op], grouped: bool) -> BatchPlan:
        self._check_open()
        default_ttl = self.ttl_config.get("default_ttl") if self.ttl_config else None
        plan = plan_batch(
            ops,
            fields=self._fields,
            compile_filter=lambda f: compile_filter(f, self._json),
            default_ttl=default_ttl,
            forbid_nul=self._engine.dialect.name == "postgresql",
        )
        plan.grouped = grouped
        return plan

    def _vectors(self, texts: list[str], vectors: list[list[float]]) -> Vectors:
        import numpy as np  # a store with an index: its ScopedIndex loaded NumPy already

        if len(vectors) != len(texts):
            raise StoreError(f"embedding returned {len(vectors)} vectors for {len(texts)} texts")
        out: Vectors = {}
        dims = self.index_config["dims"] if self.index_config else 0
        for text, vector in zip(texts, vectors, strict=True):
            array = np.asarray(vector, dtype=np.float32)
            if array.shape != (dims,):
                raise ConfigError(f"embedding returned a {array.shape} vector; index dims is {dims}")
            if not np.isfinite(array).all() or not array.any():
                raise ModelUnavailableError(
                    f"the embedding model returned a vector of NaN, infinite or only zero values for "
                    f"{text[:40]!r}: nothing was stored or searched; check the model "
                    "(HY_MEMORY_EMBEDDING_MODEL, its server) and retry")
            out[text] = array
        return out

    def _execute(self, plan: BatchPlan, text_vectors: Vectors, query_vectors: Vectors) -> list[Result]:
        with self._lock:
            self._check_open()
            now = sql.now_us()
            refusal = write_refusal(self._engine) if plan.has_writes else None
            if refusal is not None:
                raise refusal
            ttl_ids = self._read(plan, query_vectors, now) if plan.has_reads else []
            if (plan.has_writes or ttl_ids or plan.guards) and not self.read_only:
                self._write(plan, text_vectors, ttl_ids, now)
        return plan.results

    def _visible_after(self, now: int) -> int:
        """Reads see the items expiring after this time: ``now``, or every row not yet
        swept under ``ttl={"omit_expired": False}`` (LangGraph's option; unset, an
        expired item is hidden at once, so an erased or lapsed memory never resurfaces)."""
        if self.ttl_config and self.ttl_config.get("omit_expired") is False:
            return sql.EVERY_ROW
        return now

    def _read(self, plan: BatchPlan, query_vectors: Vectors, now: int) -> list[int]:
        now = self._visible_after(now)
        ttl_ids: list[int] = []
        results = plan.results
        pairs = [(namespaces.encode(op.namespace), op.key) for _, op in plan.gets]
        get_requests = sql.keys_requests(pairs, now)  # made once: for the test and the read
        with read_tx(self._engine, single=_one_statement(plan, get_requests)) as conn:
            if self._scoped is not None and any(op.query for _, op, _ in plan.searches):
                self._scoped.catch_up(conn, now)
            if plan.gets:
                rows = sql.fetch_requested(conn, get_requests, pairs)
                for (i, op), pair in zip(plan.gets, pairs, strict=True):
                    row = rows.get(pair)
                    results[i] = sql.row_to_item(row) if row is not None else None
                    if row is not None and op.refresh_ttl and row.ttl_minutes is not None:
                        ttl_ids.append(row.id)
            for i, op, where in plan.searches:
                outcome = run_search(conn, op, where, now, self._scoped, query_vectors.get(op.query or ""))
                results[i] = outcome.items
                if op.refresh_ttl:
                    ttl_ids.extend(outcome.ttl_ids)
            for i, op in plan.lists:
                prefix = namespaces.encode(namespaces.literal_prefix(op.match_conditions))
                results[i] = namespaces.list_namespaces(sql.live_namespaces(conn, now, prefix), op)
        return ttl_ids

    def _write(self, plan: BatchPlan, text_vectors: Vectors, ttl_ids: list[int], now: int) -> None:
        if not (plan.has_writes or plan.guards):  # only TTL refreshes of rows the batch read
            try:
                with write_tx(self._engine, scopes=(), single=True) as conn:
                    sql.refresh_ttl(conn, ttl_ids, now)
            except sa.exc.DBAPIError as exc:  # the read answered: its side effect may not fail it
                if not self._cannot_write_now(exc):
                    raise
                log.warning("%s: the TTL of %d items read was not refreshed (%s)", self._where, len(ttl_ids),
                            exc.orig)
                return
            self._after_write(WriteResult(seqs=[], local={}), now)
            return
        with write_tx(self._engine, scopes=plan.scopes()) as conn:
            written = apply_writes(conn, plan, text_vectors, ttl_ids, now, self._retention)
        self._after_write(written, now)

    def _after_write(self, written: WriteResult, now: int) -> None:
        if written.prune_upto is not None:  # every PRUNE_EVERY log rows, its own transaction
            with write_tx(self._engine) as conn:
                sql.prune_changes(conn, written.prune_upto)
        if written.removed_scopes:
            self._erased()
        elif self._checkpointer is not None:
            self._checkpointer.written()
        if self._scoped is None or not written.seqs:
            return
        if written.removed_scopes:  # erasure: no saved index keeps a removed item's vectors
            self._scoped.discard_snapshots(written.removed_scopes)
        if self._scoped.advance(written.seqs, written.local):  # nobody wrote in between
            return
        if self._scoped.defer(written.seqs, written.local):  # others' changes: at the next search
            return
        with read_tx(self._engine) as conn:
            self._scoped.catch_up(conn, now, local=written.local, mine=set(written.seqs))

    # ------------------------------------------------------------ ranked keys

    @_faults
    def lexical_status(self, namespace: tuple[str, ...]) -> LexicalStatus:
        """What the lexical index holds for ``namespace`` (see :class:`LexicalStatus`)."""
        return self._lexical_read(namespaces.encode(namespace), lexical_read.lexical_status)

    @_faults
    def lexical_search(self, namespace: tuple[str, ...], terms: Mapping[str, float], *, limit: int,
                       k1: float, b: float, ts_range: TimeRange | None = None) -> list[KeyHit]:
        """BM25 over the lexical documents of exactly ``namespace``, best first.

        Reads only the postings of ``terms`` (weighted query terms, e.g. a query's
        token counts) and the namespace's statistics; ``ts_range`` keeps documents
        whose ``ts`` lies within it before the top ``limit`` is taken. Ties go by key.
        """
        return self._lexical_read(namespaces.encode(namespace), functools.partial(
            lexical_read.lexical_search, weights=terms, limit=limit, k1=k1, b=b, ts_range=ts_range))

    @_faults
    def vector_search_keys(self, namespace: tuple[str, ...], query: str, *, limit: int,
                           ts_range: TimeRange | None = None) -> list[KeyHit]:
        """The ``limit`` items of exactly ``namespace`` nearest to ``query``: keys, cosine
        scores and lexical-document times, no values read.

        With ``ts_range``, only items whose lexical document's ``ts`` lies within it
        are ranked (exact: the candidates are fixed first).

        Raises:
            StoreError: The store has no vector index.
        """
        if self.embeddings is None:
            raise StoreError("vector_search_keys needs a store opened with an index config")
        self._check_open()
        vector = self._vectors([query], [self.embeddings.embed_query(query)])[query]
        encoded = namespaces.encode(namespace)
        with self._lock:
            self._check_open()
            now = sql.now_us()
            with read_tx(self._engine) as conn:
                assert self._scoped is not None
                self._scoped.catch_up(conn, now)
                ids = None if ts_range is None else lexical_read.documents_in_range(conn, encoded, ts_range)
                return run_key_search(conn, self._scoped, vector, encoded, limit, now, ids)

    def _lexical_read(self, encoded: str, read: Callable[..., T]) -> T:
        """``read(conn, encoded)`` in a read transaction."""
        with self._lock:
            self._check_open()
            with read_tx(self._engine) as conn:
                return read(conn, encoded)

    @staticmethod
    def _cannot_write_now(exc: sa.exc.DBAPIError) -> bool:
        """Whether a write failed only because it cannot be made now (another writer holds
        the lock, the disk is full, the database is read-only here)."""
        return isinstance(translate(exc, ""), (StoreBusyError, StoreFullError, ReadOnlyStoreError))

    def _erased(self) -> None:
        """After a write that removed items (a delete, ``put(None)``, a TTL sweep): no local
        file keeps their text (:meth:`flush_erasure`). A checkpoint that fails (a full
        disk) is logged; the write itself committed."""
        try:
            checkpoint(self._engine)
        except sa.exc.DBAPIError as exc:
            log.warning("%s: the write-ahead log still holds removed items until a checkpoint "
                        "succeeds (%s)", self._where, exc.orig)

    # ------------------------------------------------------------ TTL

    def sweep_ttl(self) -> int:
        """Delete expired items (rows, vectors, index entries); returns how many."""
        return self._sweep()

    @_faults
    def _sweep(self) -> int:
        with self._lock:
            self._check_open()
            now = sql.now_us()
            with write_tx(self._engine, scopes=()) as conn:  # the sweep locks what it finds
                written = apply_writes(conn, None, {}, [], now, self._retention, sweep=True)
            self._after_write(written, now)
            return len(written.seqs)

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep expired items in a background thread every interval.

        The interval defaults to ``ttl["sweep_interval_minutes"]`` (else 5 min).
        Without a ``ttl`` config there is nothing to sweep: the returned future
        is already done. Calling it again returns the running sweeper's future.
        """
        with self._lock:
            self._check_open()
            if not self.ttl_config:
                done: concurrent.futures.Future[None] = concurrent.futures.Future()
                done.set_result(None)
                return done
            if self._sweeper is not None and self._sweeper.running:
                return self._sweeper.future
            interval = (
                sweep_interval_minutes
                or self.ttl_config.get("sweep_interval_minutes")
                or DEFAULT_SWEEP_MINUTES
            )
            self._sweeper = TTLSweeper(self._sweep, interval_minutes=float(interval))
            return self._sweeper.start()

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the background sweeper; ``True`` when it is not running any more."""
        return self._stop_sweeper(timeout)

    def _stop_sweeper(self, timeout: float | None = None) -> bool:
        sweeper = self._sweeper
        if sweeper is None:
            return True
        stopped = sweeper.stop(timeout)
        if stopped:
            self._sweeper = None
        return stopped


def _groupable(ops: list[Op]) -> bool:
    """Whether a batch may run grouped with concurrent calls: one plain LangGraph operation,
    made outside a block whose embeddings belong to named users (grouped, its embeddings
    would be made in another caller's context)."""
    return len(ops) == 1 and type(ops[0]) in GROUPABLE and not EMBEDDING_OWNERS.get()


def _index_setup(
    index: IndexConfig | None,
) -> tuple[IndexConfig | None, Embeddings | None, list[Any] | None]:
    if not index:
        return None, None, None
    config: dict[str, Any] = dict(index)
    dims = config.get("dims")
    if isinstance(dims, bool) or not isinstance(dims, int) or dims <= 0:
        raise ConfigError(f"index['dims'] must be a positive int, got {dims!r}")
    if config.get("embed") is None:
        raise ConfigError("index['embed'] is required (Embeddings or embedding function)")
    embeddings = ensure_embeddings(config["embed"])
    distance = config.get("distance_type", "cosine")
    if distance not in METRICS:
        raise ConfigError(f"index['distance_type']={distance!r} is not supported: use 'cosine' (the "
                          "default, scores in [-1, 1]), 'inner_product' (the dot product) or 'l2' "
                          "(minus the Euclidean distance); higher is closer in all three")
    text_fields = config.pop("text_fields", None)
    if text_fields is not None and config.get("fields") not in (None, text_fields):
        raise ConfigError("index['fields'] and index['text_fields'] differ; give one of them "
                          "(text_fields is LangGraph's SqliteStore name for fields)")
    fields = list(config.get("fields") or text_fields or ["$"])
    config["fields"] = fields
    if text_fields is not None:  # read back under the name it was given, as SqliteStore does
        config["text_fields"] = list(text_fields)
    return IndexConfig(**config), embeddings, tokenize_fields(fields)  # type: ignore[typeddict-item]

