"""Hybrid chat search: vector similarity fused with CJK-aware BM25.

Both retrievers see the same scope: one user's active memories, restricted to the
time range when one is given (applied before each retriever's top-k). The ranking
itself (fusion, BM25 parameters, pool size, session context, time boost) is pure code
in :mod:`hy_memory_langgraph.retrieval.ranking`; scores stay within [0, 1].

Two ways to get the candidate pools, with the same results:

* **From the store's indexes** (stores with ``supports_lexical_index``, e.g.
  :class:`~hy_memory_langgraph.store.HyMemoryStore`): BM25 over the postings kept in
  the database and vector search returning keys only; then only the final ``limit``
  memories are read. Nothing is proportional to the user's memory count but the
  vector scan itself.
* **In process** (any other store, e.g. LangGraph's ``InMemoryStore``, or a ranking
  whose session window differs from the stored one): every active memory is loaded
  (cached per user revision) and a BM25 index is kept in step with it.

Both paths end with :func:`~hy_memory_langgraph.retrieval.ranking.weigh_questions`:
memories that only ask a question (:attr:`ChatMemory.asks_only`) are ranked lower by
``ranking.question_weight`` (off at 1.0); with ``ranking.question_echo``, only those that
echo the query (calibrated similarity from the vector pool's cosines, see
:func:`~hy_memory_langgraph.retrieval.ranking.echoing_questions`). The indexed path reads
the flag with the memories it reads anyway, before the final ``limit`` cut
(:func:`_top_memories`).

A ranking with a second hop (``ChatRanking.hop_seeds``; off by default) adds, after the
first pass, the memories nearest to the top seeds' stored vectors and the best BM25
matches of the seeds' feedback terms (see
:func:`~hy_memory_langgraph.retrieval.ranking.add_second_hop`), on either path; from the
store's indexes it costs a fixed number of extra statements.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime, timezone
from functools import partial
from typing import Any

from langgraph.runtime import Runtime

from hy_memory_langgraph.flows.contracts import PreparedSearch
from hy_memory_langgraph.flows.results import elapsed_ms
from hy_memory_langgraph.repos.chat import ChatRepository
from hy_memory_langgraph.repos.filters import time_filter
from hy_memory_langgraph.repos.lexical import session_of, utterance
from hy_memory_langgraph.repos.records import ChatMemory
from hy_memory_langgraph.retrieval.lexical import BM25Index
from hy_memory_langgraph.retrieval.neighbours import texts_with_neighbours
from hy_memory_langgraph.retrieval.query import TimeSpan, hop_terms
from hy_memory_langgraph.retrieval.ranking import (
    DEFAULT_CHAT_RANKING,
    ChatRanking,
    add_second_hop,
    echoing_questions,
    event_candidates,
    hop_seeds,
    merge_neighbours,
    query_time_spans,
    rank_candidates,
    weigh_questions,
)
from hy_memory_langgraph.retrieval.relative_time import relative_spans
from hy_memory_langgraph.services.context import MemoryContext

__all__ = ["VECTOR_WEIGHT", "chat_search", "event_spans_of", "hybrid_search"]

VECTOR_WEIGHT = DEFAULT_CHAT_RANKING.fusion.weight


def _in_range(memory: ChatMemory, where: dict[str, Any]) -> bool:
    bounds = where.get("memory_ts", {})
    return memory.memory_ts >= bounds.get("$gte", float("-inf")) and memory.memory_ts <= bounds.get("$lte", float("inf"))


def _day(ts: float | None) -> date | None:
    return None if ts is None else datetime.fromtimestamp(ts, timezone.utc).date()


def _dates(named: bool, times: Mapping[str, float | None]) -> dict[str, date | None]:
    """Each candidate's ``memory_at`` date (UTC), only when the query names a date."""
    return {mid: _day(ts) for mid, ts in times.items()} if named else {}


def event_spans_of(memory: ChatMemory) -> list[TimeSpan]:
    """What a memory's own text dates, seen from its ``memory_at`` ("two weeks ago", "昨天")."""
    day = _day(memory.memory_ts)
    return [] if day is None else relative_spans(memory.content, day)


def hybrid_search(ctx: MemoryContext, user_id: str, query: str, limit: int, *,
                  after: datetime | None = None, before: datetime | None = None,
                  vector_weight: float | None = None,
                  ranking: ChatRanking = DEFAULT_CHAT_RANKING,
                  now: datetime | None = None) -> list[ChatMemory]:
    """Best ``limit`` active memories of ``user_id`` for ``query``, best first.

    ``vector_weight`` overrides the fusion weight: 1.0 ranks by vector similarity alone,
    0.0 by BM25 alone (the time boost still applies). Relative phrases of the query
    (``last weekend``) are resolved against ``now`` (default: the current UTC time).
    With ``ranking.event_spans``, a query that names a date reads the texts of the
    candidates whose events could change the result (one batch, see
    :func:`~hy_memory_langgraph.retrieval.ranking.event_candidates`) for the events they date.
    """
    now = now or datetime.now(timezone.utc)
    if vector_weight is not None:
        ranking = replace(ranking, fusion=replace(ranking.fusion, weight=vector_weight))
    repo = ctx.chat_repo
    if not repo.lexical_ready(user_id, (ranking.context_before, ranking.context_after)):
        return _search_in_process(ctx, user_id, query, limit, after=after, before=before, ranking=ranking,
                                  now=now)
    span = None if after is None and before is None else (
        None if after is None else after.timestamp(), None if before is None else before.timestamp())
    found = repo.candidates(user_id, query, pool=ranking.pool(limit), k1=ranking.k1, b=ranking.b,
                            ts_range=span)
    dates = _dates(bool(query_time_spans(query, ranking, now)), found.times)
    maybe = event_candidates(found.vector, found.lexical, query=query, dates=dates, limit=limit,
                             ranking=ranking, now=now)
    read = {m.memory_id: m for m in repo.memories_of(user_id, maybe)}
    ranked = rank_candidates(found.vector, found.lexical, query=query, dates=dates, ranking=ranking,
                             now=now, events={mid: event_spans_of(m) for mid, m in read.items()})
    if ranking.vector_hop or ranking.lexical_hop:
        ranked = _second_hop_indexed(ctx, user_id, query, ranked, span, ranking)
    weighed = partial(_weighed, ctx, query, found.vector, ranking)
    return _top_memories(repo, user_id, ranked, limit, ranking.question_weight, read, weighed)


def _top_memories(repo: ChatRepository, user_id: str, ranked: Sequence[tuple[str, float]],
                  limit: int, weight: float, known: Mapping[str, ChatMemory],
                  weighed: Callable[[set[str]], set[str]]) -> list[ChatMemory]:
    """The best ``limit`` memories of ``ranked`` once question-only ones are weighted.

    Memories are read in rounds of ``limit``, best first (``known`` ones are not read
    again); ``weighed`` picks, among the question-only memories read, those the weight
    applies to (:func:`_weighed`). Weighting only lowers scores, so reading stops once the
    ``limit``-th weighted score read beats the next unread score; with the weight off,
    that is after the first round.
    """
    memories = dict(known)
    read, top = 0, []
    while read < len(ranked) and limit > 0:
        chunk = [mid for mid, _ in ranked[read:read + limit]]
        wanted = [mid for mid in chunk if mid not in memories]
        memories.update((m.memory_id, m) for m in repo.memories_of(user_id, wanted))
        read += len(chunk)
        head = [(mid, s) for mid, s in ranked[:read] if mid in memories]
        questions = weighed({mid for mid, _ in head if memories[mid].asks_only}) if weight < 1.0 else set()
        top = weigh_questions(head, questions, weight)
        if weight >= 1.0 or read >= len(ranked) or (
                len(top) >= limit and top[limit - 1][1] > ranked[read][1]):
            break
    return [replace(memories[mid], score=round(score, 6)) for mid, score in top[:limit]]


def _second_hop_indexed(ctx: MemoryContext, user_id: str, query: str, ranked: list[tuple[str, float]],
                        span: tuple[float | None, float | None] | None,
                        ranking: ChatRanking) -> list[tuple[str, float]]:
    """The first pass with the second hop added, from the store's indexes (a fixed number of
    statements: the seeds' vectors and neighbours, their postings and one more BM25 query)."""
    repo = ctx.chat_repo
    seeds = hop_seeds(ranked, ranking)
    vector_hop: dict[str, float] = {}
    if ranking.vector_hop:
        per_seed = repo.neighbour_keys(user_id, list(seeds), limit=ranking.hop_neighbours + len(seeds), ts_range=span)
        vector_hop = merge_neighbours(per_seed, ranking.hop_neighbours)
    lexical_hop: dict[str, float] = {}
    if ranking.lexical_hop:
        lexical_hop = repo.feedback_search(user_id, query, seeds, n_terms=ranking.hop_terms,
                                           limit=ranking.hop_neighbours + len(seeds), k1=ranking.k1,
                                           b=ranking.b, ts_range=span)
    return add_second_hop(ranked, vector_hop, lexical_hop, ranking=ranking)


def _search_in_process(ctx: MemoryContext, user_id: str, query: str, limit: int, *,
                       after: datetime | None, before: datetime | None,
                       ranking: ChatRanking, now: datetime | None = None) -> list[ChatMemory]:
    """:func:`hybrid_search` over every active memory, loaded (stores without a lexical index)."""
    now = now or datetime.now(timezone.utc)
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
    times = {mid: by_id[mid].memory_ts for mid in (*vector, *lexical)}
    dates = _dates(bool(query_time_spans(query, ranking, now)), times)
    maybe = event_candidates(vector, lexical, query=query, dates=dates, limit=limit, ranking=ranking, now=now)
    ranked = rank_candidates(vector, lexical, query=query, dates=dates, ranking=ranking, now=now,
                             events={mid: event_spans_of(by_id[mid]) for mid in maybe})
    if ranking.vector_hop or ranking.lexical_hop:
        ranked = _second_hop(ctx, user_id, query, ranked, index, by_id, where, ranking)
    questions = _weighed(ctx, query, vector, ranking, _questions(by_id, [mid for mid, _ in ranked], ranking))
    ranked = weigh_questions(ranked, questions, ranking.question_weight)
    return [replace(by_id[mid], score=round(score, 6)) for mid, score in ranked[:limit]]


def _second_hop(ctx: MemoryContext, user_id: str, query: str, ranked: list[tuple[str, float]],
                index: BM25Index, by_id: dict[str, ChatMemory], where: dict[str, Any],
                ranking: ChatRanking) -> list[tuple[str, float]]:
    """The first pass with the second hop added (in process; ``by_id`` gains the hop's hits).

    Vector hop: each seed's nearest memories (:meth:`ChatRepository.neighbours`). Lexical
    hop: BM25 of the seeds' most telling terms over the in-range memories.
    """
    repo = ctx.chat_repo
    seeds = hop_seeds(ranked, ranking)
    in_range = set(by_id)
    vector_hop: dict[str, float] = {}
    if ranking.vector_hop:
        per_seed: dict[str, dict[str, float]] = {}
        for seed in seeds:
            hits = repo.neighbours(user_id, by_id[seed], limit=ranking.hop_neighbours + len(seeds), filter=where)
            by_id.update({m.memory_id: m for m in hits})
            per_seed[seed] = {m.memory_id: float(m.score or 0.0) for m in hits}
        vector_hop = merge_neighbours(per_seed, ranking.hop_neighbours)
    lexical_hop: dict[str, float] = {}
    if ranking.lexical_hop:
        terms = hop_terms(Counter(index.tokenize(query)), index, seeds, n_terms=ranking.hop_terms)
        scores = index.score_terms(terms, allowed=in_range, k1=ranking.k1, b=ranking.b) if terms else {}
        lexical_hop = dict(heapq.nsmallest(ranking.hop_neighbours + len(seeds), scores.items(),
                                           key=lambda kv: (-kv[1], kv[0])))
    return add_second_hop(ranked, vector_hop, lexical_hop, ranking=ranking)


def _questions(by_id: Mapping[str, ChatMemory], candidates: Iterable[str],
               ranking: ChatRanking) -> set[str]:
    """The candidates that only ask a question (none read when the weight is off)."""
    if ranking.question_weight >= 1.0:
        return set()
    return {mid for mid in candidates if by_id[mid].asks_only}


def _weighed(ctx: MemoryContext, query: str, vector: Mapping[str, float], ranking: ChatRanking,
             questions: set[str]) -> set[str]:
    """The question-only candidates ``ranking.question_weight`` lowers: all of them, or with
    ``ranking.question_echo`` those echoing ``query`` by their cosine in the ``vector`` pool
    (the embedding model's calibration is read only when one is in the pool)."""
    if ranking.question_echo <= 0:
        return questions
    pooled = {mid for mid in questions if mid in vector}
    if not pooled:
        return pooled
    scale = ctx.stores.calibration().for_text(query)
    return echoing_questions(pooled, vector, scale.similarity, ranking.question_echo)


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
    neighbours = texts_with_neighbours([utterance(m) for m in active], before=window[0], after=window[1])
    texts = {m.memory_id: neighbours[m.memory_id] if session_of(m) is not None else m.retrieval_text
             for m in active}
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
