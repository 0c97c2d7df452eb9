"""The installed distribution says what it is: licence, classifiers, URLs, typing marker."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_distribution_metadata_names_licence_classifiers_and_urls() -> None:
    meta = metadata.metadata("hy-memory-langgraph")
    assert meta["License-Expression"] == "MIT"
    classifiers = meta.get_all("Classifier") or []
    assert "Typing :: Typed" in classifiers and "Programming Language :: Python :: 3.11" in classifiers
    assert any(url.startswith("Homepage, https://") for url in meta.get_all("Project-URL") or [])
    files = {str(f) for f in metadata.files("hy-memory-langgraph") or []}
    assert any(f.endswith("licenses/LICENSE") for f in files), sorted(files)[:10]


def test_the_licence_file_and_typing_marker_are_in_the_source() -> None:
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert (ROOT / "hy_memory_langgraph" / "py.typed").is_file()
