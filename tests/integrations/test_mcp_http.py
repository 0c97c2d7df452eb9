"""``hy-memory mcp --http`` has a lock: the official MCP client over real HTTP (loopback)
needs the bearer token, a Host the server answers, and sees the package's version and
the tools' annotations; a server that would serve without a token never starts."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.shared.memory import create_connected_server_and_client_session

from hy_memory_langgraph import __version__
from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.errors import ConfigError
from hy_memory_langgraph.integrations.mcp_server import (
    ALLOWED_HOSTS_ENV,
    TOKEN_ENV,
    allowed_hosts,
    build_mcp_server,
    http_access,
    http_app,
)
from hy_memory_langgraph.testing import HashingEmbeddings

TOKEN = "Zq8vN3kLm2Xw9RtY7uP4sA1dF6gH0jKe-test-token"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "probe", "version": "0"}}}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, HyMemoryClient]]:
    """The HTTP app of alice's memory on a loopback port (uvicorn in a thread)."""
    client = HyMemoryClient(mode="lite", data_dir=tmp_path, embeddings=HashingEmbeddings(dims=32))
    port = _free_port()
    app = http_app(build_mcp_server(client, user_id="alice"), http_access(TOKEN, "127.0.0.1", port))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:  # wait for it to listen
        assert thread.is_alive(), "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp", client
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        client.close()


@asynccontextmanager
async def session(url: str, token: str | None = TOKEN) -> AsyncIterator[tuple[ClientSession, Any]]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as http, \
            streamable_http_client(url, http_client=http) as (read, write, _), \
            ClientSession(read, write) as opened:
        yield opened, await opened.initialize()


def _post(url: str, **headers: str) -> httpx.Response:
    return httpx.post(url, json=INITIALIZE, headers={**HEADERS, **headers}, timeout=30)


def test_without_the_token_every_request_gets_401(served: tuple[str, HyMemoryClient]) -> None:
    url, _ = served
    missing = _post(url)
    assert missing.status_code == 401 and missing.headers["www-authenticate"] == 'Bearer realm="hy-memory"'
    for wrong in (f"Bearer {TOKEN[:-1]}x", f"Bearer {TOKEN}x", f"Basic {TOKEN}", TOKEN, "Bearer  x"):
        refused = _post(url, Authorization=wrong)
        assert refused.status_code == 401, wrong
        assert refused.headers["www-authenticate"] == 'Bearer realm="hy-memory", error="invalid_token"'
    assert _post(url.removesuffix("/mcp") + "/other").status_code == 401  # every path
    assert _post(url, Authorization=f"Bearer {TOKEN}").status_code == 200


async def test_the_official_client_needs_the_right_token(served: tuple[str, HyMemoryClient]) -> None:
    url, _ = served
    for token in (None, "not-the-token-" * 3):
        with pytest.raises(BaseException) as failed:  # noqa: PT011 - the SDK raises an exception group
            async with session(url, token):
                pass
        assert "401" in repr(failed.value.exceptions if isinstance(failed.value, BaseExceptionGroup)
                             else failed.value)


def test_a_host_the_server_does_not_answer_is_refused(served: tuple[str, HyMemoryClient]) -> None:
    url, _ = served
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert _post(url, Host="evil.example:8000", **auth).status_code == 421  # DNS rebinding
    assert _post(url, Origin="http://evil.example", **auth).status_code == 403
    assert _post(url, Origin="http://localhost:3000", **auth).status_code == 200


async def test_with_the_token_the_tools_work_with_annotations_and_our_version(
        served: tuple[str, HyMemoryClient]) -> None:
    url, client = served
    async with session(url) as (opened, init):
        assert init.serverInfo.name == "hy-memory" and init.serverInfo.version == __version__
        tools = {t.name: t for t in (await opened.list_tools()).tools}
        hints = {name: (t.annotations.readOnlyHint, t.annotations.destructiveHint, t.annotations.idempotentHint)
                 for name, t in tools.items()}
        assert hints == {"search_memory": (True, None, None), "save_memory": (False, False, False),
                         "record_work": (False, False, False), "forget_memory": (False, True, True)}
        assert all(t.annotations.openWorldHint is False for t in tools.values())
        saved = await opened.call_tool("save_memory", {"content": "My cat is called Miso."})
        assert not saved.isError
        found = await opened.call_tool("search_memory", {"query": "what is my cat called?"})
        assert "My cat is called Miso." in found.content[0].text
        foreign = await opened.call_tool("search_memory", {"query": "cat", "user_id": "bob"})
        assert foreign.isError and "user_id" in foreign.content[0].text
    assert client.list_memories("alice")["memories"][0]["content"] == "My cat is called Miso."


async def test_a_pro_client_marks_its_writes_destructive(tmp_path: Path, raising_model: Any) -> None:
    with HyMemoryClient(mode="pro", llm=raising_model, data_dir=tmp_path,
                        embeddings=HashingEmbeddings(dims=32)) as client:
        async with create_connected_server_and_client_session(build_mcp_server(client, user_id="alice")) as opened:
            tools = (await opened.list_tools()).tools
    assert {t.name: t.annotations.destructiveHint for t in tools} == {
        "search_memory": None, "save_memory": True, "record_work": True, "forget_memory": True}


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "127.0.0.1", "localhost"])
@pytest.mark.parametrize("token", [None, "", "short-token"])
def test_no_http_without_a_proper_token(host: str, token: str | None) -> None:
    with pytest.raises(ConfigError, match=rf"--token.*{TOKEN_ENV}"):
        http_access(token, host, 8000, ["mem.internal"])


def test_a_wildcard_address_needs_the_names_clients_use() -> None:
    with pytest.raises(ConfigError, match="--allowed-host NAME"):
        http_access(TOKEN, "0.0.0.0", 8000)
    assert http_access(TOKEN, "0.0.0.0", 8000, ["mem.internal:8000"]).hosts == (
        "127.0.0.1:*", "localhost:*", "[::1]:*", "mem.internal:8000")
    assert allowed_hosts("::1", 9000) == ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    assert allowed_hosts("fd00::5", 9000, ["[fd00::5]"]) == ["[fd00::5]:9000", "[fd00::5]", "[fd00::5]:*"]


def test_the_command_refuses_a_public_bind_without_a_token_before_serving(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HY_MEMORY_"))}
    port = _free_port()
    data_dir = tmp_path / "never-opened"
    done = subprocess.run([sys.executable, "-m", "hy_memory_langgraph.cli", "mcp", "--http", "--host", "0.0.0.0",
                           "--port", str(port), "--allowed-host", "mem.internal", "-u", "alice", "--json",
                           "--data-dir", str(data_dir)],
                          capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL,
                          cwd=str(Path(__file__).parents[2]))
    error = json.loads(done.stdout)["error"]
    assert done.returncode == 2 and error["code"] == "CONFIG_ERROR"
    assert "--token" in error["message"] and TOKEN_ENV in error["message"]
    assert not data_dir.exists()  # refused before the memory was opened, let alone served


def test_the_command_refuses_a_wildcard_bind_without_host_names_before_serving(tmp_path: Path) -> None:
    """With a token but no ``--allowed-host`` and the environment's list set empty: no names
    (an empty item is none); the other empty spellings are checked without a process."""
    for hosts in ([], [""], [" ", ""]):
        with pytest.raises(ConfigError, match="--allowed-host NAME"):
            http_access(TOKEN, "0.0.0.0", 8000, hosts)
    port = _free_port()
    data_dir = tmp_path / "never-opened"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HY_MEMORY_"))}
    env[ALLOWED_HOSTS_ENV] = ""
    done = subprocess.run([sys.executable, "-m", "hy_memory_langgraph.cli", "mcp", "--http", "--host", "0.0.0.0",
                           "--port", str(port), "--token", TOKEN, "-u", "alice", "--json",
                           "--data-dir", str(data_dir)],
                          capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL,
                          cwd=str(Path(__file__).parents[2]))
    error = json.loads(done.stdout)["error"]
    assert done.returncode == 2 and error["code"] == "CONFIG_ERROR", done.stdout
    assert "--allowed-host" in error["message"] and not data_dir.exists()
