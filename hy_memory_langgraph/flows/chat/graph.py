"""The chat write subgraph (pro mode): input ``PreparedWrite``, output ``result``."""

from __future__ import annotations

from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph

from hy_memory_langgraph.flows.chat.nodes import (
    apply_decisions,
    extract_facts,
    finish_chat,
    gather_candidates,
    reconcile,
    route_after_candidates,
    route_after_extract,
    store_turns,
)
from hy_memory_langgraph.flows.chat.state import ChatWriteState
from hy_memory_langgraph.flows.contracts import PreparedWrite, ResultOutput
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.stages import recorded_graph


def build_chat_graph() -> CompiledStateGraph[ChatWriteState, MemoryContext, PreparedWrite,
                                             ResultOutput]:
    """extract → candidates → reconcile → apply; the turns stored when extraction fails.

    Lite mode stores turns without this subgraph (``store_turns`` is a node of the write
    graph), which spares a lite write a nested graph run.

    Example:
        >>> graph = build_chat_graph()
        >>> sorted(graph.get_graph().nodes)[:3]
        ['__end__', '__start__', 'apply_decisions']
    """
    builder = recorded_graph("chat_write", ChatWriteState, MemoryContext, {
        "store_turns": store_turns,
        "extract_facts": extract_facts,
        "gather_candidates": gather_candidates,
        "reconcile": reconcile,
        "apply_decisions": apply_decisions,
        "finish_chat": finish_chat,
    }, input_schema=PreparedWrite, output_schema=ResultOutput)
    builder.add_edge(START, "extract_facts")
    builder.add_conditional_edges("extract_facts", route_after_extract,
                                  ["store_turns", "gather_candidates", "finish_chat"])
    builder.add_conditional_edges("gather_candidates", route_after_candidates,
                                  ["reconcile", "apply_decisions"])
    builder.add_edge("reconcile", "apply_decisions")
    builder.add_edge("apply_decisions", "finish_chat")
    builder.add_edge("store_turns", END)
    builder.add_edge("finish_chat", END)
    return builder.compile(name="chat_write")
