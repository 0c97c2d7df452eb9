"""Client fixtures, parametrized over store backends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.testing import HashingEmbeddings, RaisingChatModel


@pytest.fixture
def make_client(tmp_path: Path, store_factory: Callable[..., Any]) -> Iterator[Callable[..., HyMemoryClient]]:
    clients: list[HyMemoryClient] = []

    def make(mode: str | None = "lite", llm: Any = None, **kwargs: Any) -> HyMemoryClient:
        kwargs.setdefault("data_dir", tmp_path / f"data{len(clients)}")
        client = HyMemoryClient(mode=mode, llm=llm, embeddings=HashingEmbeddings(dims=64),
                                store_factory=store_factory, **kwargs)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def raising_model() -> RaisingChatModel:
    return RaisingChatModel.create()
