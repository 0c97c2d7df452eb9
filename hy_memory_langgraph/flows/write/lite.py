"""The lite chat write as a one-node graph.

In lite mode a write whose ``scene`` is ``None`` or ``"chat"`` always ends in the chat
pipeline's ``store_turns`` (lite mode has no scene judge; tool traces are stripped), so
the write graph's routing has nothing to decide for it. The client runs such writes
through :func:`build_lite_chat_graph` instead: one graph step, which runs the write
graph's own nodes in the order the write graph would (``prepare``, ``strip_tools`` when
the messages carry a tool trace, ``store_turns``), each recorded as its own stage of the
pipeline log. A LangGraph step and a conditional edge cost about a quarter of a
millisecond, a tenth of a lite ``add`` with a cached embedding (``python -m
bench.lite_add_cost default write-graph``, docs/benchmarks.md "Lite ingest").

The graph's input holds the write's arguments under one key, ``write``
(:class:`LiteChatInput`): a LangGraph run costs a channel per key of its state, and the
arguments' ten keys as channels cost about 0.09 ms a run, for nothing (only the node
reads them).
"""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from hy_memory_langgraph.flows.chat.nodes import store_turns
from hy_memory_langgraph.flows.contracts import ResultOutput
from hy_memory_langgraph.flows.stages import recorded
from hy_memory_langgraph.flows.write.nodes import prepare_write, strip_tools
from hy_memory_langgraph.flows.write.state import WriteArgs, WriteState
from hy_memory_langgraph.messages import has_tool_trace
from hy_memory_langgraph.scenes import DEFAULT_SCENE
from hy_memory_langgraph.services.context import MemoryContext

__all__ = ["LiteChatInput", "LiteChatState", "build_lite_chat_graph", "lite_chat_write", "runs_lite_chat"]

_GRAPH = "memory_write"  # its stages are the write graph's
_PREPARE = recorded(_GRAPH, "prepare", prepare_write)
_STRIP = recorded(_GRAPH, "strip_tools", strip_tools)
_STORE = recorded(_GRAPH, "store_turns", store_turns)


def runs_lite_chat(context: MemoryContext, scene: object) -> bool:
    """Whether a write with ``scene`` ends in lite chat's ``store_turns`` whatever its
    messages (lite mode, no judge model, ``scene`` ``None`` or chat)."""
    return context.mode == "lite" and context.llm is None and scene in (None, DEFAULT_SCENE)


class LiteChatInput(TypedDict):
    """Input of the lite chat graph: the write graph's input under one key.

    Example:
        >>> LiteChatInput(write=WriteArgs(request_id="r1", messages="I like tea", user_id="u1"))
        {'write': {'request_id': 'r1', 'messages': 'I like tea', 'user_id': 'u1'}}
    """

    write: WriteArgs


class LiteChatState(LiteChatInput, total=False):
    """State of the lite chat graph: the write's arguments, then its result. The write
    state the stages pass each other lives inside the one node (a graph's per-step cost
    grows with the keys of its state)."""

    result: dict[str, Any]


def lite_chat_write(state: LiteChatState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """``prepare`` → (``strip_tools``) → ``store_turns`` in one node."""
    merged: WriteState = {**state["write"]}  # type: ignore[typeddict-item]
    merged.update(_PREPARE(merged, runtime))
    if merged["route"] != DEFAULT_SCENE:
        raise AssertionError(f"runs_lite_chat admitted a write routed to {merged['route']!r}")
    if has_tool_trace(merged["msgs"]):
        merged.update(_STRIP(merged, runtime))
    return {"result": _STORE(merged, runtime)["result"]}


def build_lite_chat_graph() -> CompiledStateGraph[LiteChatState, MemoryContext, LiteChatInput, ResultOutput]:
    """START → ``lite_chat`` → END: the write graph's input under ``write``, its output.

    Example:
        >>> list(build_lite_chat_graph().get_graph().nodes)
        ['__start__', 'lite_chat', '__end__']
    """
    builder = StateGraph(LiteChatState, context_schema=MemoryContext, input_schema=LiteChatInput,
                         output_schema=ResultOutput)
    builder.add_node("lite_chat", lite_chat_write)
    builder.add_edge(START, "lite_chat")
    builder.add_edge("lite_chat", END)
    # One task per step: a worker limit spares each run's thread pool a CPU count lookup
    # (a few system calls, ~1% of a lite add).
    return builder.compile(name=_GRAPH).with_config(max_concurrency=1)
