"""Shared fixtures: deterministic embeddings, store backends, no network."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import IndexConfig
from langgraph.store.memory import InMemoryStore

from hy_memory_langgraph.testing import HashingEmbeddings


@pytest.fixture
def embeddings() -> HashingEmbeddings:
    return HashingEmbeddings(dims=64)


def _memory_factory(path: Path, index: IndexConfig | None) -> InMemoryStore:
    return InMemoryStore(index=index)


def _hy_factory(path: Path, index: IndexConfig | None) -> Any:
    from hy_memory_langgraph.store import HyMemoryStore

    return HyMemoryStore(path, index=index)


@pytest.fixture(params=["memory", "sqlite"])
def store_factory(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """Every client test runs on InMemoryStore (the oracle) and HyMemoryStore."""
    return _memory_factory if request.param == "memory" else _hy_factory


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """No test sees the developer's API keys or data dir."""
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HY_MEMORY_LLM_MODEL", "OPENAI_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "hy_data"))


from openai_stub import openai_stub_fixture  # noqa: E402,F401
