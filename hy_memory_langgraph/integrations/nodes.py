"""Memory nodes for any LangGraph ``StateGraph`` over ``MessagesState``.

* :func:`create_recall_node`: searches the user's memories with the latest user
  message (default search, zero LLM calls) and returns
  ``{"llm_input_messages": [memory system message, *messages]}`` (the model's input for
  this step) and, by default, the block as ONE system message of ``messages`` with a
  stable id, replaced each turn, so a plain ``MessagesState`` model node reading
  ``state["messages"]`` sees it too and the history never grows by a block per turn.
* :func:`create_remember_node`: writes the finished turn (the latest user message and
  everything after it, tool calls included) through ``client.add``; it does nothing
  while the turn is unfinished (the last message is a model reply asking for tools).

For ``langchain.agents.create_agent`` use :class:`~hy_memory_langgraph.integrations.HyMemoryMiddleware`
instead (the same recall and remember as agent middleware). In your own graph either call
the model on ``state["messages"]`` (START → recall → model → remember), or declare the
model node's state as :class:`MemoryState` (``MessagesState`` plus ``llm_input_messages``,
the key LangGraph's older prebuilt agent read after its ``pre_model_hook``) and call it on
``state["llm_input_messages"]``; ``keep_in_history=False`` leaves ``messages`` alone. Route
tool results back through the recall node so the input stays current.

Each node is one ``Runnable`` with a sync and an async body, so it serves
``graph.invoke`` and ``graph.ainvoke`` alike (the async body awaits ``client.asearch`` /
``client.aadd``). Whose memory: see :mod:`.scope` (runtime context or
``config["configurable"]``; ``thread_id`` is the session).

Example:
    >>> builder = StateGraph(MessagesState)  # doctest: +SKIP
    >>> builder.add_node("recall", create_recall_node(client))  # doctest: +SKIP
    >>> builder.add_node("model", call_model)  # reads state["llm_input_messages"]  # doctest: +SKIP
    >>> builder.add_node("remember", create_remember_node(client))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
)
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph import MessagesState
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.integrations.render import render_memory_block
from hy_memory_langgraph.integrations.scope import MemoryScope, current_context, resolve_scope
from hy_memory_langgraph.limits import Limits
from hy_memory_langgraph.models.embeddings import WINDOW_JOIN, head_tail_bytes
from hy_memory_langgraph.scenes import validate_scene


class MemoryState(MessagesState, total=False):
    """``MessagesState`` plus ``llm_input_messages``: what the model sees this step.

    The recall node writes ``llm_input_messages`` (the memory block as a system
    message, then the history); only ``messages`` is the conversation.
    """

    llm_input_messages: list[AnyMessage]


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInputError(f"k={k!r} is invalid: pass a positive number of memories to recall")
    return k


def recall_query(messages: Sequence[BaseMessage], limits: Limits) -> str | None:
    """The latest user message's text as a search query (``None`` without one), held to
    ``MEMORY_MAX_QUERY_BYTES``: a longer message gives its head and tail, so a pasted
    document never makes a recall refuse the turn.

    Example:
        >>> recall_query([HumanMessage("a" * 50 + "b" * 50)], Limits(max_query_bytes=30))
        'aaaaaaaaaaaa … bbbbbbbbbbbb'
    """
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            text = str(message.text).strip()
            return head_tail_bytes(text, limits.max_query_bytes - len(WINDOW_JOIN.encode("utf-8"))) or None
    return None


def last_turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The latest user message and everything after it (``[]`` without a user message)."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return list(messages[index:])
    return []


def _with_memory_block(messages: Sequence[BaseMessage], block: str) -> list[BaseMessage]:
    """``messages`` with ``block`` added as system text (merged into a leading system
    message, else prepended); ``messages`` unchanged when ``block`` is empty."""
    messages = list(messages)
    if not block:
        return messages
    if messages and isinstance(messages[0], SystemMessage):
        return [with_block(messages[0], block), *messages[1:]]
    return [SystemMessage(content=block), *messages]


def with_block(system: SystemMessage | None, block: str) -> SystemMessage:
    """The system message with the memory block after it; a message given as content
    blocks keeps them and gains one text block (never their ``str()``)."""
    if system is None or not system.content:
        return SystemMessage(content=block, id=None if system is None else system.id)
    if isinstance(system.content, str):
        return SystemMessage(content=f"{system.content}\n\n{block}", id=system.id)
    return SystemMessage(content=[*system.content, {"type": "text", "text": block}], id=system.id)


def _recall_update(messages: Sequence[BaseMessage], block: str, *, memory_id: str,
                  keep_in_history: bool = True) -> dict[str, Any]:
    """The state update of a recall: ``llm_input_messages`` always; with
    ``keep_in_history`` a ``messages`` update holding the block as one system message
    ``memory_id`` (an earlier one replaced; removed when ``block`` is empty).

    Example:
        >>> update = _recall_update([HumanMessage("hi", id="h1")], "- likes tea", memory_id="m")
        >>> [(type(m).__name__, m.id) for m in update["messages"][1:]]
        [('SystemMessage', 'm'), ('HumanMessage', 'h1')]
    """
    history = [m for m in messages if m.id != memory_id]
    out: dict[str, Any] = {"llm_input_messages": _with_memory_block(history, block)}
    if not keep_in_history:
        return out
    if not block:
        if len(history) != len(messages):
            out["messages"] = [RemoveMessage(id=memory_id)]
        return out
    at = 1 if history and isinstance(history[0], SystemMessage) else 0
    memory = SystemMessage(content=block, id=memory_id)
    out["messages"] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *history[:at], memory, *history[at:]]
    return out


def _scope(config: RunnableConfig | None, what: str) -> MemoryScope:
    return resolve_scope(current_context(), config, what=what)


def create_recall_node(client: HyMemoryClient, *, scene: str | None = None, k: int = 5,
                       name: str = "recall_memories", keep_in_history: bool = True) -> RunnableLambda:
    """A node that puts the user's relevant memories in front of the model.

    Args:
        client: The memory client.
        scene: ``None`` (chat memories, default search, zero LLM calls), ``"chat"``,
            ``"working"`` or ``"coding"`` (facts, experiences and, for coding, the
            version chain block; explicit scene, zero LLM calls).
        k: Memories recalled (per layer for working/coding).
        name: The node's name when added without one.
        keep_in_history: Also put the block in ``messages`` as ONE system message with
            the stable id ``hy_memory:<name>`` (after a leading system message, else
            first), replaced each turn and removed when nothing is recalled, so a plain
            ``MessagesState`` model node that calls ``model.invoke(state["messages"])``
            sees it and the history never grows by a memory message per turn.
            ``False`` leaves ``messages`` alone (``llm_input_messages`` only).

    Returns:
        A node returning ``{"llm_input_messages": [...]}`` (the history with the memory
        block merged into its leading system text; the history alone when nothing was
        recalled or there is no user message yet) and, with ``keep_in_history``, the
        ``messages`` update above.

    Raises:
        MissingContextError: At run time, when no ``user_id`` is in the context or config.

    Example:
        >>> recall = create_recall_node(client, k=3)  # doctest: +SKIP
        >>> builder.add_sequence([("recall", recall), ("model", call_model)])  # doctest: +SKIP
    """
    scene, k = validate_scene(scene), _check_k(k)

    def search_args(state: dict[str, Any], config: RunnableConfig | None) -> dict[str, Any] | None:
        query = recall_query(state.get("messages") or [], client.config.limits)
        if query is None:
            return None
        scope = _scope(config, name)
        return {"query": query, "scene": scene, "user_ids": [scope.user_id], "limit": k,
                "workspace_id": scope.workspace_id, "branch": scope.branch}

    def update(state: dict[str, Any], result: dict[str, Any] | None) -> dict[str, Any]:
        block = "" if result is None else render_memory_block(result)
        return _recall_update(state.get("messages") or [], block, memory_id=f"hy_memory:{name}",
                             keep_in_history=keep_in_history)

    def recall(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        args = search_args(state, config)
        return update(state, None if args is None else client.search(**args))

    async def arecall(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        args = search_args(state, config)
        return update(state, None if args is None else await client.asearch(**args))

    return RunnableLambda(recall, afunc=arecall, name=name)


def create_remember_node(client: HyMemoryClient, *, scene: str | None = None,
                         name: str = "remember_turn", background: bool = True) -> RunnableLambda:
    """A node that writes the finished turn to the user's memory.

    Args:
        client: The memory client.
        scene: Passed to ``client.add``; ``None`` lets routing decide (chat without
            tools; with tool calls one judge call in pro mode, chat in lite mode).
        name: The node's name when added without one.
        background: Queue the write (pro mode: the turn ends without waiting for the
            model calls of memory; a search finds the turn at once); ``False`` writes
            it before the node returns. Lite mode writes at once either way.

    Returns:
        A node returning ``{}``: it writes the latest user message and everything after
        it, once the last message is a model reply without tool calls (so as a
        ``post_model_hook`` it writes each turn once, at its end).

    Raises:
        MissingContextError: At run time, when no ``user_id`` is in the context or config.

    Example:
        >>> remember = create_remember_node(client)  # doctest: +SKIP
        >>> builder.add_edge("model", "remember")  # doctest: +SKIP
    """
    scene = validate_scene(scene)

    def add_args(state: dict[str, Any], config: RunnableConfig | None) -> dict[str, Any] | None:
        turn = last_turn(state.get("messages") or [])
        finished = bool(turn) and isinstance(turn[-1], AIMessage) and not turn[-1].tool_calls
        if not finished:
            return None
        scope = _scope(config, name)
        return {"messages": turn, "scene": scene, "user_id": scope.user_id,
                "session_id": scope.session_id, "workspace_id": scope.workspace_id,
                "branch": scope.branch, "background": background}

    def remember(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        args = add_args(state, config)
        if args is not None:
            client.add(**args)
        return {}

    async def aremember(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        args = add_args(state, config)
        if args is not None:
            await client.aadd(**args)
        return {}

    return RunnableLambda(remember, afunc=aremember, name=name)
