"""Conversation traces: the messages of earlier writes, read back as history.

Layout:

* ``("trace", user, session)`` / ``<ts>-<id>`` → ``{"messages": [...], "scene", "ts"}``: the
  append-only log of every write.
* ``("trace_window", user, session)`` / ``"recent"`` → the last 5 user-turns, kept up to
  date on each append so reading history costs one ``get`` on any store backend.

Only used as context for extraction (coreference) and for the retrieval context of lite
chat turns, never re-extracted. The read-modify-write of a window is serialised per
user and session within the process (:meth:`TraceRepository.session_lock`); a caller that
writes the trace together with other records (lite chat turns) holds that lock, reads
the window with :meth:`TraceRepository.window_op` and writes :meth:`TraceRepository.append_ops`
in its own batch.

Example:
    >>> from langgraph.store.memory import InMemoryStore
    >>> traces = TraceRepository(InMemoryStore())
    >>> traces.recent_messages("u1", None, turns=5)
    []
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from hy_memory_langgraph.ids import random_id
from hy_memory_langgraph.messages.codec import messages_from_dicts, messages_to_dicts
from hy_memory_langgraph.messages.signal import MIN_QUOTE_CHARS, quotes
from hy_memory_langgraph.messages.turns import last_user_turns
from hy_memory_langgraph.messages.types import Msg
from hy_memory_langgraph.repos.namespaces import encode_label

MAX_HISTORY_TURNS = 5
_NO_SESSION = "_"
_WINDOW_KEY = "recent"
#: Shorter messages ("ok", "thanks") are never scrubbed: too many memories quote them.
MIN_SCRUB_CHARS = MIN_QUOTE_CHARS


class _Held:
    """A lock that can be weakly referenced (so unused session locks go away)."""

    __slots__ = ("lock", "__weakref__")

    def __init__(self) -> None:
        self.lock = threading.Lock()


_LOCKS: weakref.WeakValueDictionary[tuple[object, ...], _Held] = weakref.WeakValueDictionary()
_LOCKS_GUARD = threading.Lock()


def _held(store: BaseStore, namespace: tuple[str, ...]) -> _Held:
    """The lock of one window: per store (its database when it has one) and namespace."""
    key = (getattr(store, "url", None) or id(store), *namespace)
    with _LOCKS_GUARD:
        held = _LOCKS.get(key)
        if held is None:
            held = _LOCKS[key] = _Held()
        return held


def _ns(user_id: str, session_id: str | None, root: str = "trace") -> tuple[str, ...]:
    return (root, encode_label(user_id), encode_label(session_id or _NO_SESSION))


class TraceRepository:
    """Append-only message history per user and session.

    Args:
        store: The store holding the traces (never indexed for vectors).
    """

    def __init__(self, store: BaseStore) -> None:
        self.store = store

    @contextmanager
    def session_lock(self, user_id: str, session_id: str | None) -> Iterator[None]:
        """Hold the window of ``user_id`` / ``session_id`` for a read-modify-write."""
        held = _held(self.store, _ns(user_id, session_id, "trace_window"))
        with held.lock:
            yield

    def append(self, user_id: str, session_id: str | None, msgs: Sequence[Msg], *, scene: str,
               extra: Sequence[PutOp] = ()) -> None:
        """Record the messages of one write (one read, one batch of two puts, and the
        ``extra`` puts given: a journal entry)."""
        if not msgs and not extra:
            return
        with self.session_lock(user_id, session_id):
            window = self._window(user_id, session_id) if msgs else []
            self.store.batch([*self.append_ops(user_id, session_id, msgs, scene=scene, window=window), *extra])

    def window_op(self, user_id: str, session_id: str | None) -> GetOp:
        """The read of the recent window (for a caller batching it with other reads)."""
        return GetOp(_ns(user_id, session_id, "trace_window"), _WINDOW_KEY)

    @staticmethod
    def window_messages(item: Item | None) -> list[Msg]:
        """The messages of a window read with :meth:`window_op` (``[]`` when absent)."""
        return messages_from_dicts(item.value["messages"]) if item is not None else []

    def append_ops(self, user_id: str, session_id: str | None, msgs: Sequence[Msg], *,
                   scene: str, window: Sequence[Msg]) -> list[PutOp]:
        """The puts recording ``msgs``: the log entry and the window updated from ``window``
        (the window as read under :meth:`session_lock`, held until the puts are written)."""
        if not msgs:
            return []
        key = f"{time.time_ns():020d}-{random_id()[:8]}"
        value = {"messages": messages_to_dicts(list(msgs)), "scene": scene, "ts": time.time()}
        recent = last_user_turns([*window, *msgs], MAX_HISTORY_TURNS)
        return [PutOp(_ns(user_id, session_id), key, value, index=False),
                PutOp(_ns(user_id, session_id, "trace_window"), _WINDOW_KEY,
                      {"messages": messages_to_dicts(recent)}, index=False)]

    def _window(self, user_id: str, session_id: str | None) -> list[Msg]:
        item = self.store.get(_ns(user_id, session_id, "trace_window"), _WINDOW_KEY)
        return self.window_messages(item)

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
        """Remove every trace and window of ``user_id`` (one batch)."""
        ops = [PutOp(item.namespace, item.key, None) for item in self._user_items(user_id)]
        if ops:
            self.store.batch(ops)

    def scrub(self, user_id: str, texts: Sequence[str]) -> int:
        """Drop every message of ``user_id``'s traces (and windows) that a deleted memory
        quotes or that quotes it, so its text is gone from the history too.

        A message matches when its content (at least :data:`MIN_SCRUB_CHARS` characters)
        occurs in one of ``texts``, or one of ``texts`` occurs in it. Returns the
        messages dropped.
        """
        needles = [t.strip() for t in texts if len(t.strip()) >= MIN_SCRUB_CHARS]
        if not needles:
            return 0
        ops: list[PutOp] = []
        dropped = 0
        for item in self._user_items(user_id):
            msgs = messages_from_dicts(item.value["messages"])
            kept = [m for m in msgs if not quotes(m.content, needles)]
            if len(kept) == len(msgs):
                continue
            dropped += len(msgs) - len(kept)
            value = {**item.value, "messages": messages_to_dicts(kept)}
            ops.append(PutOp(item.namespace, item.key, value if kept else None, index=False))
        if ops:
            windows = sorted({op.namespace for op in ops if op.namespace[0] == "trace_window"})
            self._batch_holding(windows, ops)
        return dropped

    def _batch_holding(self, windows: list[tuple[str, ...]], ops: list[PutOp]) -> None:
        """Write ``ops`` while holding the locks of ``windows`` (taken in sorted order)."""
        if not windows:
            self.store.batch(ops)
            return
        held = _held(self.store, windows[0])
        with held.lock:
            self._batch_holding(windows[1:], ops)

    def _user_items(self, user_id: str) -> list[Any]:
        items = []
        for root in ("trace", "trace_window"):
            for ns in self.store.list_namespaces(prefix=(root, encode_label(user_id)), limit=100_000):
                items += self.store.search(ns, limit=1_000_000)
        return items


