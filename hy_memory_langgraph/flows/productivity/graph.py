"""The productivity subgraphs (working, coding): the dual-layer write and its search.

One structure for every productivity scene; the scene (``route``) picks the extraction
prompt, the store file and the vector collections. Input ``PreparedWrite`` /
``PreparedSearch``, output ``result``. Write::

    prepare → lite_fact ─────────────────────────────────────────────→ insert_fact → finish
    prepare → extract → [experience drafts] gather_experience_candidates
                            → [candidates] reconcile_experiences → apply_experiences
                            → [no candidates]                      apply_experiences
                      → [fact] gather_fact_candidates
                            → [candidates] reconcile_fact → [superseded] summarize_progress
                            → insert_fact → finish
                      → [nothing usable] finish

Every path into ``finish`` passes ``record_chain`` first (coding only, zero LLM: the
version-evolution chain, best effort; see :mod:`hy_memory_langgraph.flows.productivity.chain`).

LLM calls per write: lite 0; pro 1 (extract) + 1 if some experience draft has
candidates + 1 if the fact has candidates + 1 if it superseded older facts.

Search: search_facts (one store batch for both layers) → search_experiences
→ chain_block (coding, opt-in) → finish.
"""

from __future__ import annotations

from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from hy_memory_langgraph.flows.contracts import (
    PreparedSearch,
    PreparedWrite,
    ResultOutput,
)
from hy_memory_langgraph.flows.productivity.chain import chain_block, record_chain
from hy_memory_langgraph.flows.productivity.experiences import (
    apply_experiences,
    gather_experience_candidates,
    reconcile_experiences,
    route_after_experience_candidates,
)
from hy_memory_langgraph.flows.productivity.extract import extract_productivity
from hy_memory_langgraph.flows.productivity.facts import (
    gather_fact_candidates,
    insert_fact,
    reconcile_fact,
    route_after_fact_candidates,
    route_after_fact_reconcile,
    summarize_progress,
)
from hy_memory_langgraph.flows.productivity.input import prepare_productivity
from hy_memory_langgraph.flows.productivity.lite import lite_fact
from hy_memory_langgraph.flows.productivity.result import finish_productivity
from hy_memory_langgraph.flows.productivity.retrieval import (
    finish_productivity_search,
    search_experiences,
    search_facts,
)
from hy_memory_langgraph.flows.productivity.state import (
    ProductivitySearchState,
    ProductivityWriteState,
)
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.stages import recorded_graph


def _route_by_mode(state: ProductivityWriteState, runtime: Runtime[MemoryContext]) -> str:
    return "extract" if runtime.context.mode == "pro" and runtime.context.llm else "lite_fact"


def _after_extract(state: ProductivityWriteState) -> str:
    if state.get("experience_drafts"):
        return "gather_experience_candidates"
    return _to_fact(state)


def _to_fact(state: ProductivityWriteState) -> str:
    return "gather_fact_candidates" if state.get("fact_draft") else "finish"


def build_productivity_graph() -> CompiledStateGraph[
        ProductivityWriteState, MemoryContext, PreparedWrite, ResultOutput]:
    """The productivity write subgraph.

    Example:
        >>> "reconcile_fact" in build_productivity_graph().get_graph().nodes
        True
    """
    b = recorded_graph("productivity_write", ProductivityWriteState, MemoryContext, {
        "prepare": prepare_productivity,
        "lite_fact": lite_fact,
        "extract": extract_productivity,
        "gather_experience_candidates": gather_experience_candidates,
        "reconcile_experiences": reconcile_experiences,
        "apply_experiences": apply_experiences,
        "gather_fact_candidates": gather_fact_candidates,
        "reconcile_fact": reconcile_fact,
        "summarize_progress": summarize_progress,
        "insert_fact": insert_fact,
        "record_chain": record_chain,
        "finish": finish_productivity,
    }, input_schema=PreparedWrite, output_schema=ResultOutput)
    b.add_edge(START, "prepare")
    b.add_conditional_edges("prepare", _route_by_mode, ["extract", "lite_fact"])
    b.add_edge("lite_fact", "insert_fact")
    b.add_conditional_edges("extract", _after_extract,
                            {"gather_experience_candidates": "gather_experience_candidates",
                             "gather_fact_candidates": "gather_fact_candidates",
                             "finish": "record_chain"})
    b.add_conditional_edges("gather_experience_candidates", route_after_experience_candidates,
                            ["reconcile_experiences", "apply_experiences"])
    b.add_edge("reconcile_experiences", "apply_experiences")
    b.add_conditional_edges("apply_experiences", _to_fact,
                            {"gather_fact_candidates": "gather_fact_candidates",
                             "finish": "record_chain"})
    b.add_conditional_edges("gather_fact_candidates", route_after_fact_candidates,
                            ["reconcile_fact", "insert_fact"])
    b.add_conditional_edges("reconcile_fact", route_after_fact_reconcile,
                            ["summarize_progress", "insert_fact"])
    b.add_edge("summarize_progress", "insert_fact")
    b.add_edge("insert_fact", "record_chain")
    b.add_edge("record_chain", "finish")
    b.add_edge("finish", END)
    return b.compile(name="productivity_write")


def build_productivity_search_graph() -> CompiledStateGraph[
        ProductivitySearchState, MemoryContext, PreparedSearch, ResultOutput]:
    """The productivity search subgraph.

    Example:
        >>> "search_facts" in build_productivity_search_graph().get_graph().nodes
        True
    """
    b = recorded_graph("productivity_search", ProductivitySearchState, MemoryContext, {
        "search_facts": search_facts,
        "search_experiences": search_experiences,
        "chain_block": chain_block,
        "finish": finish_productivity_search,
    }, input_schema=PreparedSearch, output_schema=ResultOutput)
    b.add_edge(START, "search_facts")
    b.add_edge("search_facts", "search_experiences")
    b.add_edge("search_experiences", "chain_block")
    b.add_edge("chain_block", "finish")
    b.add_edge("finish", END)
    return b.compile(name="productivity_search")
