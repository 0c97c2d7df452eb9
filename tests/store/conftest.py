"""Fixtures for the store tests: the InMemoryStore oracle and HyMemoryStore twins."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore, IndexConfig, TTLConfig
from langgraph.store.memory import InMemoryStore

from hy_memory_langgraph.store import HyMemoryStore

from store_helpers import StoreFactory, index_config


@pytest.fixture
def hy_factory(tmp_path: Path) -> Iterator[Callable[..., HyMemoryStore]]:
    """Open HyMemoryStores under tmp_path; all are closed at teardown."""
    opened: list[HyMemoryStore] = []

    def make(
        name: str = "store.db",
        *,
        index: IndexConfig | None | str = "default",
        ttl: TTLConfig | None = None,
        **kwargs: Any,
    ) -> HyMemoryStore:
        config = index_config(["text"]) if index == "default" else index
        store = HyMemoryStore(tmp_path / name, index=config, ttl=ttl, **kwargs)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture(params=["memory", "hy"])
def store_factory(request: pytest.FixtureRequest, hy_factory: Callable[..., HyMemoryStore]) -> StoreFactory:
    """Factory of either the oracle (``InMemoryStore``) or ``HyMemoryStore``."""
    if request.param == "memory":

        def make_memory(*, index: IndexConfig | None | str = "default", **_: Any) -> BaseStore:
            config = index_config(["text"]) if index == "default" else index
            return InMemoryStore(index=config)

        return make_memory
    counter = iter(range(1_000_000))
    return lambda **kw: hy_factory(f"s{next(counter)}.db", **kw)


@pytest.fixture
def store(store_factory: StoreFactory) -> BaseStore:
    """A store with ``fields=["text"]`` semantic index, oracle or HyMemoryStore."""
    return store_factory()
