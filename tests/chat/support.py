"""Helpers shared by the chat-search cost tests."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import sqlalchemy as sa

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.repos.records import ChatMemory


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
