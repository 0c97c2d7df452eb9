"""CLI fixtures: in-process runs with fast deterministic embeddings, and a data dir."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.cli import demo as demo_module
from hy_memory_langgraph.cli import main
from hy_memory_langgraph.models import embeddings as embeddings_module
from hy_memory_langgraph.testing import HashingEmbeddings

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture(autouse=True)
def _fast_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process CLI runs embed with hashing embeddings instead of the embedded e5."""
    monkeypatch.setattr(embeddings_module, "E5Embeddings", lambda: HashingEmbeddings(64))
    monkeypatch.setattr(demo_module, "E5Embeddings", lambda: HashingEmbeddings(64))
    monkeypatch.delenv("HY_MEMORY_USER_ID", raising=False)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "memory"


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    """``run(*argv)`` → ``(exit code, stdout, stderr)`` of one in-process command."""

    def invoke(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return invoke


@pytest.fixture
def run_json(run: Run) -> Callable[..., tuple[int, dict[str, Any]]]:
    """``run_json(*argv)`` → ``(exit code, the one JSON envelope printed)``."""

    def invoke(*argv: str) -> tuple[int, dict[str, Any]]:
        code, out, _ = run(*argv, "--json")
        lines = out.strip().splitlines()
        assert len(lines) == 1, out
        return code, json.loads(lines[0])

    return invoke
