"""The lab's query expansion and second hop (bench/lab/expansion.py, bench/lab/hop.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.lab.expansion import TermStats, drop_common_terms, expand_with_feedback
from bench.lab.hop import Hop, add_second_hop, hop_terms, merge_neighbours
from hy_memory_langgraph.retrieval.bm25 import BM25Index, tokenize

TEXTS = {
    "1": "Caroline: I went camping in the mountains",
    "2": "Melanie: camping trip with the kids, we saw the Perseid meteor shower",
    "3": "Caroline: pottery class on Friday",
    "4": "Melanie: my kids love dinosaurs",
}


def _stats() -> TermStats:
    return TermStats({doc_id: tokenize(text) for doc_id, text in TEXTS.items()})


def test_term_stats_count_as_a_bm25_index_over_the_same_texts() -> None:
    stats, index = _stats(), BM25Index()
    for doc_id, text in TEXTS.items():
        index.add(doc_id, text)
    assert len(stats) == len(index) == 4
    assert stats.term_counts("2") == Counter(tokenize(TEXTS["2"]))
    assert stats.term_counts("missing") == Counter()
    assert stats.document_frequency("camp") == 2 and stats.document_frequency("nope") == 0
    assert set(index.score_terms({"camp": 1.0})) == {"1", "2"}


def test_drop_common_terms_keeps_rare_ones_and_never_empties() -> None:
    stats = _stats()
    terms = Counter(tokenize("Caroline camping mountains"))
    assert set(drop_common_terms(terms, stats, 0.3)) == {"mountain"}
    assert drop_common_terms(Counter({"caroline": 1.0}), stats, 0.3) == Counter({"caroline": 1.0})
    assert drop_common_terms(terms, stats, 1.0) == terms


def test_feedback_expansion_adds_terms_of_the_feedback_documents() -> None:
    stats = _stats()
    terms = Counter(tokenize("camping"))
    expanded = expand_with_feedback(terms, stats, {"2": 1.0}, n_terms=2, weight=0.5)
    assert expanded["camp"] == 1
    added = set(expanded) - set(terms)
    assert len(added) == 2 and added <= set(stats.term_counts("2"))
    assert max(expanded[t] for t in added) == pytest.approx(0.5)
    assert expand_with_feedback(terms, stats, {}, n_terms=2, weight=0.5) == terms


def test_hop_terms_are_the_seeds_terms_the_query_lacks() -> None:
    terms = Counter(tokenize("camping"))
    hop = hop_terms(terms, _stats(), {"2": 1.0}, n_terms=3)
    assert len(hop) == 3 and not set(hop) & set(terms)
    assert max(hop.values()) == pytest.approx(1.0)


def test_second_hop_is_off_by_default_and_adds_pools_with_their_weights() -> None:
    assert not Hop().vector and not Hop().lexical
    first = [("a", 1.0), ("b", 0.6), ("c", 0.2)]
    hop = Hop(seeds=1, vector_weight=0.5, lexical_weight=0.5)
    assert hop.seeds_of(first) == {"a": 1.0}
    assert add_second_hop(first, {}, {}, hop) == first
    # the seed is left out of the pools; "d" (not in the first pass) starts at the lowest
    # score, 0.2, and gains 0.5 x the range 0.8 from each pool where it is the best
    out = add_second_hop(first, {"a": 0.99, "d": 0.9, "b": 0.5}, {"d": 3.0, "c": 1.0}, hop)
    assert out == [("a", 1.0), ("d", pytest.approx(1.0)), ("b", 0.6), ("c", 0.2)]
    strong = add_second_hop(first, {"d": 0.9, "b": 0.5}, {}, Hop(seeds=1, vector_weight=2.0))
    assert [d for d, _ in strong] == ["d", "a", "b", "c"] and strong[0][1] == 1.0  # rescaled to [0, 1]
    assert merge_neighbours({"a": {"a": 1.0, "d": 0.9, "e": 0.8}, "b": {"d": 0.5, "f": 0.95}}, 1) == \
        {"d": 0.9, "f": 0.95}
