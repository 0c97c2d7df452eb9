"""Shared fixtures: one backend list, stores and clients on it, deterministic embeddings.

Every test that takes ``backend``, ``open_store``, ``store_factory`` or ``make_client``
runs once per entry of :data:`BACKENDS`: LangGraph's ``InMemoryStore`` (the oracle)
and :class:`HyMemoryStore` (SQLite + FAISS).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore, IndexConfig, TTLConfig
from langgraph.store.memory import InMemoryStore

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.testing import HashingEmbeddings, RaisingChatModel

#: Every store backend the parametrised fixtures run on.
BACKENDS = ("memory", "sqlite")
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


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_store(backend: str, tmp_path: Path) -> Iterator[Callable[..., BaseStore]]:
    """``open_store(path="store.db", *, index=..., ttl=None)`` on the test's backend.

    ``index`` defaults to a ``["text"]`` semantic index; a relative ``path`` lives under
    ``tmp_path``. Every store is closed at teardown.
    """
    opened: list[BaseStore] = []
    counter = iter(range(1_000_000))

    def make(path: str | Path | None = None, *, index: IndexConfig | None | str = "default",
             ttl: TTLConfig | None = None) -> BaseStore:
        config = default_index(["text"]) if index == "default" else index
        target = tmp_path / (path or f"s{next(counter)}.db")
        if backend == "memory":
            store: BaseStore = InMemoryStore(index=config)  # type: ignore[arg-type]
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
def store_factory(open_store: Callable[..., BaseStore]) -> Callable[[Path, IndexConfig | None], BaseStore]:
    """The client's store factory (``path, index -> store``) on the test's backend."""
    return lambda path, index: open_store(path, index=index)


@pytest.fixture
def make_client(tmp_path: Path, store_factory: Callable[..., BaseStore],
                ) -> Iterator[Callable[..., HyMemoryClient]]:
    """``make_client(mode="lite", llm=None, *, env=None, data_dir=None, **options)``.

    ``options`` are :class:`HyMemoryClient` arguments (``config``, ``embeddings``,
    ``oa_context_provider``) or configuration overrides (e.g. ``chain_block_enabled``),
    applied on top of ``env`` (the environment the configuration is read from).
    Each client gets its own data dir unless one is given.
    """
    clients: list[HyMemoryClient] = []

    def make(mode: str | None = "lite", llm: Any = None, *, env: dict[str, str] | None = None,
             data_dir: Path | None = None, **options: Any) -> HyMemoryClient:
        client_kwargs = {k: options.pop(k) for k in list(options) if k in _CLIENT_KWARGS}
        data_dir = data_dir or tmp_path / f"data{len(clients)}"
        client_kwargs.setdefault("config", MemoryConfig.from_env(env or {}, data_dir=data_dir,
                                                                 **options))
        client_kwargs.setdefault("embeddings", HashingEmbeddings(dims=DIMS))
        client = HyMemoryClient(mode=mode, llm=llm, data_dir=data_dir, store_factory=store_factory,
                                **client_kwargs)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's API keys or data dir."""
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HY_MEMORY_LLM_MODEL", "OPENAI_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "hy_data"))


from openai_stub import openai_stub_fixture  # noqa: E402,F401
