"""Agent middleware for LangChain v1 ``create_agent``: recall before the model, remember after.

Recall uses the default search path (zero LLM calls); remembering writes the last turn
(the latest user message and everything after it) through ``client.add`` with
``scene=None``, so routing decides chat vs working/coding.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.errors import MissingExtraError
from hy_memory_langgraph.integrations.nodes import last_turn, recall_query, with_block
from hy_memory_langgraph.integrations.render import render_memories
from hy_memory_langgraph.integrations.scope import current_config, resolve_scope

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
except ModuleNotFoundError as exc:  # the optional ``langchain`` package (LangChain v1)
    raise MissingExtraError("HyMemoryMiddleware needs LangChain v1 (langchain.agents.middleware): "
                            "pip install 'hy-memory-langgraph[agents]'") from exc

UserResolver = str | Callable[[Runtime[Any]], str]


class HyMemoryMiddleware(AgentMiddleware):
    """Give a ``create_agent`` agent long-term memory.

    Args:
        client: The memory client.
        user_id: The user this middleware is for, or a function of the runtime returning
            it; ``None`` follows the run (``runtime.context.user_id``, then
            ``config["configurable"]["user_id"]``), as the memory nodes do. A run naming
            another user than this one raises
            :class:`~hy_memory_langgraph.errors.ForeignUserError`; no user anywhere raises
            :class:`~hy_memory_langgraph.errors.MissingContextError` (one rule for every
            face: :mod:`~hy_memory_langgraph.integrations.scope`).
        limit: How many memories are recalled per model call.
        remember: Whether the last turn is written after each run.
        background: Queue that write (pro mode: the run ends without waiting for the
            model calls of memory; the next search finds the turn at once); ``False``
            writes it before the run ends. Lite mode writes at once either way.

    Example:
        >>> from langchain.agents import create_agent  # doctest: +SKIP
        >>> agent = create_agent(model, middleware=[HyMemoryMiddleware(client, user_id="u1")])  # doctest: +SKIP
    """

    def __init__(self, client: HyMemoryClient, *, user_id: UserResolver | None = None, limit: int = 5,
                 remember: bool = True, background: bool = True) -> None:
        super().__init__()
        self.client = client
        self.user_id = user_id
        self.limit = limit
        self.remember = remember
        self.background = background

    def _user(self, runtime: Runtime[Any]) -> str:
        own = self.user_id(runtime) if callable(self.user_id) else self.user_id
        return resolve_scope(runtime.context, current_config(), what="HyMemoryMiddleware",
                             defaults={"user_id": own}).user_id

    def _with_memories(self, request: ModelRequest, memories: list[dict[str, Any]]) -> ModelRequest:
        block = render_memories(memories)
        if not block:
            return request
        return request.override(system_message=with_block(request.system_message, block))

    def _query(self, request: ModelRequest) -> str | None:
        return recall_query(request.messages, self.client.config.limits)

    def wrap_model_call(self, request: ModelRequest,
                        handler: Callable[[ModelRequest], ModelResponse]) -> ModelResponse:
        query = self._query(request)
        if query is None:
            return handler(request)
        found = self.client.search(query, user_ids=[self._user(request.runtime)], limit=self.limit)
        return handler(self._with_memories(request, found["memories"]))

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelResponse:
        query = self._query(request)
        if query is None:
            return await handler(request)
        found = await self.client.asearch(query, user_ids=[self._user(request.runtime)], limit=self.limit)
        return await handler(self._with_memories(request, found["memories"]))

    def _last_turn(self, state: dict[str, Any]) -> list[BaseMessage]:
        return last_turn(list(state.get("messages") or []))

    def after_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        turn = self._last_turn(state)
        if self.remember and turn:
            self.client.add(turn, user_id=self._user(runtime), background=self.background)
        return None

    async def aafter_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        turn = self._last_turn(state)
        if self.remember and turn:
            await self.client.aadd(turn, user_id=self._user(runtime), background=self.background)
        return None
