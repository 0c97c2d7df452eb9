"""The chat-search ranking: its settings and the pure step from candidate pools to a ranking.

:class:`ChatRanking` holds every tunable; :data:`DEFAULT_CHAT_RANKING` is the shipped
choice, made by leave-one-conversation-out cross-validation on LoCoMo and checked on BFCL
memory (``bench/locomo_recall.py``, ``bench/bfcl_recall.py``, ``bench/RECALL_NOTES.md``).
:func:`fuse` fuses a vector pool and a lexical pool; :func:`rank_candidates` boosts the
memories dated within a date the query names, then lowers the memories that only ask a
question (:func:`weigh_questions`); scores end in [0, 1].

Example:
    >>> fused = fuse({"a": 0.82, "b": 0.80}, {"b": 6.0}, DEFAULT_CHAT_RANKING.vector_weight)
    >>> ranked = rank_candidates(fused, query="tea", dates={})
    >>> [doc for doc, _ in ranked]
    ['b', 'a']
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from hy_memory_langgraph.retrieval.query import TimeSpan, boost_by_time, time_mentions
from hy_memory_langgraph.retrieval.relative_time import relative_spans


@dataclass(frozen=True)
class ChatRanking:
    """Every tunable of chat search.

    Attributes:
        vector_weight: Share of the vector pool in the fused score (:func:`fuse`), in
            [0, 1]; 1.0 ranks by vectors alone, 0.0 by BM25 alone.
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
        min_pool: Candidates taken from each retriever (at least; ``5 * limit`` when larger).
        time_boost: Share of the score range added to memories dated within a date named
            in the query (0 turns it off; at 1.0 the worst dated candidate draws level with
            the best undated one).
        relative_query: Resolve relative phrases of the query (``last weekend``, ``上个月``)
            against the time of the search (:mod:`~hy_memory_langgraph.retrieval.relative_time`)
            as well as its explicit dates.
        event_spans: Also boost a memory whose own text dates an event within a named
            date ("I went camping two weeks ago", resolved against its ``memory_at``).
            On by default: held-out LoCoMo R@5 +0.001, R@10 -0.0004 (within noise; in-sample
            tuning picks it), BFCL unchanged (``bench/RECALL_NOTES.md``).
        question_weight: Factor in (0, 1] on the final score of a memory that only asks a
            question (a lite turn such as ``"What's my cat called?"``), so the statements
            that answer it rank above it; 1.0 turns it off. Default 0.1, applied only to
            echoes (``question_echo``): weighting every question-only memory cost held-out
            LoCoMo recall, weighting echoes does not (``bench/RECALL_NOTES.md``).
        question_echo: With ``question_weight`` < 1, only the question-only memories that
            echo the query are weighted: those in the vector pool whose calibrated
            similarity to it (:class:`~hy_memory_langgraph.models.calibration.LanguageScale`)
            is at least this, in [0, 1); 0 weights every question-only memory
            (:func:`echoing_questions`). Default 0.6: the highest threshold of the grid that
            puts the fact first in ``bench/question_turns.py`` with e5-small.
    """

    vector_weight: float = 0.4
    k1: float = 0.6
    b: float = 0.6
    min_pool: int = 400
    time_boost: float = 0.5
    relative_query: bool = True
    event_spans: bool = True
    question_weight: float = 0.1
    question_echo: float = 0.6

    def __post_init__(self) -> None:
        if not 0.0 <= self.vector_weight <= 1.0:
            raise ValueError(f"vector_weight={self.vector_weight!r}: expected a number in [0, 1]")
        if not 0.0 < self.question_weight <= 1.0:
            raise ValueError(f"question_weight={self.question_weight!r}: expected a number in (0, 1]")
        if not 0.0 <= self.question_echo < 1.0:
            raise ValueError(f"question_echo={self.question_echo!r}: expected a number in [0, 1)")

    def pool(self, limit: int) -> int:
        """Candidates to take from each retriever for a search of ``limit`` results."""
        return max(5 * limit, self.min_pool)


DEFAULT_CHAT_RANKING = ChatRanking()


def fuse(vector: Mapping[str, float], lexical: Mapping[str, float], weight: float) -> list[tuple[str, float]]:
    """Min-max fusion of two candidate pools, best first (ties by id), scores in [0, 1].

    Each pool is mapped onto [0, 1] by ``(s - min) / (max - min)`` (a pool whose scores
    are all equal: 1.0; a non-finite score counts as 0); a memory's fused score is
    ``weight * vector + (1 - weight) * lexical``, 0 on the side whose pool lacks it.
    (Reciprocal-rank, z-score and rank-percentile fusion were measured against it:
    ``bench/lab/fusion.py``.)

    Args:
        vector: ``{memory_id: cosine}`` from vector search.
        lexical: ``{memory_id: BM25 score}`` from lexical search.
        weight: Share of the vector side, in [0, 1].

    Example:
        >>> fuse({"a": 0.83, "b": 0.81}, {"b": 7.5, "c": 2.0}, 0.4)
        [('b', 0.6), ('a', 0.4), ('c', 0.0)]
    """
    nv, nl = _minmax(vector), _minmax(lexical)
    fused = {d: weight * nv.get(d, 0.0) + (1.0 - weight) * nl.get(d, 0.0) for d in dict.fromkeys([*vector, *lexical])}
    ranked = sorted(sorted(fused), key=fused.__getitem__, reverse=True)
    return [(d, min(1.0, max(0.0, fused[d]))) for d in ranked]


def _minmax(scores: Mapping[str, float]) -> dict[str, float]:
    clean = {d: s if math.isfinite(s) else 0.0 for d, s in scores.items()}
    if not clean:
        return {}
    lo, hi = min(clean.values()), max(clean.values())
    if hi - lo <= 0.0 or not math.isfinite(hi - lo):
        return dict.fromkeys(clean, 1.0)
    return {d: (s - lo) / (hi - lo) for d, s in clean.items()}


def query_time_spans(query: str, ranking: ChatRanking = DEFAULT_CHAT_RANKING,
                     now: date | datetime | None = None) -> list[TimeSpan]:
    """The dates ``query`` names: explicit ones, and relative ones seen from ``now``.

    Relative phrases are read only with ``ranking.relative_query`` and a ``now``.

    Example:
        >>> [s.label for s in query_time_spans("What did I do last weekend?", now=date(2024, 6, 5))]
        ['2024-06-01..2024-06-02']
    """
    spans = time_mentions(query)
    if ranking.relative_query and now is not None:
        day = now.date() if isinstance(now, datetime) else now
        spans += [s for s in relative_spans(query, day) if s not in spans]
    return spans


def rank_candidates(
    fused: Sequence[tuple[str, float]],
    *,
    query: str,
    dates: Mapping[str, date | datetime | None],
    ranking: ChatRanking = DEFAULT_CHAT_RANKING,
    now: date | datetime | None = None,
    events: Mapping[str, Sequence[TimeSpan]] | None = None,
    questions: Collection[str] = frozenset(),
) -> list[tuple[str, float]]:
    """Boost the fused candidates dated as the query says, lower the question-only ones
    (:func:`weigh_questions`); best first.

    Args:
        fused: ``(memory_id, score)`` best first, scores in [0, 1] (:func:`fuse`).
        query: The query text (read for dates such as ``on 7 July, 2023``, ``in May 2022``).
        dates: Memory date of the candidates (for the time boost).
        ranking: The settings.
        now: When the search happens (relative phrases of the query are resolved against
            it; ``None``: only explicit dates count).
        events: Event spans of candidates (read only with ``ranking.event_spans``).
        questions: Ids of the candidates that only ask a question (only read when
            ``ranking.question_weight`` < 1).

    Returns:
        ``(memory_id, score)`` for every candidate, best first (ties by id), scores in [0, 1].
    """
    boosted = boost_by_time(fused, dates, query_time_spans(query, ranking, now), boost=ranking.time_boost,
                            events=events if ranking.event_spans else None)
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


def echoing_questions(questions: Iterable[str], cosines: Mapping[str, float],
                      similarity: Callable[[float], float], echo: float) -> set[str]:
    """The question-only memories ``ChatRanking.question_weight`` applies to.

    With ``echo`` > 0, only those that echo the query: in the vector pool (``cosines``, as
    the search computed it; no embedding call) with a calibrated similarity of at least
    ``echo``. A question outside the pool is no echo.

    Args:
        questions: Ids of the candidates that only ask a question.
        cosines: ``{memory_id: cosine to the query}`` of the vector pool.
        similarity: Maps a raw cosine to the calibrated scale (e.g.
            ``Calibration.for_text(query).similarity``); not called when ``echo`` is 0.
        echo: ``ChatRanking.question_echo``; 0 selects every question.

    Example:
        >>> sorted(echoing_questions({"a", "b", "c"}, {"a": 0.9, "b": 0.5}, lambda c: c, 0.75))
        ['a']
    """
    if echo <= 0:
        return set(questions)
    return {d for d in questions if d in cosines and similarity(cosines[d]) >= echo}


def event_candidates(
    fused: Sequence[tuple[str, float]],
    *,
    query: str,
    dates: Mapping[str, date | datetime | None],
    limit: int,
    ranking: ChatRanking = DEFAULT_CHAT_RANKING,
    now: date | datetime | None = None,
) -> list[str]:
    """The candidates whose event spans could change the top ``limit`` of :func:`rank_candidates`.

    A search that has to read memories to learn their event spans reads only these: the
    candidates not already boosted by their date whose score plus the boost reaches the
    ``limit``-th best score boosted by dates alone (event boosts only raise that bar), so
    the top ``limit`` is the same as with every candidate's events. Empty when the query
    names no date or the ranking reads no event spans.

    Example:
        >>> on = ChatRanking(event_spans=True)
        >>> fused = fuse({"a": 0.9, "b": 0.8, "c": 0.1}, {}, on.vector_weight)
        >>> event_candidates(fused, query="in May 2023", dates={}, limit=1, ranking=on)
        ['a', 'b']
    """
    spans = query_time_spans(query, ranking, now)
    if not (ranking.event_spans and ranking.time_boost > 0 and spans and fused):
        return []
    boosted = dict(boost_by_time(fused, dates, spans, boost=ranking.time_boost))
    scores = [s for _, s in fused]
    gain = ranking.time_boost * (max(scores) - min(scores))
    bar = sorted(boosted.values(), reverse=True)[limit - 1] if 0 < limit < len(fused) else -math.inf
    return [d for d, s in fused if boosted[d] == s and s + gain >= bar and gain > 0]
