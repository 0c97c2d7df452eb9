"""Without an optional package, the package imports and what needs it names the extra to
install (``agents``, ``mcp``, ``postgres``)."""

from __future__ import annotations

import importlib
import sys

import pytest

from hy_memory_langgraph.errors import MissingExtraError


def test_integrations_import_without_langchain(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m.startswith("hy_memory_langgraph.integrations")]:
        monkeypatch.delitem(sys.modules, name)
    for name in ["langchain", *[m for m in sys.modules if m.startswith("langchain.")]]:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed
    integrations = importlib.import_module("hy_memory_langgraph.integrations")
    for name in set(integrations.__all__) - {"HyMemoryMiddleware"}:
        assert getattr(integrations, name) is not None
    with pytest.raises(ImportError, match=r"pip install 'hy-memory-langgraph\[agents\]'") as caught:
        integrations.HyMemoryMiddleware  # noqa: B018 - needs langchain
    assert isinstance(caught.value, MissingExtraError)


def _without(monkeypatch: pytest.MonkeyPatch, package: str) -> None:
    for name in [package, *[m for m in sys.modules if m.startswith(package + ".")]]:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed


def test_the_mcp_server_without_mcp_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from hy_memory_langgraph.integrations.mcp_server import build_mcp_server
    _without(monkeypatch, "mcp")
    with pytest.raises(MissingExtraError, match=r"pip install 'hy-memory-langgraph\[mcp\]'"):
        build_mcp_server(object(), user_id="alice")  # type: ignore[arg-type]


def test_postgresql_without_psycopg_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from hy_memory_langgraph.client import HyMemoryClient
    _without(monkeypatch, "psycopg")
    with pytest.raises(MissingExtraError, match=r"pip install 'hy-memory-langgraph\[postgres\]'"):
        HyMemoryClient(mode="lite", data_dir=tmp_path, db_url="postgresql://u@127.0.0.1:1/x")
