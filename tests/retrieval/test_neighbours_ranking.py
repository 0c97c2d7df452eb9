"""Session neighbours as lexical context, and the chat ranking step."""

from __future__ import annotations

import math
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hy_memory_langgraph.retrieval.neighbours import Utterance, texts_with_neighbours
from hy_memory_langgraph.retrieval.ranking import (
    DEFAULT_CHAT_RANKING,
    ChatRanking,
    fuse,
    rank_candidates,
)

pools = st.dictionaries(st.sampled_from("abcdefgh"), st.floats(-5, 50, allow_nan=False), max_size=8)


def _turns() -> list[Utterance]:
    return [
        Utterance("c", "s1", (3,), "three"), Utterance("a", "s1", (1,), "one"),
        Utterance("b", "s1", (2,), "two"), Utterance("d", "s1", (4,), "four"),
        Utterance("x", "s2", (1,), "other session"), Utterance("n", None, (0,), "no session"),
    ]  # fmt: skip


def test_neighbours_in_session_order_previous_then_next() -> None:
    texts = texts_with_neighbours(_turns(), before=2, after=1)
    assert texts["c"] == "three\ntwo\none\nfour"
    assert texts["a"] == "one\ntwo"
    assert texts["d"] == "four\nthree\ntwo"
    assert texts["x"] == "other session" and texts["n"] == "no session"


def test_zero_window_keeps_own_text_and_long_neighbours_are_cut() -> None:
    assert texts_with_neighbours(_turns(), before=0, after=0)["c"] == "three"
    long = [Utterance("a", "s", (1,), "x" * 50 + "tail"), Utterance("b", "s", (2,), "own")]
    assert texts_with_neighbours(long, before=1, after=0, max_chars=4)["b"] == "own\ntail"
    with pytest.raises(ValueError):
        texts_with_neighbours(long, before=-1, after=0)


def test_rank_candidates_scores_in_unit_range_and_boosts_dates() -> None:
    vector = {"a": 0.84, "b": 0.83, "c": 0.80}
    lexical = {"a": 7.0, "c": 3.0, "b": 1.0}
    fused = fuse(vector, lexical, 0.4)
    plain = rank_candidates(fused, query="camping trip", dates={})
    assert [d for d, _ in plain][0] == "a"
    assert plain[0][1] == pytest.approx(1.0)  # first in both rankings
    assert all(0.0 <= s <= 1.0 for _, s in plain)
    dated = rank_candidates(fused, query="camping trip on 7 July, 2023",
                            dates={"c": date(2023, 7, 7)}, ranking=ChatRanking(time_boost=2.0))
    assert [d for d, _ in dated][0] == "c"
    assert all(0.0 <= s <= 1.0 for _, s in dated)


def test_fuse_maps_each_pool_onto_the_unit_range_and_weighs_the_sides() -> None:
    fused = fuse({"a": 0.83, "b": 0.81}, {"b": 7.5, "c": 2.0}, 0.4)
    assert fused == [("b", 0.6), ("a", 0.4), ("c", 0.0)]  # a missing side counts 0
    assert fuse({"y": 1.0}, {"x": 1.0}, 0.5) == [("x", 0.5), ("y", 0.5)]  # ties by id
    assert fuse({"a": 5.0, "b": 5.0}, {}, 1.0) == [("a", 1.0), ("b", 1.0)]  # all equal: 1.0
    vector, lexical = {"a": 0.9, "b": 0.5, "c": 0.1}, {"c": 9.0, "b": 1.0, "d": 0.5}
    assert [d for d, _ in fuse(vector, lexical, 1.0)][:3] == ["a", "b", "c"]
    assert [d for d, _ in fuse(vector, lexical, 0.0)][:2] == ["c", "b"]
    assert fuse({}, {}, 0.4) == []


def test_fuse_counts_a_non_finite_score_as_zero() -> None:
    fused = dict(fuse({"a": math.inf, "b": 0.5, "c": 1.0}, {"a": math.nan, "c": 1.0, "d": 3.0}, 0.5))
    # inf and nan count 0: vector a 0, b 0.5, c 1; lexical a 0, c 1/3, d 1
    assert fused == pytest.approx({"c": 0.5 + 1 / 6, "d": 0.5, "b": 0.25, "a": 0.0})


@given(pools, pools, st.floats(0, 1))
def test_fuse_ranks_every_candidate_once_sorted_in_unit_range(vector: dict, lexical: dict, w: float) -> None:
    fused = fuse(vector, lexical, w)
    assert sorted(d for d, _ in fused) == sorted(set(vector) | set(lexical))
    assert all((-a[1], a[0]) <= (-b[1], b[0]) for a, b in zip(fused, fused[1:]))
    assert all(0.0 <= s <= 1.0 for _, s in fused)


def test_rank_candidates_keeps_the_fusion_order_without_dates() -> None:
    fused = fuse({"a": 0.9, "b": 0.7, "c": -0.2}, {"b": 2.0, "d": 1.0}, DEFAULT_CHAT_RANKING.vector_weight)
    assert rank_candidates(fused, query="q", dates={}, ranking=ChatRanking(time_boost=0.0)) == fused
    assert rank_candidates(fused, query="q", dates={}) == fused  # no date named: nothing boosted


@pytest.mark.parametrize("weight", [-0.1, 1.5])
def test_vector_weight_is_validated(weight: float) -> None:
    with pytest.raises(ValueError, match="vector_weight"):
        ChatRanking(vector_weight=weight)


def test_pool_grows_with_the_limit() -> None:
    assert DEFAULT_CHAT_RANKING.pool(10) == DEFAULT_CHAT_RANKING.min_pool
    assert DEFAULT_CHAT_RANKING.pool(1000) == 5000
