"""Memory tools for agents that manage their own memory: search, save, forget.

:func:`create_memory_tools` returns LangChain tools that read the user (and session,
workspace, branch) from the tool's ``ToolRuntime``: the runtime context first, then
``config["configurable"]`` (see :mod:`.scope`). They work in ``langchain.agents.create_agent``
and any graph that runs tools through a ``ToolNode``. ``create_memory_tools(client, user_id=...)`` builds them for one
user (no runtime needed: ``tool.invoke({"query": ...})`` anywhere; in a run naming another
user they refuse, as every face does: :mod:`.scope`). The MCP server uses the same
operations, :class:`MemoryOps`. Whose memory is never a tool argument.

* ``search_memory(query, limit=None)``: the user's memories, best first, each with
  its id (zero LLM calls);
* ``save_memory(content)``: remember one self-contained statement (``client.add``,
  chat scene; pro mode may merge it with what is already known);
* ``forget_memory(memory_id)``: delete one of the user's memories (an id of another
  user is refused as not found).

Example:
    >>> tools = create_memory_tools(client)  # doctest: +SKIP
    >>> agent = create_agent(model, tools=tools, context_schema=Context)  # doctest: +SKIP
    >>> agent.invoke({"messages": [...]}, context=Context(user_id="u1"))  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import ToolRuntime
from pydantic import Field

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.fences import literal
from hy_memory_langgraph.integrations.render import render_memory_block
from hy_memory_langgraph.integrations.scope import MemoryScope, current_config, current_context, resolve_scope
from hy_memory_langgraph.limits import Limits, check_nesting
from hy_memory_langgraph.results import SearchResult
from hy_memory_langgraph.scenes import validate_scene

#: The runtime injected into each tool; its context may be any type (dict, dataclass, ...).
AnyToolRuntime = ToolRuntime[Any, Any]
#: The most results search_memory returns.
MAX_LIMIT = 20

SEARCH_DESCRIPTION = (
    "Search the user's long-term memory (what they told you in earlier conversations: "
    "facts, preferences, plans). Use it before answering questions about the user. "
    "Returns the best matches with their ids.")
SAVE_DESCRIPTION = (
    "Save one self-contained statement about the user to long-term memory, e.g. "
    "'The user's cat is called Miso.' Save only what will still matter later.")
FORGET_DESCRIPTION = (
    "Delete one memory of the user by its id (as shown by search_memory), when the user "
    "asks you to forget it or it is wrong.")


def _scope(runtime: AnyToolRuntime, tool: str) -> MemoryScope:
    return resolve_scope(runtime.context, runtime.config, what=f"tool {tool}")


def _render_hits(result: SearchResult) -> str:
    """The memory block with each memory's id (best first), or a plain "none found"."""
    return render_memory_block(result, ids=True) or "No memories found."


#: What a tool's model-facing arguments are, with descriptions and bounds in the schema.
Query = Annotated[str, Field(description="What to look for, in the user's words (a question or keywords).")]
Limit = Annotated[int | None, Field(ge=1, le=MAX_LIMIT,
                                    description=f"How many memories at most (1-{MAX_LIMIT}); omit for the default.")]
Content = Annotated[str, Field(description="One self-contained statement to remember, e.g. "
                                           "'The user's cat is called Miso.'")]
MemoryId = Annotated[str, Field(description="The id of the memory, as search_memory showed it.")]


def create_memory_tools(client: HyMemoryClient, *, scene: str | None = None, k: int = 5,
                        include_forget: bool = True, user_id: str | None = None,
                        session_id: str | None = None, workspace_id: str | None = None,
                        branch: str | None = None) -> list[BaseTool]:
    """LangChain tools ``search_memory``, ``save_memory`` (and ``forget_memory``).

    By default each tool reads whose memory it is from the ``ToolRuntime`` a
    ``ToolNode`` (or ``create_agent``) injects. With ``user_id`` the tools are built for
    that user (and session, workspace, branch) and take no runtime, so they also work
    outside a ``ToolNode`` (``tool.invoke({"query": ...})``, test suites); inside a run
    that names another user they raise ``ForeignUserError`` (:mod:`.scope`: one rule for
    every face). The user is never a tool argument: a model cannot choose whose memory
    it reads.

    Args:
        client: The memory client.
        scene: What ``search_memory`` searches: ``None`` / ``"chat"`` (chat memories),
            ``"working"`` or ``"coding"`` (facts and experiences). ``save_memory`` always
            writes chat memories.
        k: Default number of results of ``search_memory`` (the model may ask for up to 20).
        include_forget: Add ``forget_memory``.
        user_id: Build the tools for this user (no runtime needed).
        session_id: With ``user_id``: the session ``save_memory`` writes under (a run's
            session comes first).
        workspace_id: With ``user_id``: the workspace searched (productivity scenes; a
            run's comes first).
        branch: With ``user_id``: the branch searched within ``workspace_id`` (idem).

    Raises:
        InvalidInputError: A bad ``scene`` or ``k``, or scope values without ``user_id``.
        MissingContextError: When a runtime-reading tool runs without a ``user_id``.
        ForeignUserError: When a tool built for one user runs in another user's run.

    Example:
        >>> [t.name for t in create_memory_tools(client)]  # doctest: +SKIP
        ['search_memory', 'save_memory', 'forget_memory']
        >>> create_memory_tools(client, user_id="u1")[0].invoke({"query": "cat"})  # doctest: +SKIP
        'No memories found.'
    """
    validate_scene(scene)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_LIMIT:
        raise InvalidInputError(f"k={k!r} is invalid: pass the default number of results, 1-{MAX_LIMIT}")
    if user_id is None and any(v is not None for v in (session_id, workspace_id, branch)):
        raise InvalidInputError("session_id, workspace_id and branch bind the tools only together with "
                                "user_id; without it the tools read the whole scope from the run")
    ops = MemoryOps(client, scene, k)
    fixed = None if user_id is None else MemoryScope(user_id, session_id, workspace_id, branch)
    made = _bound_tools(ops, fixed) if fixed is not None else _runtime_tools(ops)
    return made if include_forget else made[:2]


class MemoryOps:
    """What the three tools do for one scope, sync and async."""

    def __init__(self, client: HyMemoryClient, scene: str | None, k: int, *, background: bool = False) -> None:
        self.client, self.scene, self.k, self.background = client, scene, k, background

    def _search_args(self, scope: MemoryScope, query: str, limit: int | None) -> dict[str, Any]:
        size = self.k if limit is None else max(1, min(int(limit), MAX_LIMIT))
        return {"query": query, "scene": self.scene, "user_ids": [scope.user_id], "limit": size,
                "workspace_id": scope.workspace_id, "branch": scope.branch}

    def search(self, scope: MemoryScope, query: str, limit: int | None) -> str:
        return _render_hits(self.client.search(**self._search_args(scope, query, limit)))

    async def asearch(self, scope: MemoryScope, query: str, limit: int | None) -> str:
        return _render_hits(await self.client.asearch(**self._search_args(scope, query, limit)))

    def _save_args(self, scope: MemoryScope, content: str) -> dict[str, Any]:
        if not content.strip():
            raise InvalidInputError("save_memory needs non-empty content")
        return {"messages": [{"role": "user", "content": content.strip()}], "scene": "chat",
                "user_id": scope.user_id, "session_id": scope.session_id,
                "metadata": {"saved_by": "save_memory"}, "background": self.background}

    def save(self, scope: MemoryScope, content: str) -> str:
        return _saved(self.client.add(**self._save_args(scope, content)))

    async def asave(self, scope: MemoryScope, content: str) -> str:
        return _saved(await self.client.aadd(**self._save_args(scope, content)))

    def forget(self, scope: MemoryScope, memory_id: str) -> str:
        if not memory_id.strip() or not self.client.delete(memory_id.strip(), user_id=scope.user_id):
            return f"No memory {literal(memory_id)} of this user."
        return f"Forgot {literal(memory_id.strip())}."

    async def aforget(self, scope: MemoryScope, memory_id: str) -> str:
        return await asyncio.to_thread(self.forget, scope, memory_id)


def _saved(result: dict[str, Any]) -> str:
    if result.get("status") == "queued":
        return f"Queued (request {result['request_id']}): searchable now, remembered in the background."
    ids = result.get("memory_ids") or []
    return f"Saved ({', '.join(ids)})." if ids else "Already known; nothing new saved."


class _MemoryTool(StructuredTool):
    """A ``StructuredTool`` whose input is held to the client's limits before anything
    (argument validation, callbacks) reads it: a nesting deeper than ``MEMORY_MAX_DEPTH``
    raises :class:`InvalidInputError`, never a ``RecursionError``."""

    limits: Limits

    def _checked(self, input: Any) -> Any:
        args = input.get("args") if isinstance(input, dict) and input.get("type") == "tool_call" else input
        check_nesting(self.limits, args, f"the arguments of {self.name}", wrapping=1)
        return input

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return super().invoke(self._checked(input), config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await super().ainvoke(self._checked(input), config, **kwargs)


def _tools(ops: MemoryOps, search: Any, asearch: Any, save: Any, asave: Any, forget: Any,
           aforget: Any) -> list[BaseTool]:
    limits = ops.client.config.limits
    return [
        _MemoryTool.from_function(search, coroutine=asearch, name="search_memory", description=SEARCH_DESCRIPTION,
                                  limits=limits),
        _MemoryTool.from_function(save, coroutine=asave, name="save_memory", description=SAVE_DESCRIPTION,
                                  limits=limits),
        _MemoryTool.from_function(forget, coroutine=aforget, name="forget_memory", description=FORGET_DESCRIPTION,
                                  limits=limits),
    ]


def _runtime_tools(ops: MemoryOps) -> list[BaseTool]:
    """Tools that read the scope from the injected ``ToolRuntime``."""
    def search_memory(query: Query, runtime: AnyToolRuntime, limit: Limit = None) -> str:
        return ops.search(_scope(runtime, "search_memory"), query, limit)

    async def asearch_memory(query: Query, runtime: AnyToolRuntime, limit: Limit = None) -> str:
        return await ops.asearch(_scope(runtime, "search_memory"), query, limit)

    def save_memory(content: Content, runtime: AnyToolRuntime) -> str:
        return ops.save(_scope(runtime, "save_memory"), content)

    async def asave_memory(content: Content, runtime: AnyToolRuntime) -> str:
        return await ops.asave(_scope(runtime, "save_memory"), content)

    def forget_memory(memory_id: MemoryId, runtime: AnyToolRuntime) -> str:
        return ops.forget(_scope(runtime, "forget_memory"), memory_id)

    async def aforget_memory(memory_id: MemoryId, runtime: AnyToolRuntime) -> str:
        return await ops.aforget(_scope(runtime, "forget_memory"), memory_id)

    return _tools(ops, search_memory, asearch_memory, save_memory, asave_memory, forget_memory, aforget_memory)


def _bound_tools(ops: MemoryOps, own: MemoryScope) -> list[BaseTool]:
    """Tools built for one user (no runtime: usable with ``tool.invoke`` anywhere); in a
    run, the run must be that user's (:mod:`.scope`)."""
    defaults = {"user_id": own.user_id, "session_id": own.session_id, "workspace_id": own.workspace_id,
                "branch": own.branch}

    def scope(tool: str) -> MemoryScope:
        return resolve_scope(current_context(), current_config(), what=f"tool {tool}", defaults=defaults)

    def search_memory(query: Query, limit: Limit = None) -> str:
        return ops.search(scope("search_memory"), query, limit)

    async def asearch_memory(query: Query, limit: Limit = None) -> str:
        return await ops.asearch(scope("search_memory"), query, limit)

    def save_memory(content: Content) -> str:
        return ops.save(scope("save_memory"), content)

    async def asave_memory(content: Content) -> str:
        return await ops.asave(scope("save_memory"), content)

    def forget_memory(memory_id: MemoryId) -> str:
        return ops.forget(scope("forget_memory"), memory_id)

    async def aforget_memory(memory_id: MemoryId) -> str:
        return await ops.aforget(scope("forget_memory"), memory_id)

    return _tools(ops, search_memory, asearch_memory, save_memory, asave_memory, forget_memory, aforget_memory)
