"""Chat memories over a LangGraph ``BaseStore``.

Layout (labels are escaped with :func:`encode_label`):

* ``("chat", user)`` / ``memory_id`` → the memory; only ``content`` is embedded,
  and only while the memory is active (superseded memories leave the index).
* ``("chat_history", user)`` / ``memory_id:version`` → one event per change.
* ``("chat_ids",)`` / ``memory_id`` → ``{"user_id": ...}`` so a memory is found by id.
* ``("chat_rev",)`` / ``user`` → ``{"rev": ...}``, changed on every write of that user, so
  searches can reuse what they loaded while nothing changed.

Example:
    >>> from langgraph.store.memory import InMemoryStore
    >>> repo = ChatRepository(InMemoryStore())
    >>> m = repo.create("u1", "Alice likes tea", request_id="r1")
    >>> repo.get(m.memory_id).content
    'Alice likes tea'
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore, Item, PutOp

from hy_memory_langgraph.timeutil import iso, utcnow
from hy_memory_langgraph.repos.namespaces import encode_label

__all__ = ["ChatMemory", "ChatRepository", "ACTIVE", "SUPERSEDED"]

ACTIVE = "active"
SUPERSEDED = "superseded"
_MEMORY_NS = "chat"
_HISTORY_NS = "chat_history"
_ID_NS = ("chat_ids",)
_REV_NS = ("chat_rev",)
_SCAN_LIMIT = 1_000_000


@dataclass
class ChatMemory:
    """One chat memory as stored and returned to callers."""

    memory_id: str
    user_id: str
    content: str
    memory_at: str
    memory_ts: float
    subject: str = ""
    owner: str = "user"
    status: str = ACTIVE
    superseded_by: str | None = None
    supersedes: list[str] = field(default_factory=list)
    agent_id: str | None = None
    session_id: str | None = None
    role: str | None = None
    source: str = "extract"
    context: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    version: int = 1
    created_at: str = ""
    updated_at: str = ""
    score: float | None = None

    @classmethod
    def from_item(cls, item: Item, score: float | None = None) -> ChatMemory:
        known = {f for f in cls.__dataclass_fields__}
        data = {k: v for k, v in item.value.items() if k in known}
        data["created_at"] = iso(item.created_at)
        data["updated_at"] = iso(item.updated_at)
        data["score"] = score
        return cls(**data)

    def stored_value(self) -> dict[str, Any]:
        data = asdict(self)
        for transient in ("created_at", "updated_at", "score"):
            data.pop(transient)
        return data

    def to_dict(self) -> dict[str, Any]:
        """The public shape returned by the client."""
        return asdict(self)

    @property
    def retrieval_text(self) -> str:
        """What lexical search matches: the content plus its conversational context."""
        return f"{self.content}\n{self.context}" if self.context else self.content


def _memory_ns(user_id: str) -> tuple[str, ...]:
    return (_MEMORY_NS, encode_label(user_id))


def _history_ns(user_id: str) -> tuple[str, ...]:
    return (_HISTORY_NS, encode_label(user_id))


class ChatRepository:
    """Create, change and look up chat memories in a ``BaseStore``.

    Args:
        store: Any LangGraph store with an index on ``content`` (for vector search).

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> repo = ChatRepository(InMemoryStore())
        >>> repo.active("nobody")
        []
    """

    def __init__(self, store: BaseStore) -> None:
        self.store = store

    # -- writes -------------------------------------------------------------------
    def create(self, user_id: str, content: str, *, request_id: str,
               memory_at: datetime | None = None, supersedes: list[str] | None = None,
               **fields: Any) -> ChatMemory:
        """Store a new active memory and record its ``ADD`` event."""
        at = memory_at or utcnow()
        memory = ChatMemory(
            memory_id=uuid.uuid4().hex, user_id=user_id, content=content,
            memory_at=iso(at), memory_ts=at.timestamp(), supersedes=list(supersedes or []),
            **fields,
        )
        op, related = ("SUPERSEDE", ",".join(memory.supersedes)) if memory.supersedes else ("ADD", None)
        self._put(memory, PutOp(_ID_NS, memory.memory_id, {"user_id": user_id}, index=False),
                  self._event_op(memory, op, request_id=request_id, related=related))
        return self.get(memory.memory_id) or memory

    def update(self, memory_id: str, content: str, *, request_id: str,
               memory_at: datetime | None = None, op: str = "UPDATE",
               metadata: dict[str, Any] | None = None) -> ChatMemory | None:
        """Replace the content of a memory (a new version) and record the event."""
        memory = self.get(memory_id)
        if memory is None:
            return None
        previous = memory.content
        memory.content = content
        memory.version += 1
        if memory_at is not None and memory_at.timestamp() >= memory.memory_ts:
            memory.memory_at, memory.memory_ts = iso(memory_at), memory_at.timestamp()
        if metadata is not None:
            memory.metadata = metadata
        self._put(memory, self._event_op(memory, op, request_id=request_id, previous=previous))
        return self.get(memory_id)

    def supersede(self, old_id: str, new_id: str, *, request_id: str) -> None:
        """Mark ``old_id`` superseded by ``new_id``; it stays readable, leaves the index."""
        old = self.get(old_id)
        if old is None:
            return
        old.status, old.superseded_by = SUPERSEDED, new_id
        self._put(old, self._event_op(old, "SUPERSEDED", request_id=request_id, related=new_id))

    def delete(self, memory_id: str, *, request_id: str) -> bool:
        """Remove a memory; its history keeps a ``DELETE`` event.

        Memories it had superseded become active again (event ``RESTORED``), so deleting
        the newer version never hides the older one for good.
        """
        memory = self.get(memory_id)
        if memory is None:
            return False
        self.store.delete(_memory_ns(memory.user_id), memory_id)
        self.store.delete(_ID_NS, memory_id)
        self.store.batch([self._bump(memory.user_id),
                          self._event_op(memory, "DELETE", request_id=request_id, previous=memory.content)])
        for old_id in memory.supersedes:
            old = self.get(old_id)
            if old is not None and old.status == SUPERSEDED and old.superseded_by == memory_id:
                old.status, old.superseded_by = ACTIVE, None
                self._put(old, self._event_op(old, "RESTORED", request_id=request_id, related=memory_id))
        return True

    def delete_all(self, user_id: str) -> int:
        """Remove every memory and history event of ``user_id``; return the count."""
        items = self._scan(_memory_ns(user_id))
        for item in items:
            self.store.delete(_ID_NS, item.key)
            self.store.delete(item.namespace, item.key)
        for event in self._scan(_history_ns(user_id)):
            self.store.delete(event.namespace, event.key)
        self.store.batch([self._bump(user_id)])
        return len(items)

    # -- reads --------------------------------------------------------------------
    def revision(self, user_id: str) -> str | None:
        """A marker that changes whenever any memory of ``user_id`` changes (any process)."""
        item = self.store.get(_REV_NS, encode_label(user_id))
        return None if item is None else str(item.value["rev"])

    def owner_of(self, memory_id: str) -> str | None:
        item = self.store.get(_ID_NS, memory_id)
        return None if item is None else str(item.value["user_id"])

    def get(self, memory_id: str) -> ChatMemory | None:
        user_id = self.owner_of(memory_id)
        if user_id is None:
            return None
        item = self.store.get(_memory_ns(user_id), memory_id)
        return None if item is None else ChatMemory.from_item(item)

    def active(self, user_id: str) -> list[ChatMemory]:
        """Every active memory of ``user_id`` (newest first)."""
        return [ChatMemory.from_item(i) for i in self._scan(_memory_ns(user_id), {"status": ACTIVE})]

    def vector_search(self, user_id: str, query: str, *, limit: int,
                      filter: dict[str, Any] | None = None) -> list[ChatMemory]:
        """Top-``limit`` active memories by vector similarity, filter applied first."""
        where = {"status": ACTIVE, **(filter or {})}
        hits = self.store.search(_memory_ns(user_id), query=query, filter=where, limit=limit)
        return [ChatMemory.from_item(h, h.score) for h in hits if h.score is not None]

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """Every recorded event of ``memory_id`` and of the memories it superseded.

        Events are oldest first; each has ``op`` (ADD, UPDATE, SUPERSEDE, SUPERSEDED,
        DELETE, RESTORED), ``version``, ``content``, ``previous_content``, ``memory_at`` and ``at``.
        """
        user_id = self._history_owner(memory_id)
        if user_id is None:
            return []
        events: list[dict[str, Any]] = []
        pending, seen = [memory_id], set()
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            found = [e.value for e in self._scan(_history_ns(user_id), {"memory_id": current})]
            events.extend(found)
            for event in found:
                if event["op"] == "SUPERSEDE" and event.get("related_id"):
                    pending.extend(event["related_id"].split(","))
        return sorted(events, key=lambda v: (v["seq"], v["at"]))

    # -- helpers ------------------------------------------------------------------
    def _put(self, memory: ChatMemory, *also: PutOp) -> None:
        """Write ``memory``, bump its user's revision and any ``also`` ops in one batch."""
        index = ["content"] if memory.status == ACTIVE else False
        self.store.batch([
            PutOp(_memory_ns(memory.user_id), memory.memory_id, memory.stored_value(), index=index),
            self._bump(memory.user_id),
            *also,
        ])

    @staticmethod
    def _bump(user_id: str) -> PutOp:
        return PutOp(_REV_NS, encode_label(user_id), {"rev": uuid.uuid4().hex}, index=False)

    def _scan(self, namespace: tuple[str, ...], filter: dict[str, Any] | None = None) -> list[Item]:
        return list(self.store.search(namespace, filter=filter, limit=_SCAN_LIMIT))

    def _history_owner(self, memory_id: str) -> str | None:
        owner = self.owner_of(memory_id)
        if owner is not None:
            return owner
        hits = self.store.search((_HISTORY_NS,), filter={"memory_id": memory_id}, limit=1)
        return hits[0].value["user_id"] if hits else None

    @staticmethod
    def _event_op(memory: ChatMemory, op: str, *, request_id: str,
                  previous: str | None = None, related: str | None = None) -> PutOp:
        """The history event of one change (a put in the user's history namespace)."""
        now = utcnow()
        seq = now.timestamp()
        event = {
            "memory_id": memory.memory_id, "user_id": memory.user_id, "op": op,
            "version": memory.version, "content": memory.content, "previous_content": previous,
            "memory_at": memory.memory_at, "at": iso(now), "seq": seq,
            "request_id": request_id, "related_id": related, "status": memory.status,
        }
        key = f"{memory.memory_id}:{uuid.uuid4().hex[:12]}"
        return PutOp(_history_ns(memory.user_id), key, event, index=False)
