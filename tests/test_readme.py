"""The README's Python examples run as written (in a temp dir, lite mode, embedded model)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def test_readme_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    blocks = _BLOCK.findall(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - our own README
    out = capsys.readouterr().out
    assert "Miso" in out.splitlines()[0]
    assert "fridge" in out
    namespace["client"].close()  # type: ignore[attr-defined]
