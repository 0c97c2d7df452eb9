"""Lite chat: question-only turns are not stored (``SKIP``, reason ``"question"``, carried into
the next stored turn); those stored before (flagged) rank below the facts that answer them."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.chat.support import store_asked_turns

from hy_memory_langgraph.retrieval.ranking import DEFAULT_CHAT_RANKING, ChatRanking

FACT = "My cat is called Miso."
OTHERS = ["I work as a nurse in Porto.", "My sister Ana lives in Lisbon.",
          "We went hiking in the Alps last summer.", "I am learning to play the cello."]
QUESTIONS = ["What's the name of your cat?", "Do you remember the name of the cat?"]
QUERY = "what's the name of my cat"
#: Low enough for hashing embeddings (the near-copies of the query score ~6x the fact).
QUESTION_WEIGHT = 0.1


def _write(client) -> None:
    """One memory per write and session, as a long chat would leave them; the questions
    as stored before lite writes skipped them."""
    for i, text in enumerate([*OTHERS, FACT]):
        client.add([{"role": "user", "content": text}], user_id="u1", session_id=f"s{i}")
    store_asked_turns(client, QUESTIONS)


def test_question_turns_are_carried_not_stored(make_client) -> None:
    client = make_client()
    result = client.add([{"role": "user", "content": "What is my cat called?"},
                         {"role": "assistant", "content": "You told me: Miso, a grey cat."}], user_id="u1",
                        session_id="s1")
    assert [(op["op"], op.get("reason")) for op in result["ops"]] == [("SKIP", "question"), ("ADD", None)]
    assert result["ops"][0]["memory_id"] is None
    stored = client.get(result["memory_ids"][0])
    assert stored["carried"] == "What is my cat called?"
    assert [m.content for m in client.context.chat_repo.active("u1")] == ["You told me: Miso, a grey cat."]
    found = client.search("cat called", user_ids=["u1"])["memories"]
    assert [m["content"] for m in found] == ["You told me: Miso, a grey cat."]  # the question's words find it


def _ranks(client) -> dict[str, int]:
    found = [m["content"] for m in client.search(QUERY, user_ids=["u1"], limit=10)["memories"]]
    return {text: found.index(text) + 1 for text in [FACT, *QUESTIONS]}


def _fact_above_questions(client) -> bool:
    ranks = _ranks(client)
    return all(ranks[FACT] < ranks[q] for q in QUESTIONS)


def test_stored_question_turns_keep_their_flag(make_client) -> None:
    client = make_client()
    _write(client)
    store = client.context.chat_repo
    flags = {m.content: m.question for m in store.active("u1")}
    assert flags == {**dict.fromkeys([*OTHERS, FACT], False), **dict.fromkeys(QUESTIONS, True)}
    assert "question" not in client.search(QUERY, user_ids=["u1"])["memories"][0]


def test_the_fact_outranks_stored_questions_with_a_question_weight(make_client) -> None:
    client = make_client()
    _write(client)
    client.context.chat_ranking = replace(DEFAULT_CHAT_RANKING, question_weight=1.0)
    assert not _fact_above_questions(client)  # the repro: the questions share the query's words
    client.context.chat_ranking = replace(DEFAULT_CHAT_RANKING, question_weight=QUESTION_WEIGHT, question_echo=0.0)
    assert _fact_above_questions(client)


def test_a_small_limit_still_sees_the_fact_behind_the_questions(make_client) -> None:
    """The indexed path reads memories in rounds of ``limit``: with ``limit=1`` the fact is
    found only in the third round, after both questions were weighted down."""
    client = make_client()
    _write(client)
    backend_indexed = client.context.chat_repo.lexical_ready("u1")
    client.context.chat_ranking = replace(DEFAULT_CHAT_RANKING, question_weight=QUESTION_WEIGHT, question_echo=0.0)
    everything = [m["content"] for m in client.search(QUERY, user_ids=["u1"], limit=10)["memories"]]
    for limit in (1, 2, 3):
        found = [m["content"] for m in client.search(QUERY, user_ids=["u1"], limit=limit)["memories"]]
        assert found == everything[:limit], (limit, backend_indexed)
    assert everything.index(FACT) < min(everything.index(q) for q in QUESTIONS)


def test_memories_without_the_flag_are_classified_from_their_text(make_client) -> None:
    client = make_client()
    _write(client)
    repo = client.context.chat_repo
    for memory in repo.active("u1"):  # as written before the flag existed
        value = memory.stored_value()
        del value["question"]
        repo.store.put(repo.namespace("chat", "u1"), memory.memory_id, value, index=["content"])
    assert all(m.question is None for m in repo.active("u1"))
    client.context.chat_ranking = replace(DEFAULT_CHAT_RANKING, question_weight=QUESTION_WEIGHT, question_echo=0.0)
    assert _fact_above_questions(client)


def test_an_edited_turn_keeps_its_flag_true_to_its_text(make_client) -> None:
    client = make_client()
    ids = store_asked_turns(client, QUESTIONS[:1])
    repo = client.context.chat_repo
    assert repo.get(ids[0]).question is True
    client.update(ids[0], "My cat is called Miso, by the way.")
    assert repo.get(ids[0]).question is False
    client.update(ids[0], QUESTIONS[1])
    assert repo.get(ids[0]).question is True


def test_question_weight_is_bounded() -> None:
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="question_weight"):
            ChatRanking(question_weight=bad)
