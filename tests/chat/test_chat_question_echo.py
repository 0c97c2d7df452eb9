"""ChatRanking.question_echo: only question-only memories that echo the query are weighted.

On every backend: the in-process path (``memory``) and the indexed path (``sqlite``,
``postgres``, reading memories in rounds). The echo threshold of the backend tests sits
just below the calibrated similarity of the echoing question (well above the other's),
measured the way search measures it (the vector pool's cosines, the embedding model's calibration).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.chat.support import store_asked_turns

from hy_memory_langgraph.retrieval.ranking import DEFAULT_CHAT_RANKING, ChatRanking

FACT = "My cat is called Miso."
OTHERS = ["I work as a nurse in Porto.", "My sister Ana lives in Lisbon.",
          "We went hiking in the Alps last summer.", "I am learning to play the cello."]
ECHO = "What's the name of your cat?"
#: Question-only, about something else: far from the query (no echo), yet with the
#: hashing test embeddings it ranks just above the fact.
STRAY = "Is the cello hard to learn?"
QUERY = "what's the name of my cat"
WEIGHT = 0.1


def _write(client, questions: list[str]) -> None:
    """One memory per write and session, as a long chat would leave them; the questions
    as stored before lite writes skipped them."""
    for i, text in enumerate([*OTHERS, FACT]):
        client.add([{"role": "user", "content": text}], user_id="u1", session_id=f"s{i}")
    store_asked_turns(client, questions)


def _search(client, ranking: ChatRanking, limit: int = 10, *,
            query: str = QUERY) -> list[tuple[str, float]]:
    client.context.chat_ranking = ranking
    return [(m["content"], m["score"]) for m in client.search(query, user_ids=["u1"], limit=limit)["memories"]]


def _calibrated(client) -> dict[str, float]:
    """Each memory's calibrated similarity to the query, as search computes it."""
    scale = client.context.stores.calibration().for_text(QUERY)
    hits = client.context.chat_repo.vector_search("u1", QUERY, limit=20)
    return {m.content: scale.similarity(float(m.score or 0.0)) for m in hits}


def _rank(found: list[tuple[str, float]], text: str) -> int:
    return [t for t, _ in found].index(text) + 1


def test_only_the_echoing_question_is_weighted(make_client) -> None:
    client = make_client()
    _write(client, [ECHO, STRAY])
    similar = _calibrated(client)
    assert similar[ECHO] - similar[STRAY] > 0.1 and 0.1 < similar[ECHO] < 0.95  # well apart
    echo = similar[ECHO] - 0.05  # the echo reaches it, the stray does not
    plain = _search(client, replace(DEFAULT_CHAT_RANKING, question_weight=1.0))
    off = dict(plain)
    assert _rank(plain, ECHO) == 1 and _rank(plain, STRAY) < _rank(plain, FACT)  # the setting
    assert off[STRAY] > 0.1
    echoing = _search(client, ChatRanking(question_weight=WEIGHT, question_echo=echo))
    scores = dict(echoing)
    assert scores[ECHO] == pytest.approx(off[ECHO] * WEIGHT, abs=1e-6)
    assert _rank(echoing, FACT) < _rank(echoing, ECHO)
    assert scores[STRAY] == off[STRAY]  # no echo: its score is kept, and its place among the rest
    assert [t for t, _ in echoing if t != ECHO] == [t for t, _ in plain if t != ECHO]
    everyone = _search(client, ChatRanking(question_weight=WEIGHT, question_echo=0.0))  # every question
    assert dict(everyone)[STRAY] == pytest.approx(off[STRAY] * WEIGHT, abs=1e-6)
    assert _rank(everyone, FACT) < _rank(everyone, STRAY)


def test_a_high_threshold_leaves_the_ranking_as_it_is(make_client) -> None:
    client = make_client()
    _write(client, [ECHO, STRAY])
    top = max(_calibrated(client).values())
    assert top < 0.99
    off = _search(client, replace(DEFAULT_CHAT_RANKING, question_weight=1.0))
    assert _search(client, ChatRanking(question_weight=WEIGHT, question_echo=0.99)) == off


def test_small_limits_read_in_rounds_agree_with_the_full_ranking(make_client) -> None:
    """The indexed path reads memories ``limit`` at a time: with only the echo weighted,
    every prefix still matches the full ranking."""
    client = make_client()
    _write(client, [ECHO, STRAY])
    similar = _calibrated(client)
    assert similar[ECHO] - similar[STRAY] > 0.1 and similar[ECHO] > 0.1
    ranking = ChatRanking(question_weight=WEIGHT, question_echo=similar[ECHO] - 0.05)
    everything = _search(client, ranking)
    for limit in (1, 2, 3):
        assert _search(client, ranking, limit=limit) == everything[:limit]


@pytest.mark.parametrize("bad", [-0.1, 1.0, 1.5])
def test_question_echo_is_bounded(bad: float) -> None:
    with pytest.raises(ValueError, match=r"question_echo=.*\[0, 1\)"):
        ChatRanking(question_echo=bad)


def test_question_echo_bounds_are_accepted() -> None:
    assert ChatRanking(question_echo=0.0).question_echo == 0.0
    assert ChatRanking(question_echo=0.99).question_echo == 0.99


@pytest.mark.real_model
def test_the_shipped_default_fixes_the_repro_with_e5(make_client) -> None:
    """``bench/question_turns.py`` with e5: the fact first, both questions below it."""
    from hy_memory_langgraph.models import E5Embeddings

    client = make_client(embeddings=E5Embeddings())
    questions = [ECHO, "Do you remember the name of the cat?"]
    _write(client, questions)
    off = _search(client, replace(DEFAULT_CHAT_RANKING, question_weight=1.0))
    assert _rank(off, FACT) == 3  # the repro
    found = _search(client, DEFAULT_CHAT_RANKING)
    assert _rank(found, FACT) == 1
    assert all(_rank(found, q) > 1 for q in questions)


@pytest.mark.real_model
def test_the_fact_outranks_the_same_question_asked_before_with_e5(make_client) -> None:
    """The issue's case: ``What is my cat called?`` stored, then searched word for word."""
    from hy_memory_langgraph.models import E5Embeddings

    client = make_client(embeddings=E5Embeddings())
    for i, text in enumerate(["My cat is called Miso.", "I work as a nurse in Porto.",
                              "We went hiking in the Alps last summer."]):
        client.add([{"role": "user", "content": text}], user_id="u1", session_id=f"s{i}")
    store_asked_turns(client, ["What is my cat called?"], role="user")  # stored before the skip rule
    off = _search(client, replace(DEFAULT_CHAT_RANKING, question_weight=1.0), query="What is my cat called?")
    assert _rank(off, "What is my cat called?") == 1  # the echo first without the weight
    found = _search(client, DEFAULT_CHAT_RANKING, query="What is my cat called?")
    assert _rank(found, "My cat is called Miso.") == 1
