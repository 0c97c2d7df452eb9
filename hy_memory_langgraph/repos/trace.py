"""Conversation traces: the messages of earlier writes, read back as history.

Layout: ``("trace", user, session)`` / ``<ts>-<id>`` → ``{"messages": [...], "scene", "at"}``.
Only used as context for extraction (coreference), never re-extracted.

Example:
    >>> from langgraph.store.memory import InMemoryStore
    >>> traces = TraceRepository(InMemoryStore())
    >>> traces.recent_messages("u1", None, turns=5)
    []
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence

from langgraph.store.base import BaseStore

from hy_memory_langgraph.messages import (
    Msg,
    last_user_turns,
    messages_from_dicts,
    messages_to_dicts,
)
from hy_memory_langgraph.repos.namespaces import encode_label

__all__ = ["TraceRepository", "MAX_HISTORY_TURNS"]

MAX_HISTORY_TURNS = 5
_NO_SESSION = "_"
_RECENT_WRITES = 20


def _ns(user_id: str, session_id: str | None) -> tuple[str, ...]:
    return ("trace", encode_label(user_id), encode_label(session_id or _NO_SESSION))


class TraceRepository:
    """Append-only message history per user and session.

    Args:
        store: The store holding the traces (never indexed for vectors).
    """

    def __init__(self, store: BaseStore) -> None:
        self.store = store

    def append(self, user_id: str, session_id: str | None, msgs: Sequence[Msg], *, scene: str) -> None:
        """Record the messages of one write."""
        if not msgs:
            return
        key = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"
        value = {"messages": messages_to_dicts(list(msgs)), "scene": scene, "ts": time.time()}
        self.store.put(_ns(user_id, session_id), key, value, index=False)

    def recent_messages(self, user_id: str, session_id: str | None, *, turns: int) -> list[Msg]:
        """The last ``turns`` user-turns written before (capped at 5)."""
        turns = max(0, min(turns, MAX_HISTORY_TURNS))
        if turns == 0:
            return []
        items = self.store.search(_ns(user_id, session_id), limit=_RECENT_WRITES)
        ordered = sorted(items, key=lambda item: item.key)
        msgs: list[Msg] = []
        for item in ordered:
            msgs.extend(messages_from_dicts(item.value["messages"]))
        return last_user_turns(msgs, turns)

    def delete_user(self, user_id: str) -> None:
        for ns in self.store.list_namespaces(prefix=("trace", encode_label(user_id)), limit=100_000):
            for item in self.store.search(ns, limit=1_000_000):
                self.store.delete(ns, item.key)
