"""The public surface is the faces users import, and it stays small enough to hold.

Only the faces declare ``__all__``: the package root, ``integrations``, ``store``,
``models``, ``config``, ``errors``, ``testing`` and the CLI's entry point (the module
``pyproject.toml`` names for the ``hy-memory`` script). Every other module is internal:
what it exports is what its importers use, with no list to keep in step.
"""

from __future__ import annotations

import ast
import importlib
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hy_memory_langgraph"

FACES = (
    "hy_memory_langgraph",
    "hy_memory_langgraph.integrations",
    "hy_memory_langgraph.store",
    "hy_memory_langgraph.models",
    "hy_memory_langgraph.config",
    "hy_memory_langgraph.errors",
    "hy_memory_langgraph.testing",
    "hy_memory_langgraph.cli",
)
MAX_PUBLIC_NAMES = 150


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _declares_all(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
            return True
    return False


def test_only_the_faces_declare_all() -> None:
    declaring = {_module_name(path) for path in sorted(PACKAGE.rglob("*.py"))
                 if _declares_all(ast.parse(path.read_text(encoding="utf-8")))}
    assert declaring - set(FACES) == set(), "only the faces keep __all__; drop it from these"
    assert set(FACES) - declaring == set(), "every face lists its public names in __all__"


def test_the_faces_export_at_most_150_names() -> None:
    total = sum(len(importlib.import_module(face).__all__) for face in FACES)
    assert total <= MAX_PUBLIC_NAMES


@pytest.mark.parametrize("face", FACES)
def test_every_public_name_of_a_face_imports(face: str) -> None:
    module = importlib.import_module(face)
    names = list(module.__all__)
    assert len(names) == len(set(names)), f"{face}.__all__ lists a name twice"
    missing = [name for name in names if not hasattr(module, name)]
    assert missing == []


def test_the_cli_face_is_the_script_entry_point() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    module, _, attribute = scripts["hy-memory"].partition(":")
    assert module in FACES
    assert importlib.import_module(module).__all__ == [attribute]
