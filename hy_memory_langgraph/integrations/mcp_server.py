"""An MCP server of one user's memory (Model Context Protocol, the official ``mcp`` SDK).

Coding agents and IDEs that speak MCP reach the memory through four tools:

* ``search_memory(query, scene="chat", limit=5)``: chat memories, or working / coding
  facts and experiences (coding with the version-chain block), best first, with ids;
* ``save_memory(content)``: remember one self-contained statement (chat);
* ``record_work(scene, messages)``: remember a finished piece of work: the conversation
  (OpenAI-style messages, tool calls and results included) through the working or
  coding pipeline;
* ``forget_memory(memory_id)``: delete one of the user's memories.

Whose memory it is (user, session, workspace, branch) is fixed when the server is
built (``hy-memory mcp -u alice``), never a tool argument a model fills. A failed call
comes back as an MCP tool error with the library's message. ``pip install
'hy-memory-langgraph[mcp]'`` brings the SDK.

Example:
    >>> server = build_mcp_server(client, user_id="alice")  # doctest: +SKIP
    >>> server.run("stdio")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.errors import ConfigError, HyMemoryError, InvalidInputError
from hy_memory_langgraph.integrations.scope import MemoryScope
from hy_memory_langgraph.integrations.tools import MAX_LIMIT, SAVE_DESCRIPTION, MemoryOps

__all__ = ["build_mcp_server"]

T = TypeVar("T")

SearchScene = Literal["chat", "working", "coding"]
WorkScene = Literal["working", "coding"]
_INSTRUCTIONS = ("Long-term memory of the current user: search it before answering questions about "
                 "the user or about earlier work; save what will still matter later; record finished "
                 "work (with its tool calls) so how it was done can be found again.")


async def _guarded(call: Awaitable[T]) -> T:
    """``await call``, a library error turned into an MCP tool error with its message."""
    try:
        return await call
    except HyMemoryError as exc:
        from mcp.server.fastmcp.exceptions import ToolError

        raise ToolError(str(exc)) from exc


def _outcome(scene: str, result: dict[str, Any]) -> str:
    if result.get("status") == "queued":
        return f"Queued for {scene} memory (request {result['request_id']}): recorded in the background."
    if not result.get("success", True):
        return f"Nothing recorded: {result.get('error') or result.get('reason') or 'the write failed'}."
    if result.get("scene") != "productivity":
        return "Recorded as chat memory: the messages hold no tool calls, so they are not a piece of work."
    ids = [*(result.get("experience_ids") or []), *([result["memory_id"]] if result.get("memory_id") else [])]
    return f"Recorded in {scene} memory ({', '.join(ids) or 'nothing new'})."


def build_mcp_server(client: HyMemoryClient, *, user_id: str, session_id: str | None = None,
                     workspace_id: str | None = None, branch: str | None = None, k: int = 5,
                     host: str = "127.0.0.1", port: int = 8000, background: bool = True) -> Any:
    """A ``FastMCP`` server whose tools read and write ``user_id``'s memory.

    Args:
        client: The memory client (the server does not close it).
        user_id: Whose memory; fixed for the server's life.
        session_id: The session writes are recorded under.
        workspace_id: Working/coding scope of searches and writes (e.g. a repository).
        branch: Scope within ``workspace_id``.
        k: Default number of results of ``search_memory``.
        host: Where streamable HTTP listens (loopback by default).
        port: Its port.
        background: ``save_memory`` and ``record_work`` queue their write (pro mode:
            the tool answers without waiting for the model calls of memory); ``False``
            writes before answering. Lite mode writes at once either way.

    Raises:
        InvalidInputError: ``user_id`` is empty.
        ConfigError: The ``mcp`` package is not installed.
    """
    if not isinstance(user_id, str) or not user_id.strip():
        raise InvalidInputError("user_id is required: the MCP server serves one user's memory")
    server = _new_server(host, port)
    scope = MemoryScope(user_id.strip(), session_id, workspace_id, branch)
    ops = {scene: MemoryOps(client, scene, k, background=background) for scene in ("chat", "working", "coding")}
    _add_tools(server, client, scope, ops, background)
    return server


def _new_server(host: str, port: int) -> Any:
    try:
        from mcp.server.fastmcp import FastMCP
    except ImportError as exc:
        raise ConfigError("the MCP server needs the mcp package: pip install 'hy-memory-langgraph[mcp]'") from exc
    return FastMCP("hy-memory", instructions=_INSTRUCTIONS, host=host, port=port, log_level="WARNING")


def _add_tools(server: Any, client: HyMemoryClient, scope: MemoryScope, ops: dict[str, MemoryOps],
               background: bool) -> None:
    @server.tool(description="Search the user's long-term memory; returns the best matches with their ids.")
    async def search_memory(
        query: Annotated[str, Field(description="What to look for (a question or keywords).")],
        scene: Annotated[SearchScene, Field(description="chat: what the user said; working/coding: "
                                                         "how tasks were done (coding adds the version chain).")] = "chat",
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="How many results at most.")] = 5,
    ) -> str:
        return await _guarded(ops[scene].asearch(scope, query, limit))

    @server.tool(description=SAVE_DESCRIPTION)
    async def save_memory(
        content: Annotated[str, Field(description="One self-contained statement to remember.")],
    ) -> str:
        return await _guarded(ops["chat"].asave(scope, content))

    @server.tool(description="Record a finished piece of work (the conversation with its tool calls and "
                             "results) in working or coding memory.")
    async def record_work(
        scene: Annotated[WorkScene, Field(description="coding when code was the medium, else working.")],
        messages: Annotated[list[dict[str, Any]], Field(
            min_length=1, description="The work's messages, OpenAI style: {role, content, tool_calls?, "
                                      "tool_call_id?}.")],
    ) -> str:
        result = await _guarded(client.aadd(messages, scene=scene, user_id=scope.user_id,
                                            session_id=scope.session_id, workspace_id=scope.workspace_id,
                                            branch=scope.branch, metadata={"saved_by": "mcp"},
                                            background=background))
        return _outcome(scene, dict(result))

    @server.tool(description="Delete one of the user's memories by its id (as search_memory showed it).")
    async def forget_memory(
        memory_id: Annotated[str, Field(description="The memory's id.")],
    ) -> str:
        return await _guarded(ops["chat"].aforget(scope, memory_id))
