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

The graph is built on LangGraph's runtime (:class:`~langgraph.pregel.Pregel`, what a
``StateGraph`` compiles to) with two channels: the write's arguments in, the result out.
A ``StateGraph`` would give each key of its state a channel and merge the node's update
into them; with nothing to route or merge, that cost about 0.2 ms of a 2.5 ms lite
``add``, for nothing. The input and output are the write graph's.
"""

from __future__ import annotations

from typing import Any

from langgraph.channels import EphemeralValue, LastValue
from langgraph.pregel import NodeBuilder, Pregel
from langgraph.runtime import Runtime

from hy_memory_langgraph.flows.chat.nodes import store_turns
from hy_memory_langgraph.flows.stages import recorded
from hy_memory_langgraph.flows.write.nodes import prepare_write, strip_tools
from hy_memory_langgraph.flows.write.state import WriteArgs, WriteState
from hy_memory_langgraph.messages import has_tool_trace
from hy_memory_langgraph.scenes import DEFAULT_SCENE
from hy_memory_langgraph.services.context import MemoryContext

__all__ = ["build_lite_chat_graph", "lite_chat_write", "runs_lite_chat"]

_GRAPH = "memory_write"  # its stages are the write graph's
_PREPARE = recorded(_GRAPH, "prepare", prepare_write)
_STRIP = recorded(_GRAPH, "strip_tools", strip_tools)
_STORE = recorded(_GRAPH, "store_turns", store_turns)
_WRITE, _RESULT = "write", "result"  # the graph's channels


def runs_lite_chat(context: MemoryContext, scene: object) -> bool:
    """Whether a write with ``scene`` ends in lite chat's ``store_turns`` whatever its
    messages (lite mode, no judge model, ``scene`` ``None`` or chat)."""
    return context.mode == "lite" and context.llm is None and scene in (None, DEFAULT_SCENE)


def lite_chat_write(args: WriteArgs, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """``prepare`` → (``strip_tools``) → ``store_turns`` in one node; returns the result."""
    state: WriteState = {**args}  # type: ignore[typeddict-item]
    state.update(_PREPARE(state, runtime))
    if state["route"] != DEFAULT_SCENE:
        raise AssertionError(f"runs_lite_chat admitted a write routed to {state['route']!r}")
    if has_tool_trace(state["msgs"]):
        state.update(_STRIP(state, runtime))
    result: dict[str, Any] = _STORE(state, runtime)["result"]
    return result


def build_lite_chat_graph() -> Pregel[Any, MemoryContext, WriteArgs, Any]:
    """START → ``lite_chat`` → END: takes the write graph's input (``WriteArgs``) and
    returns its output (``{"result": ...}``).

    Example:
        >>> sorted(build_lite_chat_graph().get_graph().nodes)
        ['__end__', '__start__', 'lite_chat']
    """
    node = NodeBuilder().subscribe_only(_WRITE).do(lite_chat_write).write_to(_RESULT)
    # One task per step: a worker limit spares each run's thread pool a CPU count lookup
    # (a few system calls, ~1% of a lite add).
    return Pregel(nodes={"lite_chat": node},
                  channels={_WRITE: EphemeralValue(dict), _RESULT: LastValue(dict)},
                  input_channels=_WRITE, output_channels=[_RESULT], context_schema=MemoryContext,
                  name=_GRAPH, config={"max_concurrency": 1})
