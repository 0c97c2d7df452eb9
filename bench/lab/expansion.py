"""Query-term experiments over a set of indexed texts (not shipped: ``bench/NOTES.md``).

* :class:`TermStats`: what the helpers read about the indexed texts (document count, each
  document's term counts, each term's document frequency);
* :func:`drop_common_terms` drops query terms found in more than a share of the memories
  (names of the two speakers of a conversation, words every message shares);
* :func:`expand_with_feedback` adds the most telling terms of the first-pass top memories
  to the query (pseudo-relevance feedback, RM3 style).

Example:
    >>> from collections import Counter
    >>> stats = TermStats({"1": ["camp", "mountain"], "2": ["camp", "lake"], "3": ["pottery"]})
    >>> drop_common_terms(Counter({"camp": 1.0, "lake": 1.0}), stats, 0.5)
    Counter({'lake': 1.0})
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

__all__ = ["TermStats", "drop_common_terms", "expand_with_feedback"]


class TermStats:
    """Term statistics of tokenised documents, as a BM25 index over them counts them.

    Args:
        docs: ``{doc_id: tokens}`` (repeats are term frequencies).
    """

    def __init__(self, docs: Mapping[str, Sequence[str]]) -> None:
        self._counts = {doc_id: Counter(tokens) for doc_id, tokens in docs.items()}
        self._df = Counter(term for counts in self._counts.values() for term in counts)

    def __len__(self) -> int:
        return len(self._counts)

    def term_counts(self, doc_id: str) -> Counter[str]:
        """A copy of the term frequencies of ``doc_id`` (empty when unknown)."""
        return Counter(self._counts.get(doc_id, ()))

    def document_frequency(self, term: str) -> int:
        """How many documents contain ``term``."""
        return self._df.get(term, 0)


def drop_common_terms(terms: Mapping[str, float], stats: TermStats, max_df: float) -> Counter[str]:
    """The query terms found in at most ``max_df`` (a share) of the documents.

    When every term is that common, the terms are kept as they are (so a query never
    becomes empty).

    Args:
        terms: ``{term: weight}`` of the query.
        stats: The documents whose frequencies count.
        max_df: Share in (0, 1]; 1.0 keeps everything.
    """
    kept = Counter(dict(terms))
    n_docs = len(stats)
    if max_df >= 1.0 or not n_docs:
        return kept
    rare = Counter({t: w for t, w in kept.items() if stats.document_frequency(t) <= max_df * n_docs})
    return rare or kept


def expand_with_feedback(
    terms: Mapping[str, float],
    stats: TermStats,
    feedback: Mapping[str, float],
    *,
    n_terms: int,
    weight: float,
) -> Counter[str]:
    """Query terms plus the ``n_terms`` best terms of the feedback documents (RM3 style).

    A term's feedback value is ``sum over feedback documents of p(document) * tf / length``
    (``p`` proportional to the first-pass score), times its idf so words common to the
    whole history do not dominate. Expansion terms (not already in the query) get
    ``weight * value / best value``; the query's own terms keep their weights.

    Args:
        terms: ``{term: weight}`` of the query.
        stats: The documents the feedback documents are among.
        feedback: ``{doc_id: first-pass score}`` of the top documents (scores >= 0).
        n_terms: Expansion terms to add.
        weight: Weight of the best expansion term (an original term has weight 1 per occurrence).
    """
    out = Counter(dict(terms))
    total = math.fsum(max(s, 0.0) for s in feedback.values())
    if n_terms <= 0 or weight <= 0 or total <= 0 or not len(stats):
        return out
    n_docs = len(stats)
    value: dict[str, float] = {}
    for doc_id, score in feedback.items():
        counts = stats.term_counts(doc_id)
        length = sum(counts.values())
        for term, tf in counts.items():
            if term not in out:
                value[term] = value.get(term, 0.0) + max(score, 0.0) / total * tf / length
    for term in value:
        df = stats.document_frequency(term)
        value[term] *= math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
    best = sorted(value.items(), key=lambda kv: (-kv[1], kv[0]))[:n_terms]
    if best and best[0][1] > 0:
        top = best[0][1]
        out.update({term: weight * v / top for term, v in best if v > 0})
    return out
