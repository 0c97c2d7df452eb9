"""Fixtures of the productivity tests: clients over both store backends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.testing import HashingEmbeddings


@pytest.fixture
def make_client(tmp_path: Path, store_factory: Callable[..., Any]) -> Iterator[Callable[..., HyMemoryClient]]:
    clients: list[HyMemoryClient] = []

    def make(mode: str | None = "lite", llm: Any = None, env: dict[str, str] | None = None,
             **overrides: Any) -> HyMemoryClient:
        data_dir = tmp_path / f"data{len(clients)}"
        config = MemoryConfig.from_env(env or {}, data_dir=data_dir, **overrides)
        client = HyMemoryClient(mode=mode, llm=llm, embeddings=HashingEmbeddings(dims=64),
                                config=config, store_factory=store_factory)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
