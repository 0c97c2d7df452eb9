"""Hybrid chat search: vector similarity fused with CJK-aware BM25.

Both retrievers see the same scope: one user's active memories, restricted to the
time range when one is given (the store applies the filter before its top-k).
Fused score = ``VECTOR_WEIGHT * cosine + (1 - VECTOR_WEIGHT) * BM25 / max BM25``
(the BM25 maximum taken over the scope), so scores stay within [0, 1].
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from langgraph.runtime import Runtime

from hy_memory_langgraph.nodes.context import MemoryContext
from hy_memory_langgraph.nodes.results import elapsed_ms
from hy_memory_langgraph.nodes.routing.state import PreparedSearch
from hy_memory_langgraph.repos.filters import time_filter
from hy_memory_langgraph.repos.records import ChatMemory

__all__ = ["VECTOR_WEIGHT", "chat_search", "hybrid_search"]

VECTOR_WEIGHT = 0.5
_POOL_FACTOR = 5
_MIN_POOL = 50


def _in_range(memory: ChatMemory, where: dict[str, Any]) -> bool:
    bounds = where.get("memory_ts", {})
    return memory.memory_ts >= bounds.get("$gte", float("-inf")) and memory.memory_ts <= bounds.get("$lte", float("inf"))


def hybrid_search(ctx: MemoryContext, user_id: str, query: str, limit: int, *,
                  after: datetime | None = None, before: datetime | None = None,
                  vector_weight: float = VECTOR_WEIGHT) -> list[ChatMemory]:
    """Best ``limit`` active memories of ``user_id`` for ``query``, best first.

    ``vector_weight`` 1.0 ranks by vector similarity alone, 0.0 by BM25 alone.
    """
    repo = ctx.chat_repo
    where = time_filter(after, before)
    pool = max(limit * _POOL_FACTOR, _MIN_POOL)
    vector_hits = repo.vector_search(user_id, query, limit=pool, filter=where)
    active = [m for m in _active(ctx, user_id) if _in_range(m, where)]
    by_id = {m.memory_id: m for m in active}
    index = ctx.lexical.sync(("chat", user_id), [(m.memory_id, m.updated_at, m.retrieval_text) for m in active])
    lexical = dict(index.top(query, pool, allowed=by_id.keys()))
    vector = {m.memory_id: float(m.score or 0.0) for m in vector_hits}
    by_id.update({m.memory_id: m for m in vector_hits})
    top_lexical = max(lexical.values(), default=0.0) or 1.0
    fused = {
        mid: vector_weight * vector.get(mid, 0.0) + (1.0 - vector_weight) * lexical.get(mid, 0.0) / top_lexical
        for mid in set(vector) | set(lexical)
    }
    ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [replace(by_id[mid], score=round(score, 6)) for mid, score in ranked]


def _active(ctx: MemoryContext, user_id: str) -> list[ChatMemory]:
    """The user's active memories, reloaded only when the user's revision changed."""
    revision = ctx.chat_repo.revision(user_id)
    cached = ctx.search_cache.get(("chat_active", user_id))
    if cached is not None and revision is not None and cached[0] == revision:
        return cached[1]
    active = ctx.chat_repo.active(user_id)
    ctx.search_cache.put(("chat_active", user_id), (revision, active))
    return active


def chat_search(state: PreparedSearch, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """The chat retrieval node: hybrid search over every requested user."""
    ctx = runtime.context
    limit, min_score = state["limit"], state.get("min_score")
    hits: list[ChatMemory] = []
    for user_id in state["user_ids"]:
        hits.extend(hybrid_search(ctx, user_id, state["effective_query"], limit,
                                  after=state.get("created_after"), before=state.get("created_before")))
    if min_score is not None:
        hits = [h for h in hits if (h.score or 0.0) >= min_score]
    hits.sort(key=lambda m: (-(m.score or 0.0), m.memory_id))
    return {"result": {
        "request_id": state["request_id"], "scene": "chat",
        "memories": [m.to_dict() for m in hits[:limit]],
        "rewrite": state.get("rewrite"), "elapsed_ms": elapsed_ms(state["started"]),
    }}
