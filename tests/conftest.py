"""Shared fixtures: deterministic embeddings, no network."""

from __future__ import annotations

import pytest

from hy_memory_langgraph.testing import HashingEmbeddings


@pytest.fixture
def embeddings() -> HashingEmbeddings:
    return HashingEmbeddings(dims=64)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """No test sees the developer's API keys or data dir."""
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HY_MEMORY_LLM_MODEL", "OPENAI_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "hy_data"))


from openai_stub import openai_stub_fixture  # noqa: E402,F401
