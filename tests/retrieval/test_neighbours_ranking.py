"""Session neighbours as lexical context, and the chat ranking step."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from hy_memory_langgraph.retrieval.fusion import FusionConfig
from hy_memory_langgraph.retrieval.neighbours import Utterance, texts_with_neighbours
from hy_memory_langgraph.retrieval.ranking import (
    DEFAULT_CHAT_RANKING,
    ChatRanking,
    add_second_hop,
    hop_seeds,
    merge_neighbours,
    rank_candidates,
)


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
    plain = rank_candidates(vector, lexical, query="camping trip", dates={})
    assert [d for d, _ in plain][0] == "a"
    assert plain[0][1] == pytest.approx(1.0)  # first in both rankings
    assert all(0.0 <= s <= 1.0 for _, s in plain)
    dated = rank_candidates(vector, lexical, query="camping trip on 7 July, 2023",
                            dates={"c": date(2023, 7, 7)}, ranking=ChatRanking(time_boost=2.0))
    assert [d for d, _ in dated][0] == "c"
    assert all(0.0 <= s <= 1.0 for _, s in dated)


@pytest.mark.parametrize("method", ["rrf", "zscore", "minmax", "rank", "max"])
def test_rank_candidates_keeps_fusion_order_for_every_method(method: str) -> None:
    from hy_memory_langgraph.retrieval.fusion import fuse

    vector, lexical = {"a": 0.9, "b": 0.7, "c": -0.2}, {"b": 2.0, "d": 1.0}
    ranking = ChatRanking(fusion=FusionConfig(method, 0.4), time_boost=0.0)
    got = rank_candidates(vector, lexical, query="q", dates={}, ranking=ranking)
    assert [d for d, _ in got] == [d for d, _ in fuse(vector, lexical, ranking.fusion)]
    assert all(0.0 <= s <= 1.0 for _, s in got)


def test_pool_grows_with_the_limit() -> None:
    assert DEFAULT_CHAT_RANKING.pool(10) == DEFAULT_CHAT_RANKING.min_pool
    assert DEFAULT_CHAT_RANKING.pool(1000) == 5000


def test_second_hop_off_by_default_and_adds_pools_with_their_weights() -> None:
    assert not DEFAULT_CHAT_RANKING.vector_hop and not DEFAULT_CHAT_RANKING.lexical_hop
    first = [("a", 1.0), ("b", 0.6), ("c", 0.2)]
    ranking = ChatRanking(hop_seeds=1, hop_vector_weight=0.5, hop_lexical_weight=0.5)
    assert hop_seeds(first, ranking) == {"a": 1.0}
    assert add_second_hop(first, {}, {}, ranking=ranking) == first
    # the seed is left out of the pools; "d" (not in the first pass) starts at the lowest
    # score, 0.2, and gains 0.5 x the range 0.8 from each pool where it is the best
    out = add_second_hop(first, {"a": 0.99, "d": 0.9, "b": 0.5}, {"d": 3.0, "c": 1.0}, ranking=ranking)
    assert out == [("a", 1.0), ("d", pytest.approx(1.0)), ("b", 0.6), ("c", 0.2)]
    strong = add_second_hop(first, {"d": 0.9, "b": 0.5}, {}, ranking=replace(ranking, hop_vector_weight=2.0))
    assert [d for d, _ in strong] == ["d", "a", "b", "c"] and strong[0][1] == 1.0  # rescaled to [0, 1]
    assert merge_neighbours({"a": {"a": 1.0, "d": 0.9, "e": 0.8}, "b": {"d": 0.5, "f": 0.95}}, 1) == \
        {"d": 0.9, "f": 0.95}
