"""The productivity (working / coding) subgraphs. Placeholder until the dual-layer pipeline lands."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from hy_memory_langgraph.nodes.context import MemoryContext
from hy_memory_langgraph.nodes.state import SearchState, WriteState

__all__ = ["build_productivity_graph", "build_productivity_search_graph"]


def _pending(state: Any) -> dict[str, Any]:
    raise NotImplementedError("the working/coding pipeline is not implemented yet")


def build_productivity_graph() -> CompiledStateGraph:
    builder = StateGraph(WriteState, context_schema=MemoryContext)
    builder.add_node("productivity_write", _pending)
    builder.add_edge(START, "productivity_write")
    builder.add_edge("productivity_write", END)
    return builder.compile(name="productivity_write")


def build_productivity_search_graph() -> CompiledStateGraph:
    builder = StateGraph(SearchState, context_schema=MemoryContext)
    builder.add_node("productivity_search", _pending)
    builder.add_edge(START, "productivity_search")
    builder.add_edge("productivity_search", END)
    return builder.compile(name="productivity_search")
