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

import math
import time
from datetime import date, datetime, timezone
from datetime import time as dtime
from typing import Any, Final

from langgraph.runtime import Runtime

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.flows.families import family_of
from hy_memory_langgraph.flows.search.state import SEARCH_MODES, SearchArgs, SearchState
from hy_memory_langgraph.ids import random_id, require_id, scope_id
from hy_memory_langgraph.messages import detect_language, truncate_chars_head_tail
from hy_memory_langgraph.models.parsing import as_choice, as_str
from hy_memory_langgraph.prompts import scene_definitions
from hy_memory_langgraph.redact import redact_text
from hy_memory_langgraph.runlog.meter import note_fallback
from hy_memory_langgraph.scenes import (
    DEFAULT_SCENE,
    SCENES,
    is_productivity,
    validate_scene,
)
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.llm import ask_json
from hy_memory_langgraph.timeutil import coerce_datetime

__all__ = ["MAX_SEARCH_LIMIT", "prepare_search", "redacted_search_args", "route_after_prepare_search",
           "analyze_query", "route_after_analysis"]

#: The most results one search returns (bounds the statements' ``LIMIT`` values).
MAX_SEARCH_LIMIT: Final = 10_000

_PROMPT_BY_ANALYSIS = {"full": "query_analysis", "classify": "query_classify", "rewrite": "query_rewrite"}


def _queries(state: SearchState) -> list[str]:
    query, queries = state.get("query"), state.get("queries")
    if queries is not None and (not isinstance(queries, list) or not all(isinstance(q, str) for q in queries)):
        raise InvalidInputError("queries must be a list of strings, e.g. queries=['earlier', 'latest']")
    items = [q for q in (queries or []) if q.strip()]
    if query is not None:
        if not isinstance(query, str):
            raise InvalidInputError("query must be a string")
        if query.strip():
            items.append(query)
    if not items:
        raise InvalidInputError("search needs a non-empty query=... or queries=[...]")
    for text in items:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInputError("query contains a lone surrogate (not valid Unicode text); "
                                    "remove the broken characters") from None
    return items


def _user_ids(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise InvalidInputError(
            "user_ids must be a non-empty list of user ids, e.g. user_ids=['user_123']"
        )
    return list(dict.fromkeys(require_id(v, "user_ids[]") for v in value))


def redacted_search_args(args: SearchArgs) -> SearchArgs:
    """``args`` with secrets in its queries and scope ids replaced, as ``prepare_search``
    replaces them: the client hands a graph these, so the run's callbacks and tracers never
    see a secret. Values of another type are left to ``prepare_search``'s checks.

    Example:
        >>> redacted_search_args({"query": "is my password hunter2x still set?"})["query"]
        'is my password [REDACTED:password] still set?'
    """
    out = dict(args)
    for field in ("query", "workspace_id", "branch"):
        if isinstance(args.get(field), str):
            out[field] = redact_text(args[field])
    queries = args.get("queries")
    if isinstance(queries, list):
        out["queries"] = [redact_text(q) if isinstance(q, str) else q for q in queries]
    return out  # type: ignore[return-value]


def prepare_search(state: SearchState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Validate the arguments; the last query is the one answered."""
    scene = validate_scene(state.get("scene"))
    mode = state.get("search_mode") or "default"
    if mode not in SEARCH_MODES:
        raise InvalidInputError(f"search_mode={mode!r} is not allowed; use 'default' or 'agentic'")
    limit = state.get("limit", 10)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_SEARCH_LIMIT:
        raise InvalidInputError(
            f"limit must be an integer in 1..{MAX_SEARCH_LIMIT} (got {limit!r}); to read every "
            "memory of a user, use client.export_memories([user_id])")
    min_score = state.get("min_score")
    if min_score is not None and (not isinstance(min_score, (int, float))
                                  or isinstance(min_score, bool) or math.isnan(min_score)):
        raise InvalidInputError(f"min_score must be a number or None (got {min_score!r})")
    redact = runtime.context.config.redact_secrets  # queries and scopes as writes store text
    queries = [redact_text(q) for q in _queries(state)] if redact else _queries(state)
    return {
        "request_id": state.get("request_id") or random_id(), "started": time.perf_counter(),
        "search_mode": mode, "queries": queries, "effective_query": queries[-1],
        "user_ids": _user_ids(state.get("user_ids")), "limit": limit,
        "created_after": coerce_datetime(state.get("created_after"), "created_after"),
        "created_before": coerce_datetime(state.get("created_before"), "created_before"),
        "rewrite": None, "time_range": {}, "analysis": None,
        "multi": bool(state.get("queries")),
        "route": _searchable(scene or DEFAULT_SCENE, runtime.context),
        "workspace_id": scope_id(state.get("workspace_id"), "workspace_id", redact),
        "branch": scope_id(state.get("branch"), "branch", redact),
    }


def _searchable(scene: str, ctx: MemoryContext) -> str:
    """``scene`` when its memory can be searched, else the default scene."""
    return scene if not is_productivity(scene) or ctx.config.coding.enabled else DEFAULT_SCENE


def _retrieval_node(route: str) -> str:
    family = family_of(route)
    return "chat_search" if family is None else family.search_node


def _short(state: SearchState, ctx: MemoryContext) -> bool:
    return sum(len(q) for q in state["queries"]) <= ctx.config.query_rewrite_max_chars


def route_after_prepare_search(state: SearchState, runtime: Runtime[MemoryContext]) -> str:
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


def _day(value: Any, *, end: bool) -> datetime | None:
    text = as_str(value).strip()
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
    reply = ask_json(ctx.llm, f"query_{kind}", _PROMPT_BY_ANALYSIS[kind], lang, **values)
    if reply is None:
        note_fallback("query analysis unusable: default search with the original query")
        return {"analysis": f"{kind}_failed", "route": DEFAULT_SCENE}
    scene = _searchable(as_choice(reply.get("scene"), SCENES, DEFAULT_SCENE), ctx)
    rewrite = as_str(reply.get("rewrite")).strip() or None
    window = reply.get("time_range") if isinstance(reply.get("time_range"), dict) else {}
    after, before = _day(window.get("start"), end=False), _day(window.get("end"), end=True)
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
