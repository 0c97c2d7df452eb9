"""The second hop of chat search (``ChatRanking.hop_*``) on every backend.

Fact B is linked to the question only through an entity it shares with fact A (the
question names A's other words, never B's): one pass misses B, the hop (vector or
lexical, seeded by A) finds it. On HyMemoryStore the vector hop reads the seeds' stored
vectors (no embedding call).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.repos.chat import ChatRepository
from hy_memory_langgraph.retrieval.ranking import DEFAULT_CHAT_RANKING, ChatRanking
from hy_memory_langgraph.services.chat_search import hybrid_search, search_in_process
from hy_memory_langgraph.testing import HashingEmbeddings
from tests.chat.support import counting_statements, write_random_turns

QUESTION = "Which sport does the friend who moved to Porto last spring practise?"
LINK = "Zelda Moreau moved to Porto last spring."
TARGET = "Zelda Moreau goes bouldering every Saturday."
DISTRACTORS = [
    "My cousin practises the violin.",
    "Sport on television is boring.",
    "A friend from school called me.",
    "Tom moved his desk.",
    "Anna bought fresh bread at the market.",
    "The museum opened a new wing in March.",
]


def _fill(client: HyMemoryClient) -> dict[str, str]:
    ids = {}
    for i, text in enumerate([LINK, *DISTRACTORS, TARGET]):
        ids[text] = client.add(text, user_id="u1", session_id=f"s{i}",  # no session neighbours
                               memory_at=f"2024-03-{i + 1:02d}T10:00:00Z")["memory_ids"][0]
    return ids


def _found(client: HyMemoryClient, ranking: ChatRanking, limit: int = 3) -> list[str]:
    return [m.content for m in hybrid_search(client.context, "u1", QUESTION, limit, ranking=ranking)]


@pytest.mark.parametrize("hop", [
    {"hop_vector_weight": 0.5},
    {"hop_lexical_weight": 0.5},
    {"hop_vector_weight": 0.3, "hop_lexical_weight": 0.3},
], ids=["vector", "lexical", "both"])
def test_the_second_hop_finds_a_fact_linked_only_through_a_shared_entity(
        make_client: Callable[..., HyMemoryClient], hop: dict[str, float]) -> None:
    client = make_client(embeddings=HashingEmbeddings(dims=256))
    _fill(client)
    without = _found(client, DEFAULT_CHAT_RANKING)
    assert without[0] == LINK  # the first pass finds fact A ...
    assert TARGET not in without  # ... but not fact B
    with_hop = _found(client, ChatRanking(hop_seeds=1, **hop))  # type: ignore[arg-type]
    assert LINK in with_hop and TARGET in with_hop


def test_the_hop_respects_the_time_range(make_client: Callable[..., HyMemoryClient]) -> None:
    client = make_client(embeddings=HashingEmbeddings(dims=256))
    _fill(client)
    hits = hybrid_search(client.context, "u1", QUESTION, 5,
                         before=datetime(2024, 3, 5, tzinfo=timezone.utc),
                         ranking=ChatRanking(hop_seeds=1, hop_vector_weight=0.5, hop_lexical_weight=0.5))
    assert hits and all(m.memory_at < "2024-03-05" for m in hits)
    assert TARGET not in [m.content for m in hits]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_vector_hop_reads_stored_vectors_on_hymemorystore(
        make_client: Callable[..., HyMemoryClient]) -> None:
    """HyMemoryStore reads the seeds' stored vectors (InMemoryStore searches with their text)."""
    embeddings = HashingEmbeddings(dims=256)
    client = make_client(embeddings=embeddings)
    _fill(client)
    calls: list[str] = []
    original = embeddings.embed_query
    embeddings.embed_query = lambda text: (calls.append(text), original(text))[1]  # type: ignore[method-assign]
    found = _found(client, ChatRanking(hop_seeds=2, hop_vector_weight=0.5))
    assert TARGET in found
    assert calls == [QUESTION] or set(calls) == {QUESTION}  # the question only: seeds use stored vectors


HOP = ChatRanking(hop_seeds=2, hop_vector_weight=0.3, hop_lexical_weight=0.3, hop_terms=5, hop_neighbours=4)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_indexed_hop_answers_like_the_in_process_hop(make_client: Callable[..., HyMemoryClient]) -> None:
    client = make_client(embeddings=HashingEmbeddings(dims=256))
    _fill(client)
    for i, text in enumerate(["Zelda Moreau said the climbing gym is in Porto.", "Tom likes the violin too."]):
        client.add([{"role": "user", "content": text}], user_id="u1", session_id="shared",
                   memory_at=f"2024-04-{i + 1:02d}T10:00:00Z")
    ctx = client.context
    assert ctx.chat_repo.lexical_ready("u1")
    ranges = [(None, None), (datetime(2024, 3, 2, tzinfo=timezone.utc), datetime(2024, 4, 1, 12, tzinfo=timezone.utc))]
    for query in (QUESTION, "violin", "Porto climbing", "bread"):
        for after, before in ranges:
            indexed = hybrid_search(ctx, "u1", query, 6, after=after, before=before, ranking=HOP)
            loaded = search_in_process(ctx, "u1", query, 6, after=after, before=before, ranking=HOP)
            assert [m.memory_id for m in indexed] == [m.memory_id for m in loaded], (query, after)
            assert [m.score for m in indexed] == pytest.approx([m.score for m in loaded], abs=1e-5)


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_warm_search_with_the_hop_runs_the_same_statements_at_any_memory_count(
        make_client: Callable[..., HyMemoryClient], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ChatRepository, "active", lambda *a: pytest.fail("search loaded every memory"))
    costs = []
    for size in (30, 600):
        client = make_client()
        write_random_turns(client, size, ["tea", "cat", "walk", "park", "book", "zelda"])
        hybrid_search(client.context, "u1", "warm up", 5, ranking=HOP)
        with counting_statements(client) as statements:
            assert len(hybrid_search(client.context, "u1", "tea in the park", 5, ranking=HOP)) == 5
        costs.append(statements())
    assert costs[0] == costs[1]
