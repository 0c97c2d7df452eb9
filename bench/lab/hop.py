"""A second hop for multi-hop questions (measured, not shipped: ``bench/NOTES.md``).

The first pass's top memories (the *seeds*) become new queries: their stored vectors
(the vector hop: each seed's nearest memories) and their most telling terms the query
lacks (the lexical hop: one more BM25 query, :func:`hop_terms`). Each hop's pool is
added to the first-pass ranking with a weight (:func:`add_second_hop`), so a memory that
shares an entity with a seed but not with the question can enter the top k.

Example:
    >>> hop = Hop(seeds=1, vector_weight=0.5)
    >>> add_second_hop([("a", 1.0), ("b", 0.6), ("c", 0.5)], {"c": 0.9, "b": 0.2}, {}, hop)
    [('a', 1.0), ('c', 0.75), ('b', 0.6)]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bench.lab.expansion import TermStats, expand_with_feedback
from bench.lab.fusion import minmax_pool

__all__ = ["Hop", "add_second_hop", "hop_terms", "merge_neighbours"]


@dataclass(frozen=True)
class Hop:
    """The second hop's settings.

    Attributes:
        seeds: First-pass top memories used as seeds (0 turns the hop off).
        vector_weight: Weight of the vector hop (the seeds' vectors as queries; 0: none).
        lexical_weight: Weight of the lexical hop (the seeds' feedback terms as a BM25
            query; 0: none).
        terms: Terms of the lexical hop's query.
        neighbours: Memories each hop adds at most (per seed for the vector hop).
    """

    seeds: int = 0
    vector_weight: float = 0.0
    lexical_weight: float = 0.0
    terms: int = 10
    neighbours: int = 50

    @property
    def vector(self) -> bool:
        """Whether the vector hop runs."""
        return self.seeds > 0 and self.vector_weight > 0

    @property
    def lexical(self) -> bool:
        """Whether the lexical hop runs."""
        return self.seeds > 0 and self.lexical_weight > 0 and self.terms > 0

    def seeds_of(self, ranked: Sequence[tuple[str, float]]) -> dict[str, float]:
        """The first-pass top :attr:`seeds` memories with their scores."""
        return dict(ranked[:max(self.seeds, 0)])


def hop_terms(terms: Mapping[str, float], stats: TermStats, seeds: Mapping[str, float], *,
              n_terms: int) -> Counter[str]:
    """The lexical hop's query: the ``n_terms`` most telling terms of the seed memories that
    the query does not have (weights as :func:`~bench.lab.expansion.expand_with_feedback`
    gives them, the best at 1.0)."""
    expanded = expand_with_feedback(terms, stats, seeds, n_terms=n_terms, weight=1.0)
    return Counter({t: w for t, w in expanded.items() if t not in terms})


def merge_neighbours(per_seed: Mapping[str, Mapping[str, float]], limit: int) -> dict[str, float]:
    """One vector-hop pool from each seed's nearest memories: a memory's best cosine to any
    seed, the seeds themselves left out, at most ``limit`` per seed (best first, ties by id).

    Example:
        >>> merge_neighbours({"a": {"a": 1.0, "b": 0.9, "c": 0.5}, "b": {"b": 1.0, "c": 0.7}}, 5)
        {'c': 0.7}
    """
    out: dict[str, float] = {}
    for hits in per_seed.values():
        near = sorted(((d, s) for d, s in hits.items() if d not in per_seed), key=lambda kv: (-kv[1], kv[0]))
        for doc, score in near[:limit]:
            out[doc] = max(score, out.get(doc, score))
    return out


def add_second_hop(ranked: Sequence[tuple[str, float]], vector_hop: Mapping[str, float],
                   lexical_hop: Mapping[str, float], hop: Hop) -> list[tuple[str, float]]:
    """The first-pass ranking with the second hop's pools added; best first, scores in [0, 1].

    Each hop pool is min-max normalised and added with its weight times the first pass's
    score range. A memory of a hop pool missing from the first pass starts from the lowest
    first-pass score; the seeds keep their first-pass scores.

    Args:
        ranked: ``(memory_id, score)`` of the first pass, best first.
        vector_hop: ``{memory_id: cosine}`` from :func:`merge_neighbours` (may be empty).
        lexical_hop: ``{memory_id: BM25 score}`` of the :func:`hop_terms` query (may be empty).
        hop: The settings (weights).
    """
    if not ranked:
        return list(ranked)
    scores = dict(ranked)
    seeds = hop.seeds_of(ranked)
    lo, hi = min(scores.values()), max(scores.values())
    span = (hi - lo) or 1.0
    for pool, weight in ((vector_hop, hop.vector_weight), (lexical_hop, hop.lexical_weight)):
        if weight <= 0 or not pool:
            continue
        for doc, value in minmax_pool({d: s for d, s in pool.items() if d not in seeds}).items():
            scores[doc] = scores.get(doc, lo) + weight * span * value
    out = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    top = out[0][1]
    return out if top <= 1.0 else [(d, s / top) for d, s in out]
