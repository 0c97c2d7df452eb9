"""The chat retrieval node of the search graph: hybrid search over every requested user
(:func:`~hy_memory_langgraph.services.hybrid_search.hybrid_search`), the best ``limit``
across them."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from hy_memory_langgraph.flows.contracts import PreparedSearch
from hy_memory_langgraph.repos.records import ChatMemory
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.hybrid_search import hybrid_search
from hy_memory_langgraph.services.pending import PENDING, pending_hits
from hy_memory_langgraph.timeutil import elapsed_ms


def chat_search(state: PreparedSearch, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """The chat retrieval node: hybrid search over every requested user, with the turns
    of their queued writes ranked beside (``pending``, :mod:`~hy_memory_langgraph.services.pending`)."""
    ctx = runtime.context
    limit, min_score = state["limit"], state.get("min_score")
    after, before = state.get("created_after"), state.get("created_before")
    hits: list[ChatMemory] = []
    for user_id in state["user_ids"]:
        hits.extend(hybrid_search(ctx, user_id, state["effective_query"], limit,
                                  after=after, before=before, ranking=ctx.chat_ranking))
    if ctx.pending is not None:
        hits.extend(pending_hits(ctx, ctx.pending(state["user_ids"]), state["effective_query"],
                                 after=after, before=before))
    if min_score is not None:
        hits = [h for h in hits if (h.score or 0.0) >= min_score]
    hits.sort(key=lambda m: (-(m.score or 0.0), m.memory_id))
    return {"result": {
        "request_id": state["request_id"], "scene": "chat",
        "memories": [_shown(m) for m in hits[:limit]],
        "rewrite": state.get("rewrite"), "elapsed_ms": elapsed_ms(state["started"]),
    }}


def _shown(memory: ChatMemory) -> dict[str, Any]:
    """A hit as the caller sees it (a pending one says so)."""
    shown = memory.to_dict()
    if memory.status == PENDING:
        shown["pending"] = True
    return shown
