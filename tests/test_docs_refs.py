"""Every module the docs name exists: the README and ``docs/*.md`` name code by path
(``hy_memory_langgraph/store/db/engine.py``, ``store/db/engine.py`` inside the package,
``bench/…``, ``tests/…``) or by dotted name (``hy_memory_langgraph.store.HyMemoryStore``),
and a reorganisation that moves or removes the code must change the docs with it.

History belongs in ``bench/NOTES.md``, where removed modules are named as such; it is not
read here.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hy_memory_langgraph"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: A path of code or data: folders, then a file with one of these endings.
_PATH = re.compile(r"(?<![\w./<-])((?:[A-Za-z_][\w-]*/)+[A-Za-z_][\w-]*\.(?:py|toml|json|md))(?![\w/])")
_DOTTED = re.compile(r"(?<![\w.])hy_memory_langgraph(?:\.[A-Za-z_]\w*)+")
#: Where a relative path may live: the repository, or the package for its own folders.
_TOP = {"bench", "tests", "docs", "hy_memory_langgraph", "graphs", "notebooks"}
_SUBPACKAGES = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}


def _named(pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    return sorted({(doc.name, match) for doc in DOCS
                   for match in pattern.findall(doc.read_text(encoding="utf-8"))})


def _paths() -> list[tuple[str, str]]:
    return [(doc, path) for doc, path in _named(_PATH)
            if path.split("/")[0] in _TOP | _SUBPACKAGES]


def test_the_docs_name_code_at_all() -> None:
    paths, dotted = _paths(), _named(_DOTTED)
    assert len(paths) >= 20 and len(dotted) >= 5, (len(paths), len(dotted))


@pytest.mark.parametrize(("doc", "path"), _paths())
def test_a_path_the_docs_name_exists(doc: str, path: str) -> None:
    first = path.split("/")[0]
    where = ROOT / path if first in _TOP else PACKAGE / path
    assert where.is_file(), f"{doc} names {path}, which is not at {where.relative_to(ROOT)}"


@pytest.mark.parametrize(("doc", "name"), _named(_DOTTED))
def test_a_dotted_name_the_docs_name_resolves(doc: str, name: str) -> None:
    parts = name.split(".")
    for size in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:size])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            break
    found: object = importlib.import_module(".".join(parts[:size]))
    for attribute in parts[size:]:
        assert hasattr(found, attribute), f"{doc} names {name}: {attribute!r} is not in {found!r}"
        found = getattr(found, attribute)
