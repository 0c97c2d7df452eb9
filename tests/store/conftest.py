"""Fixtures of the store tests: HyMemoryStore-only stores and the default ``store``.

The backend-parametrised ``open_store`` comes from tests/conftest.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore, IndexConfig, TTLConfig
from store_helpers import StoreFactory, index_config

from hy_memory_langgraph.store import HyMemoryStore


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


@pytest.fixture
def store(open_store: StoreFactory) -> BaseStore:
    """A store with ``fields=["text"]`` semantic index, oracle or HyMemoryStore."""
    return open_store()
