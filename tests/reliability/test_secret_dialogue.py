"""Secrets given across two messages: a label ending one message, the value the next."""

from __future__ import annotations

from pathlib import Path

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.messages.normalize import normalize_messages
from hy_memory_langgraph.messages.redaction import redact_messages
from hy_memory_langgraph.redact import carried_spans, replace_spans
from hy_memory_langgraph.testing import HashingEmbeddings


@pytest.mark.parametrize(("previous", "current", "needle"), [
    ("my new PIN is", "4821", "4821"),
    ("Please send me the password:", "Xk9!mm2q", "Xk9!mm2q"),
    ("我的支付密码是", "abc123!", "abc123!"),
    ("What's the wifi password?", "it's GreenTea#42", "GreenTea#42"),
    ("Sure, I can log in for you. What is your PIN?", "4821", "4821"),
    ("What's the door code?", "4711#", "4711"),
    ("What is the verification code we sent?", "552019.", "552019"),
    ("Can you give me the API token?", "sure: gX7kP2mQ9rT4vW8z", "gX7kP2mQ9rT4vW8z"),
    ("Mot de passe ?", "Soleil2024!", "Soleil2024!"),
], ids=["label-ends", "colon-ends", "zh-label-ends", "question-its", "question-pin", "question-door-code",
        "question-otp", "question-token", "question-fr"])
def test_a_value_whose_label_ends_the_message_before_goes(previous: str, current: str, needle: str) -> None:
    out = replace_spans(current, carried_spans(previous, current))
    assert needle not in out and "[REDACTED:" in out


@pytest.mark.parametrize(("previous", "current"), [
    ("What's the PIN length?", "6 digits"), ("What time is it?", "10:30pm"),
    ("Do you want to reset your password?", "yes please"), ("Can you provide the reservation code?", "ABC123"),
    ("What is your zip code?", "94110"), ("What's your favourite number?", "42"),
    ("Can you give me the API token?", "tomorrow"), ("the password is", "on the sticky note"),
    ("What's the wifi password?", "I'll check with Tom and get back to you later."),
    ("What is your PIN?", "[REDACTED:password]"), ("Thanks! My password manager is great.", "v2.0!"),
    ("What's your Wi-Fi password?", "Why?"), ("What is your PIN?", "Hmm..."),
], ids=["qualifier", "no-secret-asked", "a-word", "booking-code", "zip-code", "number", "a-word-for-a-token",
        "prose-after-is", "a-sentence", "already-redacted", "not-a-question", "a-question-back", "hesitation"])
def test_answers_that_are_no_secret_stay(previous: str, current: str) -> None:
    assert carried_spans(previous, current) == []


def test_the_write_path_redacts_the_answer_and_nothing_keeps_it(tmp_path: Path) -> None:
    secret = "Tr0ub4dor&3x"
    conversation = [{"role": "user", "content": "Can you remember my router login for me?"},
                    {"role": "assistant", "content": "Of course. What's the router password?"},
                    {"role": "user", "content": secret},
                    {"role": "assistant", "content": "Saved."}]
    once = redact_messages(normalize_messages(conversation))
    assert [m.content for m in once] == [conversation[0]["content"], conversation[1]["content"],
                                         "[REDACTED:password]", "Saved."]
    assert redact_messages(once) == once  # the graph's second pass changes nothing
    with HyMemoryClient(mode="lite", data_dir=tmp_path / "d", embeddings=HashingEmbeddings(dims=32)) as client:
        client.add(conversation, user_id="alice")
        client.add(conversation, scene="working", user_id="alice")
    held = [p.name for p in (tmp_path / "d").rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    assert held == []


@pytest.mark.parametrize("session_id", ["s1", None])
def test_a_conversation_written_one_message_per_add_is_read_across_the_adds(tmp_path: Path,
                                                                            session_id: str | None) -> None:
    secret = "Tr0ub4dor&3x"
    with HyMemoryClient(mode="lite", data_dir=tmp_path / "d", embeddings=HashingEmbeddings(dims=32)) as client:
        client.add([{"role": "user", "content": "Please remember my router login."},
                    {"role": "assistant", "content": "Sure. What's the router password?"}],
                   user_id="alice", session_id=session_id)
        result = client.add(secret, user_id="alice", session_id=session_id)
        assert [op["content"] for op in result["ops"]] == ["[REDACTED:password]"]
        client.add("my new PIN is", user_id="alice", session_id=session_id)
        client.add("73916428", user_id="alice", session_id=session_id)
        client.add("I moved to Lyon in 2019", user_id="alice", session_id=session_id)  # kept as written
        contents = [m["content"] for m in client.list_memories("alice", limit=50)["memories"]]
    assert "I moved to Lyon in 2019" in contents and "73916428" not in contents
    held = [p.name for p in (tmp_path / "d").rglob("*") if p.is_file()
            for needle in (secret, "73916428") if needle.encode() in p.read_bytes()]
    assert held == []
