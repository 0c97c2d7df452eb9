"""Nodes and edges of the search graph (``docs/design.md#search-routing``).

| call                                   | route                                        |
|----------------------------------------|----------------------------------------------|
| explicit ``scene``                      | that scene, zero judge/rewrite LLM           |
| default, one ``query``                  | chat light search, zero LLM                  |
| default, ``queries``, coding on         | one bounded classify (+rewrite if short)     |
| default, ``queries``, only rewrite on   | rewrite + time range (if short)              |
| default, ``queries``, both off          | chat, last query, zero LLM                   |
| agentic                                 | one call: classify + rewrite + time range    |

Analysis failure (or lite mode) → default behaviour with the original last query.
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from datetime import time as dtime
from typing import Any

from langgraph.runtime import Runtime

from hy_memory_langgraph.flows.families import family_of
from hy_memory_langgraph.flows.search.state import SearchState
from hy_memory_langgraph.messages.compression import truncate_chars_head_tail
from hy_memory_langgraph.messages.language import detect_language
from hy_memory_langgraph.pipeline_log.meter import note_fallback
from hy_memory_langgraph.prompts import scene_definitions
from hy_memory_langgraph.prompts.replies import QueryAnalysis
from hy_memory_langgraph.scenes import DEFAULT_SCENE, SCENES, is_productivity
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.llm import ask

_PROMPT_BY_ANALYSIS = {"full": "query_analysis", "classify": "query_classify", "rewrite": "query_rewrite"}


def route_search(state: SearchState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """The scene a prepared search reads: the caller's, when its memory can be searched,
    else the default scene (an analysis may change it)."""
    return {"route": _searchable(state.get("scene") or DEFAULT_SCENE, runtime.context)}


def _searchable(scene: str, ctx: MemoryContext) -> str:
    """``scene`` when its memory can be searched, else the default scene."""
    return scene if not is_productivity(scene) or ctx.config.coding.enabled else DEFAULT_SCENE


def _retrieval_node(route: str) -> str:
    family = family_of(route)
    return "chat_search" if family is None else family.search_node


def _short(state: SearchState, ctx: MemoryContext) -> bool:
    return sum(len(q) for q in state["queries"]) <= ctx.config.query_rewrite_max_chars


def route_after_route_search(state: SearchState, runtime: Runtime[MemoryContext]) -> str:
    """Choose the analysis (if any) or the retrieval path directly."""
    ctx = runtime.context
    if state.get("scene"):
        return _retrieval_node(state["route"])
    if ctx.llm is None:
        return "chat_search"
    if state["search_mode"] == "agentic":
        return "analyze_query"
    if not state.get("multi"):
        return "chat_search"
    if ctx.config.coding.enabled or (ctx.config.enable_query_rewrite and _short(state, ctx)):
        return "analyze_query"
    return "chat_search"


def _analysis_kind(state: SearchState, ctx: MemoryContext) -> str:
    if not ctx.config.coding.enabled:
        return "rewrite"
    if state["search_mode"] == "agentic" or _short(state, ctx):
        return "full"
    return "classify"


def _bounded(queries: list[str], max_chars: int) -> list[str]:
    budget = max(200, max_chars // max(1, len(queries)))
    return [truncate_chars_head_tail(q, budget, budget // 2) for q in queries[-8:]]


def _day(text: str, *, end: bool) -> datetime | None:
    try:
        day = date.fromisoformat(text[:10])
    except ValueError:
        return None
    return datetime.combine(day, dtime.max if end else dtime.min, tzinfo=timezone.utc)


def analyze_query(state: SearchState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """One bounded call: scene and/or standalone rewrite and time range."""
    ctx = runtime.context
    kind = _analysis_kind(state, ctx)
    values: dict[str, Any] = {"queries": _bounded(state["queries"], ctx.config.query_rewrite_max_chars)}
    if kind != "classify":
        values["today"] = datetime.now(timezone.utc).date().isoformat()
    lang = detect_language(state["queries"][-1])
    if kind != "rewrite":  # only reached with the productivity scenes enabled
        values["scenes"] = ", ".join(SCENES)
        values["scene_definitions"] = scene_definitions("search", lang, SCENES)
    reply = ask(ctx.llm, f"query_{kind}", _PROMPT_BY_ANALYSIS[kind], lang, QueryAnalysis, **values)
    if reply is None:
        note_fallback("query analysis unusable: default search with the original query")
        return {"analysis": f"{kind}_failed", "route": DEFAULT_SCENE}
    scene = _searchable(reply.scene, ctx)
    rewrite = reply.rewrite or None
    after, before = _day(reply.time_range.start, end=False), _day(reply.time_range.end, end=True)
    update: dict[str, Any] = {"analysis": kind, "route": scene}
    if rewrite and kind != "classify":
        update.update(rewrite=rewrite, effective_query=rewrite)
    caller_bounds = state.get("created_after") or state.get("created_before")
    if (after or before) and not caller_bounds:  # a caller's explicit range wins, whole
        update["time_range"] = {"start": after.isoformat() if after else None,
                                "end": before.isoformat() if before else None}
        update["created_after"], update["created_before"] = after, before
    return update


def route_after_analysis(state: SearchState) -> str:
    return _retrieval_node(state.get("route") or DEFAULT_SCENE)
