"""HyMemoryStore as the LangGraph API server's store: ``langgraph dev`` on a loopback port,
driven by the ``langgraph-sdk`` client, on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from hy_memory_langgraph.store import HyMemoryStore

pytestmark = pytest.mark.slow  # a server process with the embedded model per test

AGENT = '''
from typing import TypedDict
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

class State(TypedDict, total=False):
    text: str
    found: list[str]

def remember(state: State, runtime: Runtime) -> dict:
    runtime.store.put(("notes",), "latest", {"text": state["text"]})
    hits = runtime.store.search(("notes",), query=state["text"], limit=3)
    return {"found": [hit.value["text"] for hit in hits]}

builder = StateGraph(State)
builder.add_node("remember", remember)
builder.add_edge(START, "remember")
builder.add_edge("remember", END)
graph = builder.compile()
'''
CONFIG = {"dependencies": ["."], "graphs": {"notes": "./agent.py:graph"},
          "store": {"path": "hy_memory_langgraph.integrations.langgraph_server.langgraph_store",
                    "ttl": {"default_ttl": 600, "refresh_on_read": True, "sweep_interval_minutes": 10}}}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_ready(url: str, proc: subprocess.Popen[str], timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"langgraph dev exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=5) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("langgraph dev did not answer in time")


@contextmanager
def langgraph_dev(project: Path, store_env: dict[str, str]) -> Iterator[str]:
    (project / "agent.py").write_text(AGENT, encoding="utf-8")
    (project / "langgraph.json").write_text(json.dumps(CONFIG), encoding="utf-8")
    port = _free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LANGSMITH_", "LANGCHAIN_"))},
           "LANGGRAPH_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false", **store_env}
    log = (project / "server.log").open("w")
    proc = subprocess.Popen([sys.executable, "-c", "from langgraph_cli.cli import cli; cli()", "dev",
                             "--port", str(port), "--no-browser", "--no-reload"],
                            cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, proc)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=120)
        log.close()


async def _drive(url: str) -> None:
    client = get_client(url=url)
    try:
        await _exercise(client)
    finally:
        await client.aclose()


async def _exercise(client: Any) -> None:
    await client.store.put_item(["prefs", "u1"], "drink", {"text": "likes green tea"})
    await client.store.put_item(["prefs", "u1"], "pet", {"text": "has a cat called Miso"})
    assert (await client.store.get_item(["prefs", "u1"], "drink"))["value"] == {"text": "likes green tea"}
    hits = (await client.store.search_items(["prefs"], query="what does the user drink?", limit=1))["items"]
    assert [h["key"] for h in hits] == ["drink"] and hits[0]["score"] is not None
    listed = await client.store.search_items(["prefs"], filter={"text": "has a cat called Miso"})
    assert [h["key"] for h in listed["items"]] == ["pet"]
    assert (await client.store.list_namespaces())["namespaces"] == [["prefs", "u1"]]
    await client.store.delete_item(["prefs", "u1"], "pet")
    assert await client.store.get_item(["prefs", "u1"], "pet") is None
    run = await client.runs.wait(None, "notes", input={"text": "the wifi password is on the fridge"})
    assert run["found"] == ["the wifi password is on the fridge"]


async def test_the_server_keeps_its_store_in_a_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "server_store.db"
    with langgraph_dev(tmp_path, {"HY_MEMORY_SERVER_STORE": str(path)}) as url:
        await _drive(url)
    with HyMemoryStore(path) as store:  # what the server wrote is in our file
        assert store.get(("prefs", "u1"), "drink").value == {"text": "likes green tea"}
        assert store.get(("notes",), "latest").value == {"text": "the wifi password is on the fridge"}


async def test_the_server_keeps_its_store_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    env = {"HY_MEMORY_SERVER_STORE": pg_url, "HY_MEMORY_SERVER_STORE_SCHEMA": "server_store"}
    with langgraph_dev(tmp_path, env) as url:
        await _drive(url)
    with HyMemoryStore(pg_url, schema="server_store") as store:
        assert store.get(("prefs", "u1"), "drink").value == {"text": "likes green tea"}


# ------------------------------------------------- the server's store section, as the server reads it
EMBED = """
def embed(texts):
    return [[float(len(t) % 7 == k) for k in range(7)] + [1.0] + [0.0] * 56 for t in texts]
"""


@pytest.fixture
def server_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Set ``langgraph_api.config.STORE_CONFIG`` as ``langgraph.json`` would; yields a
    function loading the store with the server's own calls."""
    for name, value in {"REDIS_URI": "fake", "DATABASE_URI": ":memory:", "MIGRATIONS_PATH": "__inmem"}.items():
        monkeypatch.setenv(name, value)  # what `langgraph dev` sets before the server's config is read
    from langgraph_api import config as api_config
    from langgraph_api import store as api_store
    (tmp_path / "embed.py").write_text(EMBED, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HY_MEMORY_SERVER_STORE", str(tmp_path / "server.db"))
    monkeypatch.setattr(api_store, "CUSTOM_STORE", None)
    monkeypatch.setattr(api_store, "STORE_STACK", threading.local())  # the server's once-per-process cache

    async def load(section: dict[str, Any]) -> Any:
        monkeypatch.setattr(api_config, "STORE_CONFIG", {
            "path": "hy_memory_langgraph.integrations.langgraph_server.langgraph_store", **section})
        import langgraph_api.graph  # noqa: F401 - the server has it loaded (it resolves embeddings)
        await api_store.collect_store_from_env()
        return await api_store.get_store(), api_store.exit_store
    return load


async def test_the_server_store_section_sets_the_index_and_ttl(server_config: Any, tmp_path: Path) -> None:
    store, exit_store = await server_config({
        "index": {"dims": 64, "embed": "./embed.py:embed", "fields": ["text"]},
        "ttl": {"default_ttl": 0.001, "refresh_on_read": False, "sweep_interval_minutes": 0.001}})
    try:
        assert (store.index_config["dims"], store.index_config["fields"]) == (64, ["text"])
        await store.aput(("prefs",), "tea", {"text": "likes green tea", "other": "x"})  # no ttl given
        deadline = time.monotonic() + 60
        while await store.aget(("prefs",), "tea") is not None:  # the section's default_ttl applies
            assert time.monotonic() < deadline, "the item never expired"
            await asyncio.sleep(0.05)
        while _rows(tmp_path / "server.db"):  # and the store's own sweeper deletes it
            assert time.monotonic() < deadline, "the sweeper never ran"
            await asyncio.sleep(0.05)
    finally:
        await exit_store()
    with pytest.raises(Exception, match="closed"):
        store.get(("prefs",), "tea")  # closed with the server


async def test_dims_that_do_not_match_the_model_are_refused(server_config: Any) -> None:
    from hy_memory_langgraph.errors import ConfigError
    with pytest.raises(ConfigError, match="dims=32"):
        await server_config({"index": {"dims": 32, "embed": "./embed.py:embed"}})


def _rows(path: Path) -> int:
    import sqlite3
    with contextlib.closing(sqlite3.connect(path)) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        items = next(t for t in tables if t.endswith("items"))
        return int(conn.execute(f"SELECT count(*) FROM {items}").fetchone()[0])
