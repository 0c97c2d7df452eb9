"""Chat search through the store's persistent lexical index (SQLite and PostgreSQL).

The indexed path answers like the in-process path (every memory loaded, BM25 in
Python) on the same data: English and Chinese turns in sessions, facts, dates, time
ranges, and after updates, supersedes, deletes and restores. The neighbour context
follows the conversation; deleted text leaves the index; a warm search reads a fixed
number of rows whatever the user's memory count.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.repos.chat import ChatRepository
from hy_memory_langgraph.repos.records import ChatMemory
from hy_memory_langgraph.retrieval.ranking import DEFAULT_CHAT_RANKING
from hy_memory_langgraph.services.hybrid_search import (
    _lexical_texts,
    hybrid_search,
    search_in_process,
)
from hy_memory_langgraph.store.schema.tables import lexical_docs, lexical_postings, lexical_spaces
from hy_memory_langgraph.store.sql import statements as store_sql
from hy_memory_langgraph.testing import HashingEmbeddings
from tests.chat.support import counting_statements, write_random_turns

DIMS = 64
EN = [("Caroline", "I went to the LGBTQ support group yesterday, it was so powerful."),
      ("Melanie", "That sounds amazing! What happened there?"),
      ("Caroline", "People shared their transgender stories and I felt accepted."),
      ("Melanie", "I painted a sunrise over the lake last week."),
      ("Caroline", "Lovely! Are you still running marathons?"),
      ("Melanie", "Yes, Berlin in September, training every morning.")]
ZH = [("小明", "我上周末去爬山了，山顶的风景特别美。"), ("小红", "真好！你和谁一起去的？"),
      ("小明", "和我妹妹一起，她最近在学吉他。"), ("小红", "我更喜欢在海边喝龙井茶。")]
QUERIES = ["What did Caroline feel at the support group?", "When is the Berlin marathon?",
           "Melanie painted a sunrise in May 2023", "谁在学吉他？", "周末爬山", "龙井茶 海边",
           "what happened on 8 May, 2023?", "support"]


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """This module tests stores with a lexical index (InMemoryStore has none)."""
    return str(request.param)


def _chat(client: HyMemoryClient, user: str, lines: list[tuple[str, str]], session: str, day: int) -> list[str]:
    ids = []
    for i, (speaker, text) in enumerate(lines):
        result = client.add([{"role": "user" if i % 2 == 0 else "assistant", "content": f"{speaker}: {text}"}],
                            user_id=user, session_id=session, memory_at=f"2023-05-{day:02d}T10:{i:02d}:00Z")
        ids += result["memory_ids"]
    return ids


def _fill(client: HyMemoryClient, user: str = "u1") -> dict[str, list[str]]:
    return {"en1": _chat(client, user, EN, "s-en-1", 7), "zh": _chat(client, user, ZH, "s-zh", 8),
            "en2": _chat(client, user, EN[::-1], "s-en-2", 20),
            "loose": [client.add("Melanie's favourite tea is oolong.", user_id=user,
                                 memory_at="2023-06-01T00:00:00Z")["memory_ids"][0]]}


def _assert_paths_agree(client: HyMemoryClient, user: str = "u1", **kwargs: Any) -> None:
    ctx = client.context
    assert ctx.chat_repo.lexical_ready(user)
    for query in QUERIES:
        indexed = hybrid_search(ctx, user, query, 10, **kwargs)
        loaded = search_in_process(ctx, user, query, 10, after=kwargs.get("after"), before=kwargs.get("before"),
                                    ranking=DEFAULT_CHAT_RANKING)
        assert [m.memory_id for m in indexed] == [m.memory_id for m in loaded], query
        assert [m.score for m in indexed] == pytest.approx([m.score for m in loaded], abs=1e-6)
        assert [m.content for m in indexed] == [m.content for m in loaded]


def _lexical_terms(client: HyMemoryClient) -> set[str]:
    store = client.context.stores.chat()
    with store._engine.connect() as conn:  # type: ignore[attr-defined]
        terms = set(conn.execute(sa.select(lexical_postings.c.term)).scalars())
        for own, tail in conn.execute(sa.select(lexical_docs.c.terms, lexical_docs.c.tail)):
            terms |= set(json.loads(own)) | set(json.loads(tail or "{}"))
    return terms


def test_indexed_search_answers_like_the_in_process_search(make_client: Callable[..., HyMemoryClient]) -> None:
    client = make_client()
    _fill(client)
    _assert_paths_agree(client)
    _assert_paths_agree(client, after=datetime(2023, 5, 8, tzinfo=timezone.utc),
                        before=datetime(2023, 5, 8, 23, 59, tzinfo=timezone.utc))
    found = client.search("谁在学吉他？", user_ids=["u1"], limit=3)["memories"]
    assert "吉他" in found[0]["content"]
    ranged = client.search("marathon", user_ids=["u1"], created_after="2023-05-20T00:00:00Z")["memories"]
    assert ranged and all(m["memory_at"] >= "2023-05-20" for m in ranged)


def _keyword_hits(client: HyMemoryClient, query: str) -> set[str]:
    """Memories BM25 finds for ``query`` (vector weight 0: vector-only candidates score 0)."""
    bm25_only = replace(DEFAULT_CHAT_RANKING, vector_weight=0.0)
    return {m.memory_id for m in hybrid_search(client.context, "u1", query, 5, ranking=bm25_only) if m.score}


def test_the_next_turn_becomes_the_previous_turns_context(make_client: Callable[..., HyMemoryClient]) -> None:
    client = make_client()
    first = client.add("We go camping.", user_id="u1", session_id="s1")["memory_ids"][0]
    assert _keyword_hits(client, "weekend") == set()
    second = client.add([{"role": "assistant", "content": "Yes, last weekend!"}], user_id="u1",
                        session_id="s1")["memory_ids"][0]
    assert _keyword_hits(client, "weekend") == {first, second}  # the first turn now carries the next
    assert _keyword_hits(client, "camping") == {first, second}
    other = client.add("Unrelated weekend plans", user_id="u1", session_id="s2")["memory_ids"][0]
    assert _keyword_hits(client, "camping") == {first, second}
    assert _keyword_hits(client, "weekend") == {first, second, other}


def test_updates_supersedes_deletes_and_restores_keep_the_index_right(
        make_client: Callable[..., HyMemoryClient]) -> None:
    client = make_client()
    ids = _fill(client)
    repo = client.context.chat_repo
    client.update(ids["en1"][3], "Melanie: I painted a harbour at dusk with watercolours.")
    _assert_paths_agree(client)
    assert "harbour" in _lexical_terms(client)
    old = repo.get(ids["loose"][0])
    assert isinstance(old, ChatMemory)
    newer = repo.create("u1", "Melanie's favourite tea is now pu-erh.", request_id="r", supersedes=[old.memory_id])
    _assert_paths_agree(client)
    assert "oolong" not in _lexical_terms(client)  # superseded: out of the index
    assert client.delete(newer.memory_id)  # the superseded memory comes back
    assert "oolong" in _lexical_terms(client) and "pu-erh" not in _lexical_terms(client)
    _assert_paths_agree(client)
    for memory_id in ids["zh"][1:3]:  # a middle turn and its neighbour go
        assert client.delete(memory_id)
    _assert_paths_agree(client)
    terms = _lexical_terms(client)
    assert not {"妹妹", "吉他"} & terms and "爬山" in terms
    assert client.delete_all("u1") > 0
    assert _lexical_terms(client) == set()
    store = client.context.stores.chat()
    with store._engine.connect() as conn:  # type: ignore[attr-defined]
        assert conn.execute(sa.select(lexical_spaces.c.namespace)).all() == []


def test_erased_text_is_nowhere_in_the_sqlite_files(tmp_path: Path) -> None:
    client = HyMemoryClient(mode="lite", data_dir=tmp_path / "d", embeddings=HashingEmbeddings(dims=DIMS))
    gone = client.add("my locker number is zq-locker-7731", user_id="alice", session_id="s1")["memory_ids"][0]
    client.add("ok, noted", user_id="alice", session_id="s1")
    client.add("what about the gym?", user_id="alice", session_id="s1")
    assert "zq-locker-7731" in _lexical_terms(client)
    client.delete(gone)
    assert not {"zq-locker-7731", "7731", "locker"} & _lexical_terms(client)
    client.close()
    for path in (tmp_path / "d").rglob("*"):
        if path.is_file():
            assert b"zq-locker-7731" not in path.read_bytes(), path


def _statements_and_values(client: HyMemoryClient, query: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """SQL statements run and stored values parsed by one search."""
    values = [0]
    loads = json.loads

    def counting_loads(text: str | bytes, *args: Any, **kwargs: Any) -> Any:
        values[0] += 1
        return loads(text, *args, **kwargs)

    monkeypatch.setattr(store_sql.json, "loads", counting_loads)
    try:
        with counting_statements(client) as statements:
            client.search(query, user_ids=["u1"], limit=5)
    finally:
        monkeypatch.setattr(store_sql.json, "loads", loads)
    return statements(), values[0]


def test_a_warm_search_reads_the_same_rows_at_any_memory_count(
        make_client: Callable[..., HyMemoryClient], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ChatRepository, "active", lambda *a: pytest.fail("search loaded every memory"))
    costs = []
    for size in (30, 600):
        client = make_client()
        write_random_turns(client, size, ["tea", "cat", "walk", "park", "book"])
        client.search("warm up", user_ids=["u1"])
        costs.append(_statements_and_values(client, "tea in the park", monkeypatch))
    (small_sql, small_values), (big_sql, big_values) = costs
    assert big_sql == small_sql  # a fixed number of statements
    assert big_values == small_values <= 5  # only the returned memories are parsed


def test_turns_written_by_one_add_are_neighbours_in_the_order_given(
        make_client: Callable[..., HyMemoryClient]) -> None:
    """One add stores its turns with one write time and one ``memory_at``: their order in
    the session is the order of the messages, on the indexed path as in process."""
    client = make_client()
    words = ["alpaca", "bison", "cheetah", "dingo", "emu", "ferret"]
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"We talked about the {w} today."}
                for i, w in enumerate(words)]
    ids = client.add(messages, user_id="u1", session_id="s1", memory_at="2023-05-07T10:00:00Z")["memory_ids"]
    assert len(ids) == len(words)
    ctx = client.context
    texts = _lexical_texts(ctx.chat_repo.active("u1"))
    # a turn's lexical text: itself, the two turns before it and the one after it
    expected = {"alpaca": {0, 1, 2}, "dingo": {2, 3, 4, 5}, "ferret": {4, 5}}
    for word, positions in expected.items():
        found = ctx.chat_repo.candidates("u1", word, pool=10, k1=0.6, b=0.6).lexical
        assert set(found) == {ids[p] for p in positions}, word
        assert {mid for mid, text in texts.items() if word in text} == set(found), word
