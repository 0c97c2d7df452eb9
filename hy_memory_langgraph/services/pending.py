"""Read your writes: the turns of queued writes, ranked as pending memories.

A chat search adds the pending turns of its users (:mod:`hy_memory_langgraph.jobs.pending`)
to the stored memories it found. A pending turn has no place in the store's indexes yet,
so it is scored on its own: the calibrated similarity of query and turn
(:class:`~hy_memory_langgraph.models.calibration.LanguageScale`, clipped to [0, 1]; about
0 for unrelated texts, 1 for the same), with no BM25 and no time boost. It comes back as
a chat memory with ``status="pending"`` and ``pending: True``, its id ``pending-…``
(not an id ``get`` or ``delete`` know). A turn's vector is made once and kept in the
search cache.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Final

from hy_memory_langgraph.jobs.pending import PendingTurn
from hy_memory_langgraph.repos.records import ChatMemory
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.timeutil import iso

#: ``status`` of a pending memory in search results.
PENDING: Final = "pending"


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _vectors(ctx: MemoryContext, turns: Sequence[PendingTurn]) -> list[list[float]]:
    """The vector of each turn (cached by its text)."""
    keys = [("pending", hashlib.sha256(t.content.encode("utf-8", "surrogatepass")).hexdigest()) for t in turns]
    found = [ctx.search_cache.get(k) for k in keys]
    missing = [i for i, v in enumerate(found) if v is None]
    if missing:
        made = ctx.stores.embeddings.embed_documents([turns[i].content for i in missing])
        for i, vector in zip(missing, made, strict=True):
            found[i] = list(vector)
            ctx.search_cache.put(keys[i], found[i])
    return [v for v in found if v is not None]


def pending_hits(ctx: MemoryContext, turns: Sequence[PendingTurn], query: str, *,
                 after: datetime | None = None, before: datetime | None = None) -> list[ChatMemory]:
    """``turns`` (within ``after``/``before``) as scored pending memories."""
    turns = [t for t in turns if (after is None or t.at >= after) and (before is None or t.at <= before)]
    if not turns:
        return []
    vectors = _vectors(ctx, turns)
    scale = ctx.stores.calibration().for_text(query)
    asked = ctx.stores.embeddings.embed_query(query)
    out = []
    for turn, vector in zip(turns, vectors, strict=True):
        score = min(1.0, max(0.0, scale.similarity(_cosine(asked, vector))))
        out.append(ChatMemory(
            memory_id=turn.key, user_id=turn.user_id, content=turn.content, memory_at=iso(turn.at),
            memory_ts=turn.at.timestamp(), status=PENDING, agent_id=turn.agent_id,
            session_id=turn.session_id, request_id=turn.request_id, metadata=turn.metadata,
            owner=turn.role, role=turn.role, source="turn", score=score))
    return out
