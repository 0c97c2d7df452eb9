"""Hybrid chat search: vector similarity fused with CJK-aware BM25, as one algorithm over
two candidate sources.

Both retrievers see the same scope: one user's active memories, restricted to the time
range when one is given (applied before each retriever's top-k). The ranking itself
(fusion, BM25 parameters, pool size, time boost, question weights) is pure code in
:mod:`hy_memory_langgraph.retrieval.ranking`; scores stay within [0, 1].
:func:`hybrid_search` runs it on a :class:`_CandidateSource`:

* :class:`_IndexedSource` (stores with ``supports_lexical_index``, e.g.
  :class:`~hy_memory_langgraph.store.HyMemoryStore`): BM25 over the postings kept in the
  database and vector search returning keys only; only the memories the ranking needs are
  read. Nothing is proportional to the user's memory count but the vector scan.
* :class:`_InProcessSource` (any other store, e.g. LangGraph's ``InMemoryStore``, or
  documents stored with another session window): every active memory is loaded (cached
  per user revision) and a BM25 index is kept in step with it.

The algorithm, on either source: the two pools; the dates of the candidates when the
query names a date (and the texts of those whose own events could change the result);
the fused ranking; memories that only ask a question (:attr:`ChatMemory.asks_only`)
lowered by ``ranking.question_weight`` (with ``ranking.question_echo``, only those
echoing the query, judged by the calibrated cosine the vector pool already holds),
reading memories best first until the top ``limit`` is certain.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime, timezone
from typing import Any, Protocol, TypeVar

from hy_memory_langgraph.repos.chat import CandidatePools, ChatRepository
from hy_memory_langgraph.repos.chat_terms import LEXICAL_WINDOW, session_of, utterance
from hy_memory_langgraph.repos.filters import time_filter
from hy_memory_langgraph.repos.records import ChatMemory
from hy_memory_langgraph.retrieval.neighbours import texts_with_neighbours
from hy_memory_langgraph.retrieval.query import TimeSpan
from hy_memory_langgraph.retrieval.ranking import (
    DEFAULT_CHAT_RANKING,
    ChatRanking,
    echoing_questions,
    event_candidates,
    fuse,
    query_time_spans,
    rank_candidates,
    weigh_questions,
)
from hy_memory_langgraph.retrieval.relative_time import relative_spans
from hy_memory_langgraph.services.context import MemoryContext

T = TypeVar("T")


class _CandidateSource(Protocol):
    """Where one user's candidates come from (see the module docstring)."""

    def pools(self, query: str, pool: int) -> CandidatePools:
        """The vector and BM25 pools of ``query``, ``pool`` deep each."""

    def memories(self, ids: Sequence[str]) -> dict[str, ChatMemory]:
        """The memories of ``ids`` (missing ones left out)."""


def _day(ts: float | None) -> date | None:
    return None if ts is None else datetime.fromtimestamp(ts, timezone.utc).date()


def event_spans_of(memory: ChatMemory) -> list[TimeSpan]:
    """What a memory's own text dates, seen from its ``memory_at`` ("two weeks ago", "昨天")."""
    day = _day(memory.memory_ts)
    return [] if day is None else relative_spans(memory.content, day)


class _IndexedSource:
    """Candidates from the store's persistent lexical index and key-only vector search."""

    def __init__(self, repo: ChatRepository, user_id: str, span: tuple[float | None, float | None] | None,
                 ranking: ChatRanking) -> None:
        self.repo, self.user_id, self.span, self.ranking = repo, user_id, span, ranking

    def pools(self, query: str, pool: int) -> CandidatePools:
        return self.repo.candidates(self.user_id, query, pool=pool, k1=self.ranking.k1, b=self.ranking.b,
                                    ts_range=self.span)

    def memories(self, ids: Sequence[str]) -> dict[str, ChatMemory]:
        return {m.memory_id: m for m in self.repo.memories_of(self.user_id, list(ids))} if ids else {}


class _InProcessSource:
    """Candidates from every active memory of the user, loaded and indexed in process."""

    def __init__(self, ctx: MemoryContext, user_id: str, after: datetime | None, before: datetime | None,
                 ranking: ChatRanking) -> None:
        self.repo, self.user_id, self.ranking = ctx.chat_repo, user_id, ranking
        self.where = time_filter(after, before)
        active = _per_revision(ctx, "chat_active", user_id, lambda: ctx.chat_repo.active(user_id))
        self.by_id = {m.memory_id: m for m in active if _in_range(m, self.where)}
        texts = _per_revision(ctx, "chat_lexical", user_id, lambda: _lexical_texts(active))
        self.index = ctx.lexical.sync(("chat", user_id), [(mid, text, text) for mid, text in texts.items()])

    def pools(self, query: str, pool: int) -> CandidatePools:
        hits = self.repo.vector_search(self.user_id, query, limit=pool, filter=self.where)
        in_range = set(self.by_id)
        lexical = dict(self.index.top(query, pool, allowed=in_range, k1=self.ranking.k1, b=self.ranking.b))
        vector = {m.memory_id: float(m.score or 0.0) for m in hits}
        self.by_id.update({m.memory_id: m for m in hits})
        return CandidatePools(vector, lexical, {mid: self.by_id[mid].memory_ts for mid in (*vector, *lexical)})

    def memories(self, ids: Sequence[str]) -> dict[str, ChatMemory]:
        return {mid: self.by_id[mid] for mid in ids if mid in self.by_id}


def hybrid_search(ctx: MemoryContext, user_id: str, query: str, limit: int, *,
                  after: datetime | None = None, before: datetime | None = None,
                  ranking: ChatRanking = DEFAULT_CHAT_RANKING,
                  now: datetime | None = None, source: _CandidateSource | None = None) -> list[ChatMemory]:
    """Best ``limit`` active memories of ``user_id`` for ``query``, best first.

    Relative phrases of the query (``last weekend``) are resolved against ``now`` (default:
    the current UTC time). With ``ranking.event_spans``, a query that names a date reads
    the texts of the candidates whose events could change the result (one batch, see
    :func:`~hy_memory_langgraph.retrieval.ranking.event_candidates`). ``source``: where the
    candidates come from (default: the store's indexes when the store has them, else in
    process).
    """
    now = now or datetime.now(timezone.utc)
    source = source or _source(ctx, user_id, after, before, ranking)
    found = source.pools(query, ranking.pool(limit))
    dates = {mid: _day(ts) for mid, ts in found.times.items()} if query_time_spans(query, ranking, now) else {}
    fused = fuse(found.vector, found.lexical, ranking.vector_weight)
    read = source.memories(event_candidates(fused, query=query, dates=dates, limit=limit, ranking=ranking, now=now))
    ranked = rank_candidates(fused, query=query, dates=dates, ranking=ranking, now=now,
                             events={mid: event_spans_of(m) for mid, m in read.items()})

    def weighed(questions: set[str]) -> set[str]:
        return _echoing(ctx, query, found.vector, ranking, questions)

    return _top_memories(source, ranked, limit, ranking.question_weight, read, weighed)


def search_in_process(ctx: MemoryContext, user_id: str, query: str, limit: int, *,
                      after: datetime | None = None, before: datetime | None = None,
                      ranking: ChatRanking = DEFAULT_CHAT_RANKING, now: datetime | None = None) -> list[ChatMemory]:
    """:func:`hybrid_search` on the in-process source, whatever the store offers."""
    return hybrid_search(ctx, user_id, query, limit, after=after, before=before, ranking=ranking, now=now,
                         source=_InProcessSource(ctx, user_id, after, before, ranking))


def _source(ctx: MemoryContext, user_id: str, after: datetime | None, before: datetime | None,
            ranking: ChatRanking) -> _CandidateSource:
    repo = ctx.chat_repo
    if not repo.lexical_ready(user_id):
        return _InProcessSource(ctx, user_id, after, before, ranking)
    span = None if after is None and before is None else (
        None if after is None else after.timestamp(), None if before is None else before.timestamp())
    return _IndexedSource(repo, user_id, span, ranking)


def _top_memories(source: _CandidateSource, ranked: Sequence[tuple[str, float]], limit: int,
                  weight: float, known: Mapping[str, ChatMemory],
                  weighed: Callable[[set[str]], set[str]]) -> list[ChatMemory]:
    """The best ``limit`` memories of ``ranked`` once question-only ones are weighted.

    Memories are read in rounds of ``limit``, best first (``known`` ones are not read
    again); ``weighed`` picks, among the question-only memories read, those the weight
    applies to. Weighting only lowers scores, so reading stops once the ``limit``-th
    weighted score read beats the next unread score; with the weight off, that is after
    the first round.
    """
    memories = dict(known)
    read, top = 0, []
    while read < len(ranked) and limit > 0:
        chunk = [mid for mid, _ in ranked[read:read + limit]]
        memories.update(source.memories([mid for mid in chunk if mid not in memories]))
        read += len(chunk)
        head = [(mid, s) for mid, s in ranked[:read] if mid in memories]
        questions = weighed({mid for mid, _ in head if memories[mid].asks_only}) if weight < 1.0 else set()
        top = weigh_questions(head, questions, weight)
        if weight >= 1.0 or read >= len(ranked) or (
                len(top) >= limit and top[limit - 1][1] > ranked[read][1]):
            break
    return [replace(memories[mid], score=round(score, 6)) for mid, score in top[:limit]]


def _echoing(ctx: MemoryContext, query: str, vector: Mapping[str, float], ranking: ChatRanking,
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


def _in_range(memory: ChatMemory, where: dict[str, Any]) -> bool:
    bounds = where.get("memory_ts", {})
    return bounds.get("$gte", float("-inf")) <= memory.memory_ts <= bounds.get("$lte", float("inf"))


def _lexical_texts(active: list[ChatMemory]) -> dict[str, str]:
    """What BM25 indexes per memory: a turn (with the trivial turns it carries) and its
    session neighbours (:data:`~hy_memory_langgraph.repos.chat_terms.LEXICAL_WINDOW`), else
    ``retrieval_text``."""
    before, after = LEXICAL_WINDOW
    neighbours = texts_with_neighbours([utterance(m) for m in active], before=before, after=after)
    return {m.memory_id: neighbours[m.memory_id] if session_of(m) is not None else m.retrieval_text
            for m in active}


def _per_revision(ctx: MemoryContext, name: str, user_id: str, make: Callable[[], T]) -> T:
    """``make()``, cached per user until the user's revision changes."""
    revision = ctx.chat_repo.revision(user_id)
    cached = ctx.search_cache.get((name, user_id))
    if cached is not None and revision is not None and cached[0] == revision:
        return cached[1]
    made = make()
    ctx.search_cache.put((name, user_id), (revision, made))
    return made
