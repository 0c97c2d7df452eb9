"""The workflow-memory extraction graph (``workflow.memoryExtract``)."""

from __future__ import annotations

from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph

from hy_memory_langgraph.services.stages import recorded_graph
from hy_memory_langgraph.workflow.nodes import (
    extract_lite,
    extract_llm,
    merge_and_save,
    route_by_mode,
    route_dimensions,
    validate_input,
)
from hy_memory_langgraph.workflow.state import (
    WorkflowContext,
    WorkflowExtractState,
)


def build_workflow_extract_graph() -> CompiledStateGraph:
    """validate → extract (LLM in pro, rules in lite) → route dimensions → merge + save.

    Example:
        >>> sorted(build_workflow_extract_graph().get_graph().nodes)[2:4]
        ['extract_lite', 'extract_llm']
    """
    builder = recorded_graph("workflow_extract", WorkflowExtractState, WorkflowContext, {
        "validate_input": validate_input,
        "extract_llm": extract_llm,
        "extract_lite": extract_lite,
        "route_dimensions": route_dimensions,
        "merge_and_save": merge_and_save,
    })
    builder.add_edge(START, "validate_input")
    builder.add_conditional_edges("validate_input", route_by_mode, ["extract_llm", "extract_lite"])
    builder.add_edge("extract_llm", "route_dimensions")
    builder.add_edge("extract_lite", "route_dimensions")
    builder.add_edge("route_dimensions", "merge_and_save")
    builder.add_edge("merge_and_save", END)
    return builder.compile(name="workflow_extract")
