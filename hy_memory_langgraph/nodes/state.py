"""Graph state schemas and the scene vocabulary."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

from hy_memory_langgraph.messages import Msg

__all__ = ["SEARCH_MODES", "WriteState", "SearchState"]

SEARCH_MODES: tuple[str, ...] = ("default", "agentic")


class WriteState(TypedDict, total=False):
    """State of the write graph (``client.add``)."""

    # input
    messages: Any
    scene: str | None
    user_id: str
    agent_id: str | None
    session_id: str | None
    workspace_id: str | None
    branch: str | None
    metadata: dict[str, Any]
    memory_at: Any
    # derived
    request_id: str
    started: float
    at: datetime
    msgs: list[Msg]
    route: str
    route_reason: str
    # chat pipeline
    facts: list[dict[str, Any]]
    candidates: list[Any]
    decisions: list[dict[str, Any]]
    fallback: str | None
    # productivity pipeline (working / coding)
    variant: str
    lang: str
    touched_files: list[str]
    experience_drafts: list[dict[str, Any]]
    fact_draft: dict[str, Any] | None
    experience_candidates: list[list[dict[str, Any]]]
    experience_decisions: list[dict[str, Any]]
    experience_ops: list[dict[str, Any]]
    linked_experience_ids: list[str]
    fact_candidates: list[dict[str, Any]]
    superseded_ids: list[str]
    progress_summary: str | None
    fact_ops: list[dict[str, Any]]
    fact_id: str | None
    chain_rounds: int
    # output
    result: dict[str, Any]


class SearchState(TypedDict, total=False):
    """State of the search graph (``client.search``)."""

    query: str | None
    queries: list[str] | None
    scene: str | None
    search_mode: str
    user_ids: list[str]
    workspace_id: str | None
    branch: str | None
    limit: int
    min_score: float | None
    created_after: Any
    created_before: Any
    # derived
    multi: bool
    request_id: str
    started: float
    route: str
    analysis: str | None
    effective_query: str
    rewrite: str | None
    time_range: dict[str, Any]
    # productivity search (working / coding)
    variant: str
    fact_hits: list[dict[str, Any]]
    experience_pool: list[tuple[dict[str, Any], float]]
    experience_hits: list[dict[str, Any]]
    chain_block: str
    chain_used: list[int]
    result: dict[str, Any]
