"""Lite chat stores signal: duplicate turns are skipped, trivial and question-only turns are carried, not stored."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hy_memory_langgraph.messages.signal import is_question_only, is_trivial
from hy_memory_langgraph.messages.types import Msg
from hy_memory_langgraph.services.turns import plan_turns
from hy_memory_langgraph.testing import HashingEmbeddings

CONVERSATION = [
    {"role": "user", "content": "I adopted a grey cat called Miso."},
    {"role": "assistant", "content": "Miso is a lovely name! How old is she?"},
    {"role": "user", "content": "ok"},
    {"role": "user", "content": "She is two years old and loves tuna."},
    {"role": "assistant", "content": "👍"},
]


class CountingEmbeddings(HashingEmbeddings):
    """Hashing embeddings that count document and query calls."""

    def __init__(self, dims: int = 64) -> None:
        super().__init__(dims=dims)
        self.document_calls: list[int] = []
        self.query_calls = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.document_calls.append(len(texts))
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.query_calls += 1
        return super().embed_query(text)


def _ops(result: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(op["op"], op.get("reason")) for op in result["ops"]]


def test_trivial_turns_are_skipped_and_carried_into_the_next_turn(make_client) -> None:
    client = make_client()
    result = client.add(CONVERSATION, user_id="u1", session_id="s1")
    assert _ops(result) == [("ADD", None), ("ADD", None), ("SKIP", "trivial"), ("ADD", None),
                            ("SKIP", "trivial")]
    assert result["ops_summary"] == {"ADD": 3, "UPDATE": 0, "SUPERSEDE": 0, "SKIP": 2}
    assert [op["memory_id"] for op in result["ops"] if op["op"] == "SKIP"] == [None, None]
    tuna = client.get(result["memory_ids"][2])
    assert tuna["content"] == "She is two years old and loves tuna."
    assert tuna["carried"] == "ok"
    assert tuna["context"] == "Miso is a lovely name! How old is she?"
    assert "turn_hash" not in tuna and "turn_index" not in tuna
    contents = [m["content"] for m in client.search("ok tuna", user_ids=["u1"], limit=10)["memories"]]
    assert "ok" not in contents and "👍" not in contents


def test_a_trivial_turn_at_the_end_of_a_write_is_carried_into_the_next_write(make_client) -> None:
    client = make_client()
    client.add(CONVERSATION, user_id="u1", session_id="s1")  # ends with "👍"
    later = client.add([{"role": "assistant", "content": "好的，谢谢！"},
                        {"role": "user", "content": "Next week I fly to Lisbon."}],
                       user_id="u1", session_id="s1")
    assert _ops(later) == [("SKIP", "trivial"), ("ADD", None)]
    lisbon = client.get(later["memory_ids"][0])
    assert lisbon["carried"] == "👍\n好的，谢谢！"
    assert lisbon["context"] == "She is two years old and loves tuna."
    other = client.add("Tomorrow is my birthday.", user_id="u1", session_id="s2")
    assert client.get(other["memory_ids"][0])["carried"] == ""  # carried only within its session


def test_carried_text_is_matched_by_lexical_search(make_client) -> None:
    client = make_client()
    client.add([{"role": "user", "content": "Did you like the concert yesterday?"},
                {"role": "assistant", "content": "Absolutely, wonderful!"},
                {"role": "assistant", "content": "The violinist was from Riga."}],
               user_id="u1", session_id="s1")
    client.add("Unrelated: the boiler needs a new valve.", user_id="u1", session_id="s2")
    found = client.search("wonderful violinist", user_ids=["u1"], limit=1)["memories"]
    assert found[0]["content"] == "The violinist was from Riga."
    assert found[0]["carried"] == "Did you like the concert yesterday?\nAbsolutely, wonderful!"  # neither stored


def test_chinese_and_emoji_only_turns(make_client) -> None:
    client = make_client()
    result = client.add([{"role": "user", "content": "嗯嗯"}, {"role": "user", "content": "😂😂"},
                         {"role": "user", "content": "我下个月去成都出差。"},
                         {"role": "assistant", "content": "收到"}],
                        user_id="u1", session_id="zh")
    assert _ops(result) == [("SKIP", "trivial"), ("SKIP", "trivial"), ("ADD", None),
                            ("SKIP", "trivial")]
    assert client.get(result["memory_ids"][0])["carried"] == "嗯嗯\n😂😂"


def test_a_write_of_trivial_turns_only_stores_nothing_but_the_trace(make_client) -> None:
    client = make_client()
    result = client.add(["ok", "thanks!"], user_id="u1", session_id="s1")
    assert result["memory_ids"] == [] and result["ops_summary"]["SKIP"] == 2
    assert client.search("ok thanks", user_ids=["u1"])["memories"] == []
    nxt = client.add("The plumber comes on Friday.", user_id="u1", session_id="s1")
    assert client.get(nxt["memory_ids"][0])["carried"] == "ok\nthanks!"


def test_an_identical_turn_is_skipped_naming_the_memory_it_repeats(make_client) -> None:
    client = make_client()
    first = client.add("I am allergic to peanuts.", user_id="u1", session_id="s1")
    again = client.add("  i am ALLERGIC to peanuts ", user_id="u1", session_id="s1")
    assert _ops(again) == [("SKIP", "duplicate")]
    assert again["ops"][0]["memory_id"] == first["memory_ids"][0]
    assert again["memory_ids"] == []
    assert len(client.search("peanuts", user_ids=["u1"])["memories"]) == 1


def test_what_makes_a_turn_the_same(make_client) -> None:
    client = make_client()
    client.add("I am allergic to peanuts.", user_id="u1", session_id="s1")
    other_owner = client.add([{"role": "assistant", "content": "I am allergic to peanuts."}],
                             user_id="u1", session_id="s1")
    other_user = client.add("I am allergic to peanuts.", user_id="u2", session_id="s1")
    other_session = client.add("I am allergic to peanuts.", user_id="u1", session_id="s2")
    no_session = client.add("I am allergic to peanuts.", user_id="u1")
    no_session_again = client.add("I am allergic to peanuts.", user_id="u1")
    for result in (other_owner, other_user, other_session, no_session):
        assert _ops(result) == [("ADD", None)]
    assert _ops(no_session_again) == [("SKIP", "duplicate")]
    assert no_session_again["ops"][0]["memory_id"] == no_session["memory_ids"][0]


def test_a_repeat_within_one_write_is_skipped_too(make_client) -> None:
    client = make_client()
    result = client.add(["Call me Sam.", "Call me Sam."], user_id="u1", session_id="s1")
    assert _ops(result) == [("ADD", None), ("SKIP", "duplicate")]
    assert result["ops"][1]["memory_id"] == result["memory_ids"][0]


def test_running_a_conversation_twice_stores_it_once(make_client) -> None:
    client = make_client()
    first = client.add(CONVERSATION, user_id="u1", session_id="s1")
    second = client.add(CONVERSATION, user_id="u1", session_id="s1")
    assert second["memory_ids"] == []
    assert _ops(second) == [("SKIP", "duplicate"), ("SKIP", "duplicate"), ("SKIP", "trivial"),
                            ("SKIP", "duplicate"), ("SKIP", "trivial")]
    assert [op["memory_id"] for op in second["ops"] if op["reason"] == "duplicate"] == first["memory_ids"]
    turn_by_turn = [client.add([m], user_id="u1", session_id="s1") for m in CONVERSATION]
    assert all(r["memory_ids"] == [] for r in turn_by_turn)
    assert len(client.search("Miso tuna", user_ids=["u1"], limit=20)["memories"]) == 3


def test_a_deleted_or_edited_memory_no_longer_blocks_its_text(make_client) -> None:
    client = make_client()
    edited = client.add("I live in Porto.", user_id="u1", session_id="s1")["memory_ids"][0]
    client.update(edited, "I live in Braga.")
    porto = client.add("I live in Porto.", user_id="u1", session_id="s1")
    assert _ops(porto) == [("ADD", None)]  # the edited memory no longer says it
    again = client.add("I live in Porto.", user_id="u1", session_id="s1")
    assert again["ops"][0]["memory_id"] == porto["memory_ids"][0]
    assert client.delete(porto["memory_ids"][0])
    assert _ops(client.add("I live in Porto.", user_id="u1", session_id="s1")) == [("ADD", None)]


def test_delete_all_erases_the_turn_index(make_client) -> None:
    client = make_client()
    client.add("I am allergic to peanuts.", user_id="u1", session_id="s1")
    client.delete_all("u1")
    repo = client.context.chat_repo
    assert list(repo.store.search(repo.turn_namespace("u1"))) == []
    assert _ops(client.add("I am allergic to peanuts.", user_id="u1", session_id="s1")) == [("ADD", None)]


def test_one_embedding_call_for_all_turns_of_a_write(make_client) -> None:
    embeddings = CountingEmbeddings()
    client = make_client(embeddings=embeddings)
    client.add("warm up the stores", user_id="u1", session_id="s0")
    embeddings.document_calls.clear()
    client.add(["First note about the garden.", "Second note about the roof.", "ok",
                "Third note about the car."], user_id="u1", session_id="s1")
    assert embeddings.document_calls == [3]
    client.add(CONVERSATION, user_id="u1", session_id="s1")
    client.add(CONVERSATION, user_id="u1", session_id="s1")  # all skipped: nothing to embed
    assert embeddings.document_calls == [3, 3]


def test_turns_of_one_write_keep_their_order_as_neighbours(make_client) -> None:
    client = make_client()
    turns = [f"Step {word} of the recipe: {what}." for word, what in
             (("one", "soak the beans"), ("two", "boil the beans"), ("three", "add the garlic"),
              ("four", "blend everything"), ("five", "serve warm"))]
    client.add(turns, user_id="u1", session_id="s1")
    memories = client.context.chat_repo.active("u1")
    by_index = sorted(memories, key=lambda m: m.turn_index)
    assert [m.content for m in by_index] == turns


_TEXTS = ["ok", "👍", "好的", "thanks!", "I moved to Oslo in May.", "My sister plays the cello.",
          "Which train goes to Bergen?", "", "  "]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "tool", "system"]), st.sampled_from(_TEXTS)),
                max_size=12))
def test_a_first_turn_takes_its_context_from_the_end_of_the_history(history: list[tuple[str, str]]) -> None:
    """The context of a write's first turn is the history's last non-trivial user or
    assistant text, and what it carries is every trivial one after it, in order (the same
    as reading the whole history forward)."""
    msgs = [Msg(role=role, content=text) for role, text in history]  # type: ignore[arg-type]
    context, carried = "", []
    for m in msgs:  # the reference: forward, as a reader of the session would
        if m.role not in ("user", "assistant") or not m.content.strip():
            continue
        if is_trivial(m.content.strip()) or is_question_only(m.content.strip()):
            carried.append(m.content.strip())
        else:
            context, carried = m.content.strip(), []
    plan = plan_turns([Msg(role="user", content="We adopted a puppy named Rolo.")], history=msgs,
                      session_id="s1", stored={})
    assert (plan[0].context, plan[0].carried) == (context, "\n".join(carried))
