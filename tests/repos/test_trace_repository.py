"""Conversation traces: the log of every write and the window of recent turns."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from langgraph.store.base import BaseStore

from hy_memory_langgraph.messages.types import Msg
from hy_memory_langgraph.repos.trace import MAX_HISTORY_TURNS, MIN_SCRUB_CHARS, TraceRepository


@pytest.fixture
def traces(open_store: Callable[..., BaseStore]) -> TraceRepository:
    return TraceRepository(open_store(index=None))


def _turn(i: int) -> list[Msg]:
    return [Msg(role="user", content=f"question number {i}"), Msg(role="assistant", content=f"answer {i}")]


def _contents(msgs: list[Msg]) -> list[str]:
    return [m.content for m in msgs]


def test_the_window_keeps_the_last_five_user_turns(traces: TraceRepository) -> None:
    for i in range(MAX_HISTORY_TURNS + 2):
        traces.append("u1", "s1", _turn(i), scene="chat")
    recent = traces.recent_messages("u1", "s1", turns=99)
    assert _contents(recent)[0] == "question number 2" and _contents(recent)[-1] == "answer 6"
    assert sum(m.role == "user" for m in recent) == MAX_HISTORY_TURNS
    assert _contents(traces.recent_messages("u1", "s1", turns=1)) == ["question number 6", "answer 6"]
    assert traces.recent_messages("u1", "s1", turns=0) == []


def test_sessions_and_users_do_not_see_each_other(traces: TraceRepository) -> None:
    traces.append("u1", "s1", _turn(1), scene="chat")
    traces.append("u1", None, _turn(2), scene="working")
    assert _contents(traces.recent_messages("u1", "s2", turns=5)) == []
    assert _contents(traces.recent_messages("u2", "s1", turns=5)) == []
    assert _contents(traces.recent_messages("u1", None, turns=5)) == ["question number 2", "answer 2"]


def test_the_log_keeps_every_write_and_round_trips(traces: TraceRepository,
                                                   open_store: Callable[..., BaseStore]) -> None:
    for i in range(7):
        traces.append("u1", "s1", _turn(i), scene="chat")
    rows = list(traces.dump())
    assert sum(ns[0] == "trace" for ns, _, _ in rows) == 7
    copy = TraceRepository(open_store("copy.db", index=None))
    assert copy.restore(rows) == len(rows)
    assert _contents(copy.recent_messages("u1", "s1", turns=5)) == \
        _contents(traces.recent_messages("u1", "s1", turns=5))
    with pytest.raises(ValueError, match="not a trace namespace"):
        copy.restore([(("chat_memories", "u1"), "k", {"messages": []})])


def test_scrub_drops_the_messages_a_memory_quotes_everywhere(traces: TraceRepository) -> None:
    traces.append("u1", "s1", [Msg(role="user", content="my door code is 7788"),
                               Msg(role="assistant", content="ok")], scene="chat")
    traces.append("u1", "s1", [Msg(role="user", content="thanks")], scene="chat")
    dropped = traces.scrub("u1", ["User said: my door code is 7788", "ok"])
    assert dropped == 2  # the quote, in the log entry and in the window
    # the messages' texts (keys and times are digits too: "7788" may well occur in them)
    everything = [m["content"] for _, _, value in traces.dump() for m in value["messages"]]
    assert not any("7788" in text for text in everything) and "thanks" in everything
    assert len("ok") < MIN_SCRUB_CHARS and "ok" in everything  # too short to be scrubbed


def test_delete_user_removes_only_that_user(traces: TraceRepository) -> None:
    traces.append("u1", "s1", _turn(1), scene="chat")
    traces.append("u2", "s1", _turn(2), scene="chat")
    traces.delete_user("u1")
    assert traces.recent_messages("u1", "s1", turns=5) == []
    assert {ns[1] for ns, _, _ in traces.dump()} == {"u2"}
