"""The notebooks in notebooks/ run top to bottom (real kernel, embedded model, no network)."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernel runs in tmp_path: it must import this checkout, whatever else is installed.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    temp = tmp_path / "tmp"  # the kernel's temporary directory: empty again at the end
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for cell in notebook.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert [p.name for p in temp.iterdir() if p.name.startswith("hy-")] == []


def test_there_is_a_notebook() -> None:
    assert NOTEBOOKS
