"""Chat memories over a LangGraph ``BaseStore``.

Layout (see :mod:`.base`): ``("chat", user)`` / ``memory_id`` → a :class:`ChatMemory`
(only ``content`` is embedded, and only while active); ``("chat_history", user)`` holds
its events.

Example:
    >>> from langgraph.store.memory import InMemoryStore
    >>> repo = ChatRepository(InMemoryStore())
    >>> m = repo.create("u1", "Alice likes tea", request_id="r1")
    >>> repo.get(m.memory_id).content
    'Alice likes tea'
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, cast

from langgraph.store.base import BaseStore

from hy_memory_langgraph.errors import ConflictError
from hy_memory_langgraph.repos.base import RETRIES, Change, RecordRepository
from hy_memory_langgraph.repos.records import ACTIVE, SUPERSEDED, ChatMemory, Record
from hy_memory_langgraph.timeutil import iso, utcnow

__all__ = ["ChatRepository"]


class ChatRepository(RecordRepository):
    """Create, change and look up chat memories.

    Args:
        store: Any LangGraph store with an index on ``content`` (for vector search).

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> ChatRepository(InMemoryStore()).active("nobody")
        []
    """

    def __init__(self, store: BaseStore) -> None:
        super().__init__(store, {"chat": "chat"}, "chat_history")

    # -- writes -----------------------------------------------------------------------
    def create(self, user_id: str, content: str, *, request_id: str,
               memory_at: datetime | None = None, supersedes: list[str] | None = None,
               **fields: Any) -> ChatMemory:
        """Store a new active memory (``ADD``); with ``supersedes``, retire those in the
        same change (``SUPERSEDE`` on the new one, ``SUPERSEDED`` on each old one)."""
        at = memory_at or utcnow()
        memory = ChatMemory(memory_id=uuid.uuid4().hex, user_id=user_id, content=content,
                            memory_at=iso(at), memory_ts=at.timestamp(),
                            supersedes=list(supersedes or []), **fields)
        change = self.begin(request_id)
        change.add(memory, "SUPERSEDE" if memory.supersedes else "ADD")
        for old in self._chat_many(memory.supersedes):
            old.status, old.superseded_by = SUPERSEDED, memory.memory_id
            change.save(old, "SUPERSEDED", related=memory.memory_id)
        self.commit(change)
        return memory

    def update(self, memory_id: str, content: str, *, request_id: str,
               memory_at: datetime | None = None, op: str = "UPDATE",
               metadata: dict[str, Any] | None = None) -> ChatMemory | None:
        """Replace the content of a memory (a new version); ``None`` when it is gone.

        ``memory_at`` moves only forward; ``metadata`` replaces the old one when given.
        The change is guarded: a concurrent update makes it read again and apply on top
        (no update is lost); a concurrent delete makes it return ``None`` with nothing
        written.
        """
        for _ in range(RETRIES):
            memory = self._chat(memory_id)
            if memory is None:
                return None
            previous = memory.content
            memory.content = content
            memory.version += 1
            if memory_at is not None and memory_at.timestamp() >= memory.memory_ts:
                memory.memory_at, memory.memory_ts = iso(memory_at), memory_at.timestamp()
            if metadata is not None:
                memory.metadata = metadata
            change = self.begin(request_id)
            change.save(memory, op, previous=previous)
            try:
                self.commit(change)
            except ConflictError:
                continue
            return memory
        raise ConflictError(f"memory_id={memory_id!r} kept changing while being updated; retry")

    # -- reads ------------------------------------------------------------------------
    def active(self, user_id: str) -> list[ChatMemory]:
        """Every active memory of ``user_id``."""
        return [cast(ChatMemory, r) for r in self.scan("chat", user_id, {"status": ACTIVE})]

    def vector_search(self, user_id: str, query: str, *, limit: int,
                      filter: dict[str, Any] | None = None) -> list[ChatMemory]:
        """Top-``limit`` active memories by vector similarity, filter applied first."""
        where = {"status": ACTIVE, **(filter or {})}
        hits = self.store.search(self.namespace("chat", user_id), query=query, filter=where,
                                 limit=limit)
        return [cast(ChatMemory, ChatMemory.from_value(h.value, h.score))
                for h in hits if h.score is not None]

    def _forget_quotes(self, change: Change, deleted: Record) -> None:
        """Lite turns keep the message before them as retrieval context: when that message
        is the deleted memory, the context goes with it."""
        if not isinstance(deleted, ChatMemory) or not deleted.content.strip():
            return
        text = deleted.content.strip()
        for memory in self.active(deleted.user_id):
            if memory.memory_id != deleted.memory_id and memory.context and text in memory.context:
                memory.context = ""
                change.relink(memory)

    def _chat(self, memory_id: str) -> ChatMemory | None:
        record = self.get(memory_id)
        return record if isinstance(record, ChatMemory) else None

    def _chat_many(self, ids: list[str]) -> list[ChatMemory]:
        return [r for r in self.get_many(ids) if isinstance(r, ChatMemory)]
