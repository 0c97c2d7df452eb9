"""The chat-search ranking: its settings and the pure step from candidate pools to a ranking.

:class:`ChatRanking` holds every tunable; :data:`DEFAULT_CHAT_RANKING` is the shipped
choice, made by leave-one-conversation-out cross-validation on LoCoMo and checked on BFCL
memory (``bench/locomo_recall.py``, ``bench/bfcl_recall.py``, ``bench/RECALL_NOTES.md``).
:func:`rank_candidates` fuses a vector pool and a lexical pool, boosts memories dated
within a date the query names, then lowers the memories that only ask a question
(:func:`weigh_questions`); scores end in [0, 1].

Example:
    >>> ranked = rank_candidates({"a": 0.82, "b": 0.80}, {"b": 6.0}, query="tea", dates={})
    >>> [doc for doc, _ in ranked]
    ['b', 'a']
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

from hy_memory_langgraph.retrieval.fusion import FusionConfig, fuse
from hy_memory_langgraph.retrieval.query import boost_by_time, time_mentions

__all__ = ["DEFAULT_CHAT_RANKING", "ChatRanking", "rank_candidates", "weigh_questions"]


@dataclass(frozen=True)
class ChatRanking:
    """Every tunable of chat search.

    Attributes:
        fusion: How the vector and lexical pools are fused.
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
        min_pool: Candidates taken from each retriever (at least; ``5 * limit`` when larger).
        context_before: Previous turns of the session added to a turn's lexical text.
        context_after: Following turns of the session added to a turn's lexical text.
        time_boost: Share of the score range added to memories dated within a date named
            in the query (0 turns it off; at 1.0 the worst dated candidate draws level with
            the best undated one).
        time_tolerance_days: Days each named date is widened by.
        question_weight: Factor in (0, 1] on the final score of a memory that only asks a
            question (a lite turn such as ``"What's my cat called?"``), so the statements
            that answer it rank above it; 1.0 turns it off.
    """

    fusion: FusionConfig = field(default_factory=lambda: FusionConfig("minmax", 0.4))
    k1: float = 0.6
    b: float = 0.6
    min_pool: int = 400
    context_before: int = 2
    context_after: int = 1
    time_boost: float = 0.5
    time_tolerance_days: int = 0
    question_weight: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 < self.question_weight <= 1.0:
            raise ValueError(f"question_weight={self.question_weight!r}: expected a number in (0, 1]")

    def pool(self, limit: int) -> int:
        """Candidates to take from each retriever for a search of ``limit`` results."""
        return max(5 * limit, self.min_pool)


DEFAULT_CHAT_RANKING = ChatRanking()


def _bounded(score: float, fusion: FusionConfig) -> float:
    """A fused score mapped monotonically onto [0, 1] (the order never changes).

    RRF: times ``k + 1`` (1.0 = first in both rankings); z-scores: logistic; the others
    are already in [0, 1] up to a negative cosine, clipped.
    """
    if fusion.method == "rrf":
        return min(1.0, score * (fusion.rrf_k + 1.0))
    if fusion.method == "zscore":
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, score))))
    return min(1.0, max(0.0, score))


def rank_candidates(
    vector: Mapping[str, float],
    lexical: Mapping[str, float],
    *,
    query: str,
    dates: Mapping[str, date | datetime | None],
    ranking: ChatRanking = DEFAULT_CHAT_RANKING,
    questions: Collection[str] = frozenset(),
) -> list[tuple[str, float]]:
    """Fuse the two candidate pools, boost memories dated as the query says, lower the
    question-only ones (:func:`weigh_questions`); best first.

    Args:
        vector: ``{memory_id: cosine}`` from vector search.
        lexical: ``{memory_id: BM25 score}`` from lexical search.
        query: The query text (read for dates such as ``on 7 July, 2023``, ``in May 2022``).
        dates: Memory date of the candidates (for the time boost).
        ranking: The settings.
        questions: Ids of the candidates that only ask a question (only read when
            ``ranking.question_weight`` < 1).

    Returns:
        ``(memory_id, score)`` for every candidate, best first (ties by id), scores in [0, 1].
    """
    fused = [(d, _bounded(s, ranking.fusion)) for d, s in fuse(vector, lexical, ranking.fusion)]
    boosted = boost_by_time(fused, dates, time_mentions(query), boost=ranking.time_boost,
                            tolerance_days=ranking.time_tolerance_days)
    top = max((s for _, s in boosted), default=1.0)
    scaled = boosted if top <= 1.0 else [(d, s / top) for d, s in boosted]
    return weigh_questions(scaled, questions, ranking.question_weight)


def weigh_questions(ranked: Sequence[tuple[str, float]], questions: Collection[str],
                    weight: float) -> list[tuple[str, float]]:
    """A final ranking with the scores of question-only memories multiplied by ``weight``.

    The last step of every chat-search path: :func:`rank_candidates` calls it with the
    ids it is given, and a path that learns which candidates are questions only after
    ranking (from the flag stored with each memory) calls it on the ranked candidates.
    Scores only go down, so a prefix of ``ranked`` whose ``limit``-th weighted score
    beats the next unweighted score already holds the final top ``limit``.

    Args:
        ranked: ``(memory_id, score)``, best first.
        questions: Ids of the memories that only ask a question.
        weight: Factor in (0, 1]; 1.0 leaves the ranking as it is.

    Returns:
        ``(memory_id, score)`` best first (ties by id).

    Example:
        >>> weigh_questions([("q", 0.9), ("fact", 0.8)], {"q"}, 0.5)
        [('fact', 0.8), ('q', 0.45)]
    """
    if weight >= 1.0 or not questions:
        return list(ranked)
    weighed = [(d, s * weight if d in questions else s) for d, s in ranked]
    return sorted(weighed, key=lambda pair: (-pair[1], pair[0]))
