"""``hy-memory mcp`` end to end: the official MCP SDK's stdio client against the real
server process, and langchain-mcp-adapters loading its tools into a LangGraph agent."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from hy_memory_langgraph.fences import read_fences
from hy_memory_langgraph.testing import ScriptedChatModel
from tests.productivity.support import tool_trace

pytestmark = pytest.mark.slow  # a server process with the embedded model per test


@asynccontextmanager
async def served(data_dir: Path, *args: str) -> AsyncIterator[ClientSession]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HY_MEMORY_"))}
    params = StdioServerParameters(command=sys.executable, env=env, cwd=str(Path(__file__).parents[2]),
                                   args=["-m", "hy_memory_langgraph.cli", "mcp", "--data-dir", str(data_dir),
                                         "--mode", "lite", *args])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def test_the_sdk_client_searches_saves_records_and_forgets(tmp_path: Path) -> None:
    async with served(tmp_path, "-u", "alice", "--workspace-id", "repo-a") as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {"search_memory", "save_memory", "record_work", "forget_memory"}
        for tool in tools.values():  # whose memory is never an argument
            assert not {"user_id", "workspace_id", "branch"} & set(tool.inputSchema["properties"])
        saved = await session.call_tool("save_memory", {"content": "My cat is called Miso."})
        assert not saved.isError and _text(saved).startswith("Saved (")
        found = _text(await session.call_tool("search_memory", {"query": "what is my cat called?"}))
        assert "My cat is called Miso." in found
        work = json.loads(json.dumps(tool_trace()))
        recorded = await session.call_tool("record_work", {"scene": "coding", "messages": work})
        assert not recorded.isError and "coding memory" in _text(recorded)
        coding = _text(await session.call_tool("search_memory", {"query": "timeout search client",
                                                                 "scene": "coding"}))
        assert any(row["id"].startswith("fact_coding_") for row in read_fences(coding)[0].rows)
        memory_id = read_fences(found)[0].rows[0]["id"]
        assert _text(await session.call_tool("forget_memory", {"memory_id": memory_id})) == f'Forgot "{memory_id}".'
        assert "Miso" not in _text(await session.call_tool("search_memory", {"query": "cat"}))
        bad = await session.call_tool("save_memory", {"content": "   "})
        assert bad.isError and "non-empty content" in _text(bad)
        out_of_range = await session.call_tool("search_memory", {"query": "cat", "limit": 500})
        assert out_of_range.isError
    async with served(tmp_path, "-u", "bob") as other:
        assert "No memories found." in _text(await other.call_tool("search_memory", {"query": "timeout",
                                                                                     "scene": "coding"}))
        assert "No memories yet." in (await other.read_resource("memory://recent")).contents[0].text


async def test_the_recent_memories_are_a_resource(tmp_path: Path) -> None:
    async with served(tmp_path, "-u", "alice") as session:
        await session.call_tool("save_memory", {"content": "My cat is called Miso."})
        await session.call_tool("record_work", {"scene": "coding", "messages": json.loads(json.dumps(tool_trace()))})
        listed = (await session.list_resources()).resources
        assert [str(r.uri) for r in listed] == ["memory://recent"]
        text = (await session.read_resource("memory://recent")).contents[0].text
        rows = read_fences(text)[0].rows
        assert {row["scene"] for row in rows} == {"chat", "coding"} and all(row["id"] for row in rows)
        assert any(row.get("memory") == "My cat is called Miso." for row in rows)
        unknown = pytest.raises(Exception, match="unknown resource")
        with unknown:
            await session.read_resource("memory://everything")


def _agent_script(messages: list[BaseMessage]) -> AIMessage:
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(content=f"From memory: {last.content}")
    return AIMessage(content="", tool_calls=[{"name": "search_memory", "args": {"query": "cat name"},
                                              "id": "call-1"}])


async def test_langchain_mcp_adapters_give_a_langgraph_agent_the_tools(tmp_path: Path) -> None:
    async with served(tmp_path, "-u", "alice") as session:
        await session.call_tool("save_memory", {"content": "My cat is called Miso."})
        tools = await load_mcp_tools(session)
        assert {t.name for t in tools} == {"search_memory", "save_memory", "record_work", "forget_memory"}
        model = ScriptedChatModel.from_script(_agent_script)
        agent = create_agent(model, tools=tools)
        out = await agent.ainvoke({"messages": [{"role": "user", "content": "What is my cat called?"}]})
        assert "My cat is called Miso." in out["messages"][-1].content


def test_the_server_refuses_to_start_without_a_user(tmp_path: Path) -> None:
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "HY_MEMORY_USER_ID"}
    done = subprocess.run([sys.executable, "-m", "hy_memory_langgraph.cli", "mcp", "--data-dir", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "--user-id" in done.stderr and done.stdout == ""


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_listening(port: int, proc: Any, timeout: float = 120.0) -> None:
    """Wait until the server accepts connections (or fail if it exited)."""
    import socket
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited: {proc.stderr.read()}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("the server did not listen in time")


async def test_streamable_http_on_a_loopback_port(tmp_path: Path) -> None:
    import subprocess

    from mcp.client.streamable_http import streamable_http_client

    from mcp.client.streamable_http import create_mcp_http_client

    port = _free_port()
    token = "k3Jx9QpL2mN7vR4tY8wZ1aB6cD0eF5gH"
    env = {**os.environ, "HY_MEMORY_MCP_TOKEN": token}
    proc = subprocess.Popen([sys.executable, "-m", "hy_memory_langgraph.cli", "mcp", "--data-dir", str(tmp_path),
                             "--mode", "lite", "-u", "carol", "--http", "--port", str(port)], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_listening(port, proc)
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http, \
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as (read, write, _), \
                ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool("save_memory", {"content": "I live in Porto."})
            assert "I live in Porto." in _text(await session.call_tool("search_memory", {"query": "where do I live"}))
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        proc.stderr.close()
