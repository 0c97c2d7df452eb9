"""Conversation traces: the messages of earlier writes, read back as history.

Layout:

* ``("trace", user, session)`` / ``<ts>-<id>`` → ``{"messages": [...], "scene", "ts"}``: the
  append-only log of every write.
* ``("trace_window", user, session)`` / ``"recent"`` → the last 5 user-turns, kept up to
  date on each append so reading history costs one ``get`` on any store backend.

Only used as context for extraction (coreference), never re-extracted.

Example:
    >>> from langgraph.store.memory import InMemoryStore
    >>> traces = TraceRepository(InMemoryStore())
    >>> traces.recent_messages("u1", None, turns=5)
    []
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from langgraph.store.base import BaseStore, PutOp

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
_WINDOW_KEY = "recent"
_WINDOW_LOCK = threading.Lock()


def _ns(user_id: str, session_id: str | None, root: str = "trace") -> tuple[str, ...]:
    return (root, encode_label(user_id), encode_label(session_id or _NO_SESSION))


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
        with _WINDOW_LOCK:  # read-modify-write of the window: serialised within the process
            window = self._window(user_id, session_id) + list(msgs)
            recent = last_user_turns(window, MAX_HISTORY_TURNS)
            self.store.put(_ns(user_id, session_id, "trace_window"), _WINDOW_KEY,
                           {"messages": messages_to_dicts(recent)}, index=False)

    def _window(self, user_id: str, session_id: str | None) -> list[Msg]:
        item = self.store.get(_ns(user_id, session_id, "trace_window"), _WINDOW_KEY)
        return messages_from_dicts(item.value["messages"]) if item else []

    def recent_messages(self, user_id: str, session_id: str | None, *, turns: int) -> list[Msg]:
        """The last ``turns`` user-turns written before (capped at 5)."""
        turns = max(0, min(turns, MAX_HISTORY_TURNS))
        if turns == 0:
            return []
        return last_user_turns(self._window(user_id, session_id), turns)

    def dump(self) -> Iterator[tuple[tuple[str, ...], str, dict[str, Any]]]:
        """Every trace entry and window of every user: ``(namespace, key, value)``."""
        for root in ("trace", "trace_window"):
            for item in self.store.search((root,), limit=1_000_000):
                yield tuple(item.namespace), item.key, item.value

    def restore(self, rows: Iterable[tuple[Sequence[str], str, dict[str, Any]]]) -> int:
        """Write entries exactly as :meth:`dump` gave them (one batch); the count."""
        ops = []
        for namespace, key, value in rows:
            if not namespace or namespace[0] not in ("trace", "trace_window"):
                raise ValueError(f"namespace {tuple(namespace)!r} is not a trace namespace")
            ops.append(PutOp(tuple(namespace), key, dict(value), index=False))
        if ops:
            self.store.batch(ops)
        return len(ops)

    def delete_user(self, user_id: str) -> None:
        """Remove every trace and window of ``user_id``."""
        for root in ("trace", "trace_window"):
            for ns in self.store.list_namespaces(prefix=(root, encode_label(user_id)), limit=100_000):
                for item in self.store.search(ns, limit=1_000_000):
                    self.store.delete(ns, item.key)
