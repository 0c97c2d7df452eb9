"""Helpers shared by the chat tests."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import sqlalchemy as sa

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.ids import random_id
from hy_memory_langgraph.messages.signal import is_question_only
from hy_memory_langgraph.repos.records import ChatMemory
from hy_memory_langgraph.timeutil import iso, utcnow


def write_random_turns(client: HyMemoryClient, size: int, vocabulary: Sequence[str]) -> None:
    """``size`` lite turns of user ``u1`` (6 random words each, sessions of 10), one batch."""
    repo = client.context.chat_repo
    change = repo.begin("bulk")
    rng = random.Random(size)
    for i in range(size):
        words = " ".join(rng.choice(vocabulary) for _ in range(6))
        change.add(ChatMemory(memory_id=f"m{i:04d}", user_id="u1", source="turn", session_id=f"s{i // 10}",
                              content=words, memory_at="2024-01-01T00:00:00+00:00", memory_ts=1.7e9 + i), "ADD")
    repo.commit(change)


def store_asked_turns(client: HyMemoryClient, texts: Sequence[str], *, user_id: str = "u1",
                      role: str = "assistant") -> list[str]:
    """Question-only lite turns as a version that stored them left them (with their
    ``question`` flag), one per session ``q{i}``: lite writes no longer store such turns
    (``SKIP``, reason ``"question"``), but data written before, imported or edited into a
    question holds them, and search ranks them with ``ChatRanking.question_weight``."""
    repo, ids = client.context.chat_repo, []
    for i, text in enumerate(texts):
        at = utcnow()
        change = repo.begin(f"earlier-{i}")
        memory = ChatMemory(memory_id=random_id(), user_id=user_id, content=text, memory_at=iso(at),
                            memory_ts=at.timestamp(), owner=role, role=role, source="turn", session_id=f"q{i}",
                            question=is_question_only(text))
        repo.stage_turn(change, memory)
        repo.commit(change)
        ids.append(memory.memory_id)
    return ids


@contextmanager
def counting_statements(client: HyMemoryClient) -> Iterator[Callable[[], int]]:
    """Counts the SQL statements this thread runs on the chat store inside the block
    (the store's background threads, such as its WAL checkpoints, are not the search's)."""
    engine = client.context.stores.chat()._engine  # type: ignore[attr-defined]
    count = [0]
    caller = threading.get_ident()

    def listener(*_args: object) -> None:
        if threading.get_ident() == caller:
            count[0] += 1

    sa.event.listen(engine, "before_cursor_execute", listener)
    try:
        yield lambda: count[0]
    finally:
        sa.event.remove(engine, "before_cursor_execute", listener)
