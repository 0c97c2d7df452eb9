"""Relative time phrases in chat search, end to end.

The query side: ``client.search("what did I do last weekend")`` boosts a memory dated last
weekend (resolved against the current UTC time). The memory side (``ChatRanking.event_spans``):
a memory saying "two weeks ago" is found for the date it speaks of, by the indexed and the
in-process search alike.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from hy_memory_langgraph.retrieval.ranking import DEFAULT_CHAT_RANKING
from hy_memory_langgraph.services.hybrid_search import (
    event_spans_of,
    hybrid_search,
    search_in_process,
)


def _iso(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


def test_last_weekend_in_the_query_boosts_a_memory_dated_last_weekend(make_client) -> None:
    client = make_client(mode="lite")
    now = datetime.now(timezone.utc)
    monday = (now - timedelta(days=now.weekday())).replace(hour=12, minute=0, second=0, microsecond=0)
    last_saturday = monday - timedelta(days=2)
    older = monday - timedelta(days=23)
    kept = client.add("I did some hiking in the hills, with my sister.", user_id="u1",
                      memory_at=_iso(older))["memory_ids"][0]
    hike = client.add("Went hiking in the hills with my sister.", user_id="u1",
                      memory_at=_iso(last_saturday))["memory_ids"][0]
    for text in ("I repotted the basil on the balcony.", "Our printer ran out of cyan ink.",
                 "The bakery on Rua Augusta sells good bread.", "Tax forms are due in April."):
        client.add(text, user_id="u1", memory_at=_iso(older))
    query = "what did I do last weekend"
    without = hybrid_search(client.context, "u1", query, 3,
                            ranking=replace(DEFAULT_CHAT_RANKING, relative_query=False))
    assert without[0].memory_id == kept  # without the date, the older memory comes first
    found = client.search(query, user_ids=["u1"], limit=3)["memories"]
    assert found[0]["memory_id"] == hike
    assert [m["memory_id"] for m in found[:2]] == [hike, kept]


def test_event_spans_date_a_memory_by_what_its_text_says(make_client) -> None:
    client = make_client(mode="lite")
    camping = client.add("I went camping by the lake two weeks ago.", user_id="u1",
                         memory_at="2023-05-20T10:00:00Z")["memory_ids"][0]
    other = client.add("I went camping by the lake, lovely trip.", user_id="u1",
                       memory_at="2023-05-20T11:00:00Z")["memory_ids"][0]
    client.add("My sister started guitar lessons.", user_id="u1", memory_at="2023-05-20T12:00:00Z")
    stored = client.context.chat_repo.get(camping)
    assert [s.label for s in event_spans_of(stored)] == ["2023-05-03..2023-05-09"]

    query = "Where did I go camping on 6 May 2023?"
    ctx, off = client.context, replace(DEFAULT_CHAT_RANKING, event_spans=False)
    on = replace(DEFAULT_CHAT_RANKING, event_spans=True)
    assert DEFAULT_CHAT_RANKING.event_spans
    off_ids = [m.memory_id for m in hybrid_search(ctx, "u1", query, 3, ranking=off)]
    on_hits = hybrid_search(ctx, "u1", query, 3, ranking=on)
    loaded = search_in_process(ctx, "u1", query, 3, after=None, before=None, ranking=on)
    assert on_hits[0].memory_id == camping
    assert [m.memory_id for m in loaded] == [m.memory_id for m in on_hits]
    assert [m.score for m in loaded] == pytest.approx([m.score for m in on_hits], abs=1e-6)
    assert on_hits[0].score == 1.0 and all(0.0 <= (m.score or 0.0) <= 1.0 for m in on_hits)
    assert set(off_ids[:2]) == {camping, other}
    # a query naming no date reads no event spans and ranks as before
    plain = "Where did I go camping?"
    assert [m.memory_id for m in hybrid_search(ctx, "u1", plain, 3, ranking=on)] == \
        [m.memory_id for m in hybrid_search(ctx, "u1", plain, 3, ranking=off)]
    assert client.search(query, user_ids=["u1"], limit=1)["memories"][0]["memory_id"] == camping
