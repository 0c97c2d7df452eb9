"""Dates named in queries and the time boost."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from hy_memory_langgraph.retrieval.query import TimeSpan, boost_by_time, time_mentions


@pytest.mark.parametrize(("query", "labels"), [
    ("What did Maria donate on 7 July, 2023?", ["2023-07-07"]),
    ("What book did Tim finish on 8th December, 2023?", ["2023-12-08"]),
    ("Which team did John sign with on May 21, 2023?", ["2023-05-21"]),
    ("Where was the picture shared on December 1,2023 taken?", ["2023-12-01"]),
    ("deploy log of 2023-05-08", ["2023-05-08"]),
    ("Where did Joanna travel to in July 2022?", ["2022-07"]),
    ("When did John get an ankle injury in 2023?", ["2023"]),
    ("When did Melanie go camping in June?", ["*-06"]),
    ("on Sept. 3rd, 2021 and in May", ["2021-09-03", "*-05"]),
])  # fmt: skip
def test_time_mentions(query: str, labels: list[str]) -> None:
    assert [s.label for s in time_mentions(query)] == labels


@pytest.mark.parametrize("query", [
    "What may happen next?", "I may be late", "2023 people came", "the 1990s", "2023-13-08",
    "Where does Caroline live?",
])  # fmt: skip
def test_no_false_dates(query: str) -> None:
    assert time_mentions(query) == []


def test_span_contains_a_day_and_a_month_of_any_year() -> None:
    day = TimeSpan(date(2023, 7, 7), date(2023, 7, 7))
    assert day.contains(date(2023, 7, 7)) and not day.contains(date(2023, 7, 8))
    june = time_mentions("in June")[0]
    assert june.contains(date(2019, 6, 1)) and june.contains(date(2031, 6, 30))
    assert not june.contains(date(2019, 5, 31)) and not june.contains(date(2019, 7, 1))


def test_boost_moves_dated_candidates_up_on_any_scale() -> None:
    spans = time_mentions("on 7 July, 2023")
    dates = {"b": datetime(2023, 7, 7, 13, 0), "c": date(2023, 7, 7), "d": None}
    ranked = [("a", -0.5), ("b", -1.0), ("c", -3.0), ("d", -4.0)]  # z-scores can be negative
    boosted = boost_by_time(ranked, dates, spans, boost=1.0)
    assert [d for d, _ in boosted] == ["b", "c", "a", "d"]
    small = boost_by_time(ranked, dates, spans, boost=0.1)
    assert [d for d, _ in small] == ["a", "b", "c", "d"]  # gain 0.35: b reaches -0.65 < -0.5


def test_boost_is_a_no_op_without_dates_or_boost() -> None:
    ranked = [("a", 1.0), ("b", 0.5)]
    assert boost_by_time(ranked, {"b": date(2023, 7, 7)}, [], boost=1.0) == ranked
    assert boost_by_time(ranked, {"b": date(2023, 7, 7)}, time_mentions("in 2023"), boost=0.0) == ranked
    with pytest.raises(ValueError):
        boost_by_time(ranked, {}, time_mentions("in 2023"), boost=-1.0)
