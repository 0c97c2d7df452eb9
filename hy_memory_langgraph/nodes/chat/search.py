"""Hybrid chat search: vector similarity fused with CJK-aware BM25.

Both retrievers see the same scope: one user's active memories, restricted to the
time range when one is given (the store applies the filter before its top-k). The
ranking itself (fusion, BM25 parameters, pool size, session context, time boost) is
pure code in :mod:`hy_memory_langgraph.retrieval.ranking`; scores stay within [0, 1].
Memories that only ask a question (:attr:`ChatMemory.asks_only`) are ranked lower by
``ranking.question_weight`` (off at 1.0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from langgraph.runtime import Runtime

from hy_memory_langgraph.nodes.context import MemoryContext
from hy_memory_langgraph.nodes.results import elapsed_ms
from hy_memory_langgraph.nodes.routing.state import PreparedSearch
from hy_memory_langgraph.repos.filters import time_filter
from hy_memory_langgraph.repos.records import ChatMemory
from hy_memory_langgraph.retrieval.neighbours import Utterance, texts_with_neighbours
from hy_memory_langgraph.retrieval.ranking import (
    DEFAULT_CHAT_RANKING,
    ChatRanking,
    rank_candidates,
)

__all__ = ["VECTOR_WEIGHT", "chat_search", "hybrid_search"]

VECTOR_WEIGHT = DEFAULT_CHAT_RANKING.fusion.weight


def _in_range(memory: ChatMemory, where: dict[str, Any]) -> bool:
    bounds = where.get("memory_ts", {})
    return memory.memory_ts >= bounds.get("$gte", float("-inf")) and memory.memory_ts <= bounds.get("$lte", float("inf"))


def hybrid_search(ctx: MemoryContext, user_id: str, query: str, limit: int, *,
                  after: datetime | None = None, before: datetime | None = None,
                  vector_weight: float | None = None,
                  ranking: ChatRanking = DEFAULT_CHAT_RANKING) -> list[ChatMemory]:
    """Best ``limit`` active memories of ``user_id`` for ``query``, best first.

    ``vector_weight`` overrides the fusion weight: 1.0 ranks by vector similarity alone,
    0.0 by BM25 alone (the time boost still applies).
    """
    if vector_weight is not None:
        ranking = replace(ranking, fusion=replace(ranking.fusion, weight=vector_weight))
    repo = ctx.chat_repo
    where = time_filter(after, before)
    pool = ranking.pool(limit)
    vector_hits = repo.vector_search(user_id, query, limit=pool, filter=where)
    active = _active(ctx, user_id)
    by_id = {m.memory_id: m for m in active if _in_range(m, where)}
    texts = _lexical_texts(ctx, user_id, active, ranking)
    index = ctx.lexical.sync(("chat", user_id), [(mid, text, text) for mid, text in texts.items()])
    lexical = dict(index.top(query, pool, allowed=by_id.keys(), k1=ranking.k1, b=ranking.b))
    vector = {m.memory_id: float(m.score or 0.0) for m in vector_hits}
    by_id.update({m.memory_id: m for m in vector_hits})
    dates = {mid: datetime.fromisoformat(by_id[mid].memory_at) for mid in vector.keys() | lexical.keys()}
    ranked = rank_candidates(vector, lexical, query=query, dates=dates, ranking=ranking,
                             questions=_questions(by_id, dates, ranking))[:limit]
    return [replace(by_id[mid], score=round(score, 6)) for mid, score in ranked]


def _questions(by_id: Mapping[str, ChatMemory], candidates: Iterable[str],
               ranking: ChatRanking) -> set[str]:
    """The candidates that only ask a question (none read when the weight is off)."""
    if ranking.question_weight >= 1.0:
        return set()
    return {mid for mid in candidates if by_id[mid].asks_only}


def _lexical_texts(ctx: MemoryContext, user_id: str, active: list[ChatMemory],
                   ranking: ChatRanking) -> dict[str, str]:
    """What BM25 indexes per memory: a turn (with the trivial turns it carries) and its
    session neighbours, else ``retrieval_text``.

    Cached per user until the user's revision changes.
    """
    revision = ctx.chat_repo.revision(user_id)
    window = (ranking.context_before, ranking.context_after)
    cached = ctx.search_cache.get(("chat_lexical", user_id))
    if cached is not None and revision is not None and cached[:2] == (revision, window):
        return cached[2]
    turns = [Utterance(m.memory_id, m.session_id if m.source == "turn" and m.session_id else None,
                       (m.created_at, m.memory_ts, m.turn_index), m.own_text) for m in active]
    neighbours = texts_with_neighbours(turns, before=window[0], after=window[1])
    texts = {t.id: neighbours[t.id] if t.session is not None else m.retrieval_text
             for t, m in zip(turns, active, strict=True)}
    ctx.search_cache.put(("chat_lexical", user_id), (revision, window, texts))
    return texts


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
                                  after=state.get("created_after"), before=state.get("created_before"),
                                  ranking=ctx.chat_ranking))
    if min_score is not None:
        hits = [h for h in hits if (h.score or 0.0) >= min_score]
    hits.sort(key=lambda m: (-(m.score or 0.0), m.memory_id))
    return {"result": {
        "request_id": state["request_id"], "scene": "chat",
        "memories": [m.to_dict() for m in hits[:limit]],
        "rewrite": state.get("rewrite"), "elapsed_ms": elapsed_ms(state["started"]),
    }}
