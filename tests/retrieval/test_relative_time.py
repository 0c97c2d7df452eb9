"""Relative time phrases: parsing against a reference date, span overlap, the time boost
with memories' event spans, and the query side of the chat ranking."""

from __future__ import annotations

import random
from datetime import date, datetime, timezone

import pytest

from hy_memory_langgraph.retrieval.query import TimeSpan, boost_by_time, time_mentions
from hy_memory_langgraph.retrieval.ranking import (
    ChatRanking,
    event_candidates,
    fuse,
    query_time_spans,
    rank_candidates,
)
from hy_memory_langgraph.retrieval.relative_time import relative_spans

WED = date(2023, 5, 17)  # a Wednesday


def _labels(text: str, reference: date = WED) -> list[str]:
    return [s.label for s in relative_spans(text, reference)]


@pytest.mark.parametrize(("text", "labels"), [
    ("What did I do yesterday?", ["2023-05-16"]),
    ("we talked last night", ["2023-05-16"]),
    ("the day before yesterday", ["2023-05-15"]),
    ("this morning I ran", ["2023-05-17"]),
    ("tonight we eat out", ["2023-05-17"]),
    ("see you tomorrow", ["2023-05-18"]),
    ("3 days ago", ["2023-05-14"]),
    ("a few days ago", ["2023-05-11..2023-05-15"]),
    ("I went camping two weeks ago", ["2023-04-30..2023-05-06"]),
    ("a week ago", ["2023-05-07..2023-05-13"]),
    ("a couple of months ago", ["2023-03"]),
    ("ten years ago", ["2013"]),
    ("last week", ["2023-05-08..2023-05-14"]),
    ("the week before last", ["2023-05-01..2023-05-07"]),
    ("this week", ["2023-05-15..2023-05-21"]),
    ("next week", ["2023-05-22..2023-05-28"]),
    ("What did I do last weekend?", ["2023-05-13..2023-05-14"]),
    ("over the weekend", ["2023-05-13..2023-05-14"]),
    ("this weekend", ["2023-05-20..2023-05-21"]),
    ("next weekend", ["2023-05-27..2023-05-28"]),
    ("last Friday", ["2023-05-12"]),
    ("this Friday", ["2023-05-19"]),
    ("next Friday", ["2023-05-19..2023-05-26"]),
    ("last month", ["2023-04"]),
    ("next month", ["2023-06"]),
    ("last year", ["2022"]),
    ("this year", ["2023"]),
    ("last May", ["2022-05"]),
    ("last March", ["2023-03"]),
    ("昨天", ["2023-05-16"]),
    ("前天", ["2023-05-15"]),
    ("大前天", ["2023-05-14"]),
    ("明天", ["2023-05-18"]),
    ("上周", ["2023-05-08..2023-05-14"]),
    ("上个星期", ["2023-05-08..2023-05-14"]),
    ("上上周", ["2023-05-01..2023-05-07"]),
    ("这周", ["2023-05-15..2023-05-21"]),
    ("下周", ["2023-05-22..2023-05-28"]),
    ("我上周末去爬山了", ["2023-05-13..2023-05-14"]),
    ("下周末", ["2023-05-27..2023-05-28"]),
    ("上周五", ["2023-05-12"]),
    ("下星期天", ["2023-05-28"]),
    ("上个月", ["2023-04"]),
    ("下个月", ["2023-06"]),
    ("去年", ["2022"]),
    ("前年", ["2021"]),
    ("去年五月", ["2022-05"]),
    ("两周前", ["2023-04-30..2023-05-06"]),
    ("三天前", ["2023-05-14"]),
    ("两个星期以前", ["2023-04-30..2023-05-06"]),
    ("三个月前", ["2023-02"]),
    ("十二个月前", ["2022-05"]),
    ("半年前", ["2022-11"]),
    ("两年前", ["2021"]),
])
def test_relative_spans(text: str, labels: list[str]) -> None:
    assert _labels(text) == labels


@pytest.mark.parametrize("text", [
    "I like weekends", "the last may be the best", "we met on Friday", "周末愉快", "我们上周一起去的",
    "recently", "the other day", "three days", "一天", "", "上周天气不错",
])
def test_no_span_or_only_the_week(text: str) -> None:
    """Vague or absent phrases give nothing; "上周一起" is last week, not last Monday."""
    labels = _labels(text)
    assert labels in ([], ["2023-05-08..2023-05-14"])
    if "上周" not in text:
        assert labels == []


def test_longer_phrase_wins_and_order_follows_the_text() -> None:
    assert _labels("the day before yesterday and last week") == ["2023-05-15", "2023-05-08..2023-05-14"]
    assert _labels("yesterday, and yesterday again") == ["2023-05-16"]


def test_last_weekend_said_on_a_weekend_is_the_one_before() -> None:
    saturday = date(2023, 5, 20)
    assert _labels("last weekend", saturday) == ["2023-05-13..2023-05-14"]
    assert _labels("over the weekend", saturday) == ["2023-05-20..2023-05-21"]
    assert _labels("last Saturday", saturday) == ["2023-05-13"]


def test_month_and_year_edges() -> None:
    assert _labels("last month", date(2023, 1, 10)) == ["2022-12"]
    assert _labels("next month", date(2023, 12, 31)) == ["2024-01"]
    assert _labels("last January", date(2023, 1, 31)) == ["2022-01"]
    assert _labels("3 months ago", date(2023, 2, 28)) == ["2022-11"]


def test_spans_overlap_and_any_year() -> None:
    week = TimeSpan(date(2023, 5, 1), date(2023, 5, 7))
    assert TimeSpan(date(2023, 5, 6), date(2023, 5, 6)).overlaps(week)
    assert TimeSpan(date(2023, 5, 7), date(2023, 5, 9)).overlaps(week)
    assert not TimeSpan(date(2023, 5, 8), date(2023, 5, 9)).overlaps(week)
    june = time_mentions("in June")[0]
    assert june.overlaps(TimeSpan(date(2021, 6, 30), date(2021, 7, 2)))
    assert june.overlaps(TimeSpan(date(2020, 12, 20), date(2022, 1, 5)))  # across years
    assert not june.overlaps(TimeSpan(date(2021, 7, 2), date(2021, 7, 3)))
    assert not june.overlaps(TimeSpan(date(2021, 5, 25), date(2021, 5, 31)))


def test_boost_matches_event_spans_as_well_as_dates() -> None:
    ranked = [("a", 1.0), ("b", 0.5), ("c", 0.0)]
    spans = time_mentions("What did I do on 6 May 2023?")
    dates = {"a": date(2023, 5, 1), "b": date(2023, 5, 20), "c": date(2023, 5, 20)}
    events = {"b": relative_spans("I went camping two weeks ago", date(2023, 5, 20))}
    assert boost_by_time(ranked, dates, spans, boost=1.0) == ranked
    assert [d for d, _ in boost_by_time(ranked, dates, spans, boost=1.0, events=events)] == ["b", "a", "c"]


def test_query_time_spans_needs_a_reference_and_the_switch() -> None:
    query = "What did I do last weekend?"
    assert query_time_spans(query) == []
    assert [s.label for s in query_time_spans(query, now=datetime(2023, 5, 17, 23, 0, tzinfo=timezone.utc))] \
        == ["2023-05-13..2023-05-14"]
    assert query_time_spans(query, ChatRanking(relative_query=False), now=WED) == []
    both = query_time_spans("in May 2023, two weeks ago", now=WED)
    assert [s.label for s in both] == ["2023-05", "2023-04-30..2023-05-06"]


def test_rank_candidates_reads_events_only_when_switched_on() -> None:
    vector, lexical = {"a": 0.9, "b": 0.85, "c": 0.5}, {"a": 5.0, "b": 4.5, "c": 1.0}
    dates = {"a": date(2023, 5, 20), "b": date(2023, 5, 20)}
    events = {"b": relative_spans("我三天前去了杭州", date(2023, 5, 20))}
    query, fused = "What happened on 17 May 2023?", fuse(vector, lexical, 0.4)
    off = rank_candidates(fused, query=query, dates=dates, events=events, ranking=ChatRanking(event_spans=False))
    on = rank_candidates(fused, query=query, dates=dates, events=events, ranking=ChatRanking(event_spans=True))
    assert [d for d, _ in off] == ["a", "b", "c"]
    assert [d for d, _ in on] == ["b", "a", "c"]
    assert all(0.0 <= s <= 1.0 for _, s in on)


def test_rank_candidates_resolves_the_query_against_now() -> None:
    vector, lexical = {"a": 0.9, "b": 0.85, "c": 0.5}, {"a": 5.0, "b": 4.5, "c": 1.0}
    dates = {"a": date(2023, 4, 1), "b": date(2023, 5, 13)}
    query, fused = "what did I do last weekend", fuse(vector, lexical, 0.4)
    assert [d for d, _ in rank_candidates(fused, query=query, dates=dates)] == ["a", "b", "c"]
    assert [d for d, _ in rank_candidates(fused, query=query, dates=dates, now=WED)] == ["b", "a", "c"]


def test_event_candidates_are_enough_for_the_top() -> None:
    """Reading only :func:`event_candidates` gives the same top ``limit`` as reading every candidate."""
    rng = random.Random(7)
    on = ChatRanking(event_spans=True)
    query = "What happened on 6 May 2023?"
    for _ in range(50):
        ids = [f"m{i:02d}" for i in range(40)]
        vector = {i: rng.random() for i in ids if rng.random() < 0.8}
        lexical = {i: rng.random() * 8 for i in ids if rng.random() < 0.6}
        dates = {i: date(2023, 5, rng.choice((6, 20))) for i in ids}
        events = {i: [TimeSpan(date(2023, 5, 3), date(2023, 5, 9))] for i in ids if rng.random() < 0.2}
        limit, fused = rng.choice((1, 5, 10)), fuse(vector, lexical, 0.4)
        every = rank_candidates(fused, query=query, dates=dates, ranking=on, events=events)[:limit]
        read = event_candidates(fused, query=query, dates=dates, limit=limit, ranking=on)
        some = rank_candidates(fused, query=query, dates=dates, ranking=on,
                               events={i: events[i] for i in read if i in events})[:limit]
        assert some == every
        assert len(read) < len(set(vector) | set(lexical))
    assert event_candidates(fuse({"a": 1.0}, {}, 0.4), query="tea", dates={}, limit=1, ranking=on) == []
    fused = fuse({"a": 1.0, "b": 0.5, "c": 0.0}, {}, 0.4)
    assert event_candidates(fused, query="in May 2023", dates={}, limit=1, ranking=ChatRanking(event_spans=False)) == []
