"""HyMemoryStore as the LangGraph API server's store: ``langgraph dev`` on a loopback port,
driven by the ``langgraph-sdk`` client, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
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
          "store": {"path": "hy_memory_langgraph.integrations.langgraph_server.server_store"}}


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
