"""Fusion methods measured against the shipped min-max fusion.

Both inputs are candidate pools ``{doc_id: score}`` (the top hits of each retriever, higher
is better). Each method maps every pool onto a common scale, then takes the weighted sum
``weight * vector + (1 - weight) * lexical``; a document missing from one pool gets that
pool's floor (see each method). Methods:

* ``"minmax"``: the library's :func:`~hy_memory_langgraph.retrieval.ranking.fuse` (shipped).
* ``"rrf"``: reciprocal rank, ``1 / (k + rank)`` (rank from 1). Uses ranks only, so it does
  not care how either retriever spreads its scores. Missing: 0.
* ``"zscore"``: ``(s - mean) / std`` over the pool. Missing: the pool's lowest z-score.
* ``"rank"``: rank percentile, ``1 - (rank - 1) / len(pool)``. Missing: 0.
* ``"max"``: the ranking before the LoCoMo work, raw cosine with BM25 divided by its
  maximum. Missing: 0.

Ties in the fused ranking break by document id, so the output is deterministic.

Example:
    >>> fused = fuse({"a": 0.83, "b": 0.81}, {"b": 7.5, "c": 2.0}, FusionConfig("rrf", 0.5, 60))
    >>> [doc for doc, _ in fused]
    ['b', 'a', 'c']
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hy_memory_langgraph.retrieval import ranking as shipped

__all__ = ["FUSION_METHODS", "FusionConfig", "fuse", "fused", "minmax_pool", "normalize_pool"]

Scores = Mapping[str, float]


@dataclass(frozen=True)
class FusionConfig:
    """How to fuse: ``method`` (see the module doc), vector ``weight``, RRF ``k``.

    Attributes:
        method: One of :data:`FUSION_METHODS`.
        weight: Share of the vector side, in [0, 1]; 1.0 ranks by vectors alone, 0.0 by
            lexical scores alone.
        rrf_k: The ``k`` of reciprocal-rank fusion (ignored by other methods).
    """

    method: str = "rrf"
    weight: float = 0.5
    rrf_k: float = 60.0

    def __post_init__(self) -> None:
        if self.method not in FUSION_METHODS:
            raise ValueError(f"method must be one of {sorted(FUSION_METHODS)}, got {self.method!r}")
        if not 0.0 <= self.weight <= 1.0:
            raise ValueError("weight must be in [0, 1]")
        if self.rrf_k < 0:
            raise ValueError("rrf_k must be >= 0")


def _ranked(scores: Scores) -> list[str]:
    """Ids best first (ties by id: the sort is stable, and ids are pre-sorted)."""
    return sorted(sorted(scores), key=scores.__getitem__, reverse=True)


def _clean(scores: Scores) -> dict[str, float]:
    return {d: (s if math.isfinite(s) else 0.0) for d, s in scores.items()}


def _rrf(scores: Scores, k: float) -> tuple[dict[str, float], float]:
    return {d: 1.0 / (k + rank) for rank, d in enumerate(_ranked(scores), 1)}, 0.0


def _rank_percentile(scores: Scores, _k: float) -> tuple[dict[str, float], float]:
    n = len(scores)
    return {d: 1.0 - i / n for i, d in enumerate(_ranked(scores))}, 0.0


def _zscore(scores: Scores, _k: float) -> tuple[dict[str, float], float]:
    clean = _clean(scores)
    mean = sum(clean.values()) / len(clean)
    std = math.sqrt(sum((s - mean) ** 2 for s in clean.values()) / len(clean))
    if std <= 0.0 or not math.isfinite(std):
        return {d: 0.0 for d in clean}, 0.0
    normed = {d: (s - mean) / std for d, s in clean.items()}
    return normed, min(normed.values())


def _minmax(scores: Scores, _k: float) -> tuple[dict[str, float], float]:
    return minmax_pool(scores), 0.0


def _by_max(scores: Scores, _k: float) -> tuple[dict[str, float], float]:
    clean = _clean(scores)
    top = max(clean.values()) or 1.0
    return {d: s / top for d, s in clean.items()}, 0.0


Normalizer = Callable[[Scores, float], tuple[dict[str, float], float]]

_NORMALIZERS: dict[str, Normalizer] = {"rrf": _rrf, "rank": _rank_percentile, "minmax": _minmax, "zscore": _zscore}
FUSION_METHODS = frozenset({*_NORMALIZERS, "max"})


def minmax_pool(scores: Scores) -> dict[str, float]:
    """One pool min-max normalised as the shipped fusion does it (its vector side at weight 1).

    Example:
        >>> minmax_pool({"a": 3.0, "b": 1.0})
        {'a': 1.0, 'b': 0.0}
    """
    return dict(shipped.fuse(scores, {}, 1.0))


def normalize_pool(scores: Scores, method: str, *, rrf_k: float = 60.0) -> tuple[dict[str, float], float]:
    """Map one candidate pool onto the scale of ``method``.

    Args:
        scores: ``{doc_id: score}``, higher is better (non-finite scores count as 0).
        method: ``"rrf"``, ``"rank"``, ``"minmax"`` or ``"zscore"``.
        rrf_k: The RRF ``k``.

    Returns:
        The normalised pool and the value a document missing from it gets.

    Example:
        >>> normalize_pool({"a": 3.0, "b": 1.0}, "rank")
        ({'a': 1.0, 'b': 0.5}, 0.0)
    """
    if method not in _NORMALIZERS:
        raise ValueError(f"method must be one of {sorted(_NORMALIZERS)}, got {method!r}")
    if not scores:
        return {}, 0.0
    return _NORMALIZERS[method](scores, rrf_k)


def fuse(vector: Scores, lexical: Scores, config: FusionConfig) -> list[tuple[str, float]]:
    """Fuse two candidate pools into one ranking, best first (ties by id).

    Args:
        vector: Vector-search pool ``{doc_id: cosine}``.
        lexical: Lexical pool ``{doc_id: BM25 score}``.
        config: Method, vector weight and RRF ``k``.

    Returns:
        ``(doc_id, fused score)`` for every document of either pool.
    """
    if config.method == "minmax":
        return shipped.fuse(vector, lexical, config.weight)
    if config.method == "max":
        nv, floor_v = (_clean(vector), 0.0) if vector else ({}, 0.0)
        nl, floor_l = _by_max(lexical, 0.0) if lexical else ({}, 0.0)
    else:
        nv, floor_v = normalize_pool(vector, config.method, rrf_k=config.rrf_k)
        nl, floor_l = normalize_pool(lexical, config.method, rrf_k=config.rrf_k)
    w = config.weight
    fused = {d: w * nv.get(d, floor_v) + (1.0 - w) * nl.get(d, floor_l) for d in dict.fromkeys([*vector, *lexical])}
    return [(d, fused[d]) for d in _ranked(fused)]


def fused(vector: Scores, lexical: Scores, fusion: FusionConfig) -> list[tuple[str, float]]:
    """The two pools fused by ``fusion`` and mapped monotonically onto [0, 1], best first:
    what the library's :func:`~hy_memory_langgraph.retrieval.ranking.rank_candidates`
    ranks. Min-max is the library's :func:`~hy_memory_langgraph.retrieval.ranking.fuse`
    itself; RRF scores are multiplied by ``k + 1`` (1.0 = first in both rankings), z-scores
    go through a logistic, the others are clipped (a negative cosine).

    Example:
        >>> fused({"a": 0.83, "b": 0.81}, {"b": 7.5}, FusionConfig("rrf", 0.5, 60))
        [('b', 0.9919354838709679), ('a', 0.5)]
    """
    if fusion.method == "minmax":
        return shipped.fuse(vector, lexical, fusion.weight)
    return [(d, _bounded(s, fusion)) for d, s in fuse(vector, lexical, fusion)]


def _bounded(score: float, fusion: FusionConfig) -> float:
    if fusion.method == "rrf":
        return min(1.0, score * (fusion.rrf_k + 1.0))
    if fusion.method == "zscore":
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, score))))
    return min(1.0, max(0.0, score))
