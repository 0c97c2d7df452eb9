"""``hy_memory_langgraph.integrations`` imports without the optional ``langchain`` package."""

from __future__ import annotations

import importlib
import sys

import pytest


def test_integrations_import_without_langchain(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m.startswith("hy_memory_langgraph.integrations")]:
        monkeypatch.delitem(sys.modules, name)
    for name in ["langchain", *[m for m in sys.modules if m.startswith("langchain.")]]:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed
    integrations = importlib.import_module("hy_memory_langgraph.integrations")
    for name in set(integrations.__all__) - {"HyMemoryMiddleware"}:
        assert getattr(integrations, name) is not None
    with pytest.raises(ImportError):
        integrations.HyMemoryMiddleware  # noqa: B018 - needs langchain
