"""The lab's fusion methods (bench/lab/fusion.py), beside the shipped min-max fusion."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.lab.fusion import FUSION_METHODS, FusionConfig, fuse, fused, normalize_pool
from hy_memory_langgraph.retrieval import ranking as shipped

pools = st.dictionaries(st.sampled_from("abcdefgh"), st.floats(-5, 50, allow_nan=False), max_size=8)


def test_rrf_prefers_agreement_and_breaks_ties_by_id() -> None:
    fused = fuse({"a": 0.9, "b": 0.8}, {"b": 5.0, "c": 4.0}, FusionConfig("rrf", 0.5, 10))
    assert [d for d, _ in fused] == ["b", "a", "c"]
    assert dict(fused)["b"] == pytest.approx(0.5 / 12 + 0.5 / 11)
    assert [d for d, _ in fuse({"y": 1.0}, {"x": 1.0}, FusionConfig("rrf", 0.5, 10))] == ["x", "y"]


def test_rrf_ignores_score_scale() -> None:
    cfg = FusionConfig("rrf", 0.5, 60)
    a = fuse({"a": 0.81, "b": 0.80}, {"b": 3.0, "a": 1.0}, cfg)
    b = fuse({"a": 100.0, "b": -7.0}, {"b": 1e9, "a": 2.0}, cfg)
    assert [d for d, _ in a] == [d for d, _ in b]


def test_weight_extremes_follow_one_side() -> None:
    vector, lexical = {"a": 0.9, "b": 0.5, "c": 0.1}, {"c": 9.0, "b": 1.0, "d": 0.5}
    for method in ("rrf", "minmax", "zscore", "rank"):
        only_vec = fuse(vector, lexical, FusionConfig(method, 1.0))
        assert [d for d, _ in only_vec][:3] == ["a", "b", "c"], method
        only_lex = fuse(vector, lexical, FusionConfig(method, 0.0))
        assert [d for d, _ in only_lex][:2] == ["c", "b"], method


def test_legacy_max_fusion_matches_the_old_formula() -> None:
    fused = dict(fuse({"a": 0.8, "b": 0.6}, {"b": 4.0, "c": 2.0}, FusionConfig("max", 0.5)))
    assert fused == pytest.approx({"a": 0.4, "b": 0.3 + 0.5, "c": 0.25})


def test_zscore_missing_side_gets_the_pool_floor() -> None:
    normed, floor = normalize_pool({"a": 1.0, "b": 2.0, "c": 3.0}, "zscore")
    assert floor == pytest.approx(min(normed.values()))
    assert normed["b"] == pytest.approx(0.0)
    assert normalize_pool({"a": 2.0, "b": 2.0}, "zscore") == ({"a": 0.0, "b": 0.0}, 0.0)


def test_minmax_and_rank_normalisation() -> None:
    assert normalize_pool({"a": 3.0, "b": 1.0}, "minmax") == ({"a": 1.0, "b": 0.0}, 0.0)
    assert normalize_pool({"a": 5.0, "b": 5.0}, "minmax") == ({"a": 1.0, "b": 1.0}, 0.0)
    assert normalize_pool({"a": 3.0, "b": 1.0}, "rank") == ({"a": 1.0, "b": 0.5}, 0.0)
    assert normalize_pool({}, "rrf") == ({}, 0.0)


def test_non_finite_scores_do_not_poison_the_pool() -> None:
    fused = fuse({"a": math.inf, "b": 0.5}, {"a": math.nan, "c": 1.0}, FusionConfig("zscore", 0.5))
    assert all(math.isfinite(s) for _, s in fused)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "nope"}, "method"), ({"weight": 1.5}, "weight"), ({"rrf_k": -1}, "rrf_k"),
])
def test_config_validation(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FusionConfig(**kwargs)


@given(pools, pools, st.sampled_from(sorted(FUSION_METHODS)), st.floats(0, 1))
def test_fuse_ranks_every_candidate_once_and_is_sorted(vector: dict, lexical: dict, method: str, w: float) -> None:
    fused = fuse(vector, lexical, FusionConfig(method, w))
    ids = [d for d, _ in fused]
    assert sorted(ids) == sorted(set(vector) | set(lexical))
    assert all((-a[1], a[0]) <= (-b[1], b[0]) for a, b in zip(fused, fused[1:]))


def test_minmax_is_the_shipped_fusion() -> None:
    vector, lexical = {"a": 0.9, "b": 0.7, "c": -0.2}, {"b": 2.0, "d": 1.0}
    assert fuse(vector, lexical, FusionConfig("minmax", 0.3)) == shipped.fuse(vector, lexical, 0.3)
    assert fused(vector, lexical, FusionConfig("minmax", 0.3)) == shipped.fuse(vector, lexical, 0.3)


@given(pools, pools, st.sampled_from(sorted(FUSION_METHODS)), st.floats(0, 1))
def test_fused_keeps_the_fusion_order_in_unit_range(vector: dict, lexical: dict, method: str, w: float) -> None:
    fusion = FusionConfig(method, w)
    got = fused(vector, lexical, fusion)
    assert [d for d, _ in got] == [d for d, _ in fuse(vector, lexical, fusion)]
    assert all(0.0 <= s <= 1.0 for _, s in got)
