"""ranking.weigh_questions and ChatRanking.question_weight: question-only memories rank lower."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hy_memory_langgraph.retrieval.ranking import (
    ChatRanking,
    echoing_questions,
    fuse,
    rank_candidates,
    weigh_questions,
)

SCORES = st.dictionaries(st.text("abcdef", min_size=1, max_size=3),
                         st.floats(0.0, 1.0, allow_nan=False), max_size=20)


def _ranked(scores: dict[str, float]) -> list[tuple[str, float]]:
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))


def test_weight_one_changes_nothing() -> None:
    ranked = [("q", 0.9), ("fact", 0.8)]
    assert weigh_questions(ranked, {"q"}, 1.0) == ranked
    assert weigh_questions(ranked, set(), 0.5) == ranked


def test_questions_drop_below_statements() -> None:
    ranked = [("q1", 1.0), ("q2", 0.9), ("fact", 0.6), ("other", 0.2)]
    assert weigh_questions(ranked, {"q1", "q2"}, 0.5) == [
        ("fact", 0.6), ("q1", 0.5), ("q2", 0.45), ("other", 0.2)]


@given(SCORES, st.sets(st.text("abcdef", min_size=1, max_size=3)), st.floats(0.01, 1.0))
def test_only_question_scores_change_and_order_holds(scores: dict[str, float], questions: set[str],
                                                     weight: float) -> None:
    out = weigh_questions(_ranked(scores), questions, weight)
    assert sorted(d for d, _ in out) == sorted(scores)
    assert out == sorted(out, key=lambda pair: (-pair[1], pair[0]))
    for doc, score in out:
        assert score == (scores[doc] * weight if doc in questions and weight < 1.0 else scores[doc])


@given(SCORES, st.sets(st.text("abcdef", min_size=1, max_size=3)), st.floats(0.01, 1.0),
       st.integers(1, 5))
def test_a_prefix_that_beats_the_rest_holds_the_top(scores: dict[str, float], questions: set[str],
                                                    weight: float, limit: int) -> None:
    """The stopping rule of a path that reads flags lazily: once the ``limit``-th weighted
    score of a prefix beats the next unweighted score, the top ``limit`` is final."""
    ranked = _ranked(scores)
    full = weigh_questions(ranked, questions, weight)[:limit]
    for n in range(len(ranked)):
        head = weigh_questions(ranked[:n], questions, weight)
        if len(head) >= limit and head[limit - 1][1] > ranked[n][1]:
            assert head[:limit] == full
            break


def test_rank_candidates_applies_the_weight_last() -> None:
    vector = {"q": 0.9, "fact": 0.8, "other": 0.1}
    lexical = {"q": 5.0, "fact": 2.0}
    plain = rank_candidates(fuse(vector, lexical, 0.4), query="cat name", dates={})
    assert [d for d, _ in plain][:2] == ["q", "fact"]
    ranking = ChatRanking(question_weight=0.3)
    weighed = rank_candidates(fuse(vector, lexical, 0.4), query="cat name", dates={}, ranking=ranking,
                              questions={"q"})
    assert dict(weighed) == {d: s * 0.3 if d == "q" else s for d, s in plain}
    assert [d for d, _ in weighed][0] == "fact"


def test_echo_zero_selects_every_question_without_calibrating() -> None:
    def never(cosine: float) -> float:
        raise AssertionError("no similarity is needed with echo 0")

    assert echoing_questions({"q1", "q2"}, {}, never, 0.0) == {"q1", "q2"}


def test_only_questions_in_the_pool_at_or_above_the_echo_are_selected() -> None:
    cosines = {"near": 0.95, "edge": 0.90, "far": 0.80, "fact": 0.99}
    calibrated = {0.95: 0.9, 0.90: 0.75, 0.80: 0.25}
    selected = echoing_questions({"near", "edge", "far", "outside"}, cosines, calibrated.__getitem__, 0.75)
    assert selected == {"near", "edge"}  # "outside" has no cosine: no echo; "fact" is no question
