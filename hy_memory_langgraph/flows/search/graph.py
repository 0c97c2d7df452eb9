"""The search graph behind ``client.search``."""

from __future__ import annotations

from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph

from hy_memory_langgraph.flows import families
from hy_memory_langgraph.flows.chat.retrieval import chat_search
from hy_memory_langgraph.flows.contracts import PreparedSearch, ResultOutput
from hy_memory_langgraph.flows.search.nodes import (
    analyze_query,
    route_after_analysis,
    route_after_route_search,
    route_search,
)
from hy_memory_langgraph.flows.search.state import SearchState
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.stages import recorded_graph


def build_search_graph() -> CompiledStateGraph[SearchState, MemoryContext, PreparedSearch,
                                               ResultOutput]:
    """route → (analyze_query) → chat_search | a family's search (productivity_search).

    Its input is a search the client prepared
    (:func:`~hy_memory_langgraph.flows.search.prepare.prepare_search`).

    Example:
        >>> "analyze_query" in build_search_graph().get_graph().nodes
        True
    """
    builder = recorded_graph("memory_search", SearchState, MemoryContext, {
        "route": route_search,
        "analyze_query": analyze_query,
        "chat_search": chat_search,
    }, input_schema=PreparedSearch, output_schema=ResultOutput)
    families.check_scene_families()
    for family in families.FAMILIES.values():
        builder.add_node(family.search_node, family.build_search())
    builder.add_edge(START, "route")
    retrieval = ["chat_search", *(f.search_node for f in families.FAMILIES.values())]
    builder.add_conditional_edges("route", route_after_route_search, ["analyze_query", *retrieval])
    builder.add_conditional_edges("analyze_query", route_after_analysis, retrieval)
    for node in retrieval:
        builder.add_edge(node, END)
    return builder.compile(name="memory_search")
