"""The write graph behind ``client.add``: route a prepared write, then a scene pipeline
(a subgraph, or for lite chat writes the single ``store_turns`` node)."""

from __future__ import annotations

from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph

from hy_memory_langgraph.flows import families
from hy_memory_langgraph.flows.chat.graph import build_chat_graph
from hy_memory_langgraph.flows.chat.nodes import store_turns
from hy_memory_langgraph.flows.contracts import PreparedWrite, ResultOutput
from hy_memory_langgraph.flows.write.nodes import (
    judge_scene,
    route_after_judge,
    route_after_route,
    route_to_chat,
    route_write,
    strip_tools,
)
from hy_memory_langgraph.flows.write.state import WriteState
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.stages import recorded_graph


def build_write_graph() -> CompiledStateGraph[WriteState, MemoryContext, PreparedWrite,
                                              ResultOutput]:
    """route → (judge_scene) → (strip_tools) → chat | store_turns | a family (productivity).

    Its input is a write the client prepared
    (:func:`~hy_memory_langgraph.flows.write.prepare.prepare_write`).

    Example:
        >>> "judge_scene" in build_write_graph().get_graph().nodes
        True
    """
    builder = recorded_graph("memory_write", WriteState, MemoryContext, {
        "route": route_write,
        "judge_scene": judge_scene,
        "strip_tools": strip_tools,
        "store_turns": store_turns,
    }, input_schema=PreparedWrite, output_schema=ResultOutput)
    families.check_scene_families()
    builder.add_node("chat", build_chat_graph())
    family_nodes = [f.write_node for f in families.FAMILIES.values()]
    for family in families.FAMILIES.values():
        builder.add_node(family.write_node, family.build_write())
    builder.add_edge(START, "route")
    builder.add_conditional_edges("route", route_after_route,
                                  ["chat", "store_turns", "judge_scene", "strip_tools", *family_nodes])
    builder.add_conditional_edges("judge_scene", route_after_judge, ["strip_tools", *family_nodes])
    builder.add_conditional_edges("strip_tools", route_to_chat, ["chat", "store_turns"])
    for node in ("chat", "store_turns", *family_nodes):
        builder.add_edge(node, END)
    return builder.compile(name="memory_write")
