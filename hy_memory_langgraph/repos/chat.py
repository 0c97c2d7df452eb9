"""Chat memories over a LangGraph ``BaseStore``.

Layout (see :mod:`.base`): ``("chat", user)`` / ``memory_id`` → a :class:`ChatMemory`
(only ``content`` is embedded, and only while active); ``("chat_history", user)`` holds
its events; ``("chat_turns", user)`` / :func:`turn_hash` → ``{"memory_id"}`` finds the lite
turn a new turn repeats (one ``get``, no scan). On a store with a persistent lexical
index, every batch that writes an active memory also writes its lexical document
(:mod:`.chat_terms`), so a search reads only its candidates (:meth:`ChatRepository.candidates`),
never every memory.

Example:
    >>> from langgraph.store.memory import InMemoryStore
    >>> repo = ChatRepository(InMemoryStore())
    >>> m = repo.create("u1", "Alice likes tea", request_id="r1")
    >>> repo.get(m.memory_id).content
    'Alice likes tea'
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, cast

from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, SearchItem

from hy_memory_langgraph.errors import ConflictError, StoreError
from hy_memory_langgraph.ids import random_id
from hy_memory_langgraph.messages.signal import is_question_only, match_text
from hy_memory_langgraph.repos.base import RETRIES, Change, RecordRepository
from hy_memory_langgraph.repos.chat_terms import LEXICAL_WINDOW, lexical_op
from hy_memory_langgraph.repos.namespaces import encode_label
from hy_memory_langgraph.repos.productivity import parse_id
from hy_memory_langgraph.repos.records import (
    ACTIVE,
    SUPERSEDED,
    ChatMemory,
    Record,
    readable_record,
    record_from_value,
)
from hy_memory_langgraph.retrieval.bm25 import tokenize
from hy_memory_langgraph.store import IndexedStore
from hy_memory_langgraph.timeutil import iso, utcnow

#: Namespace label of the lite-turn index (turn key → memory id).
TURNS: Final = "chat_turns"


def turn_hash(owner: str, session_id: str | None, text: str) -> str:
    """The identity of a lite turn: the same owner, the same session (or none) and the
    same text once matched (:func:`~hy_memory_langgraph.messages.match_text`).

    Example:
        >>> turn_hash("user", "s1", "I like tea.") == turn_hash("user", "s1", "i like TEA")
        True
        >>> turn_hash("user", "s1", "I like tea") == turn_hash("user", "s2", "I like tea")
        False
    """
    session = "-" if session_id is None else f"+{session_id}"
    raw = f"{owner}\x1f{session}\x1f{match_text(text)}"
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class CandidatePools:
    """The two candidate pools of one chat search, by memory id.

    Attributes:
        vector: Cosine similarity of the nearest memories.
        lexical: BM25 score of the best keyword matches.
        times: ``memory_ts`` of every candidate (``None`` when unknown).
    """

    vector: dict[str, float]
    lexical: dict[str, float]
    times: dict[str, float | None]


def _chat_hits(hits: Sequence[SearchItem]) -> list[ChatMemory]:
    """The scored hits as memories, damaged records skipped."""
    records = (readable_record(h.value, h.score) for h in hits if h.score is not None)
    return [cast(ChatMemory, r) for r in records if r is not None]


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

    def owns_id(self, memory_id: str, kind: str) -> bool:
        return parse_id(memory_id) is None  # a working/coding id is not a chat memory's

    # -- writes -----------------------------------------------------------------------
    def create(self, user_id: str, content: str, *, request_id: str,
               memory_at: datetime | None = None, supersedes: list[str] | None = None,
               memory_id: str | None = None, extra: Sequence[PutOp] = (), **fields: Any) -> ChatMemory:
        """Store a new active memory (``ADD``); with ``supersedes``, retire those in the
        same change (``SUPERSEDE`` on the new one, ``SUPERSEDED`` on each old one).

        ``memory_id``: the new memory's id (default a random one); ``extra``: more puts
        written in the same batch (a journal entry)."""
        at = memory_at or utcnow()
        memory = ChatMemory(memory_id=memory_id or random_id(), user_id=user_id, content=content,
                            memory_at=iso(at), memory_ts=at.timestamp(),
                            supersedes=list(supersedes or []), **fields)
        change = self.begin(request_id)
        change.add(memory, "SUPERSEDE" if memory.supersedes else "ADD")
        for old in self._chat_many(memory.supersedes):
            old.status, old.superseded_by = SUPERSEDED, memory.memory_id
            change.save(old, "SUPERSEDED", related=memory.memory_id)
        change.ops.extend(extra)
        self.commit(change)
        return memory

    def update(self, memory_id: str, content: str, *, request_id: str,
               memory_at: datetime | None = None, op: str = "UPDATE",
               metadata: dict[str, Any] | None = None,
               expected_version: int | None = None, extra: Sequence[PutOp] = ()) -> ChatMemory | None:
        """Replace the content of a memory (a new version); ``None`` when it is gone.

        ``memory_at`` moves only forward; ``metadata`` replaces the old one when given.
        The change is guarded: a concurrent update makes it read again and apply on top
        (no update is lost); a concurrent delete makes it return ``None`` with nothing
        written. With ``expected_version`` it is a compare-and-set: the memory must still
        be at that version, else :class:`ConflictError` and nothing is written. ``extra``:
        more puts written in the same batch as the update (a journal entry).
        """
        for _ in range(RETRIES):
            memory = self._chat(memory_id)
            if memory is None:
                return None
            if expected_version is not None and memory.version != expected_version:
                raise ConflictError(
                    f"memory_id={memory_id!r} is at version {memory.version}, not the expected "
                    f"{expected_version}: someone changed it; get() it again and decide")
            previous = memory.content
            memory.content = content
            memory.version += 1
            if memory.question is not None:  # a lite turn keeps its flag true to its text
                memory.question = is_question_only(content)
            if memory_at is not None and memory_at.timestamp() >= memory.memory_ts:
                memory.memory_at, memory.memory_ts = iso(memory_at), memory_at.timestamp()
            if metadata is not None:
                memory.metadata = metadata
            change = self.begin(request_id)
            change.save(memory, op, previous=previous)
            change.ops.extend(extra)
            try:
                self.commit(change)
            except ConflictError:
                continue
            return memory
        raise ConflictError(f"memory_id={memory_id!r} kept changing while being updated; retry")

    def add_all(self, user_id: str, facts: Sequence[dict[str, Any]], *, request_id: str,
                memory_at: datetime | None = None, ids: Sequence[str] | None = None,
                extra: Sequence[PutOp] = (), **fields: Any) -> list[ChatMemory]:
        """Store several new memories (``ADD``) in one change: one store batch, one
        embedding call. Each fact gives ``content`` and any other :class:`ChatMemory` field;
        ``ids`` their ids (default random ones); ``extra``: more puts for the same batch."""
        at = memory_at or utcnow()
        ids = list(ids) if ids is not None else [random_id() for _ in facts]
        memories = [ChatMemory(memory_id=memory_id, user_id=user_id, memory_at=iso(at),
                               memory_ts=at.timestamp(), **fields, **fact)
                    for memory_id, fact in zip(ids, facts, strict=True)]
        change = self.begin(request_id)
        for memory in memories:
            change.add(memory, "ADD")
        change.ops.extend(extra)
        self.commit(change)
        return memories

    def stage_turn(self, change: Change, memory: ChatMemory) -> None:
        """Add a new lite turn to ``change``, with its entry in the turn index."""
        change.add(memory, "ADD")
        if memory.turn_hash:
            change.ops.append(PutOp(self.turn_namespace(memory.user_id), memory.turn_hash,
                                    {"memory_id": memory.memory_id}, index=False))

    # -- lite turn index ----------------------------------------------------------------
    def turn_namespace(self, user_id: str) -> tuple[str, str]:
        return (encode_label(TURNS), encode_label(user_id))

    def turn_ops(self, user_id: str, keys: Sequence[str]) -> list[GetOp]:
        """Reads of the turn index for ``keys`` (for a caller batching them with others)."""
        return [GetOp(self.turn_namespace(user_id), key) for key in keys]

    def stored_turns(self, keys: Sequence[str], items: Sequence[Item | None]) -> dict[str, ChatMemory]:
        """The active turns that ``keys`` (read with :meth:`turn_ops`) still name.

        A memory counts only while it is active and its current owner, session and
        content still give the key (an edited memory no longer blocks its old text).
        Reads the store only when some key was found.
        """
        named = {key: str(item.value["memory_id"]) for key, item in zip(keys, items, strict=True)
                 if item is not None}
        if not named:
            return {}
        found = {m.memory_id: m for m in self._chat_many(list(named.values()))}
        out: dict[str, ChatMemory] = {}
        for key, memory_id in named.items():
            memory = found.get(memory_id)
            if memory is not None and memory.status == ACTIVE and key == turn_hash(
                    memory.owner, memory.session_id, memory.content):
                out[key] = memory
        return out

    # -- reads ------------------------------------------------------------------------
    def active(self, user_id: str) -> list[ChatMemory]:
        """Every active memory of ``user_id``."""
        return [cast(ChatMemory, r) for r in self.scan("chat", user_id, {"status": ACTIVE})]

    def vector_search(self, user_id: str, query: str, *, limit: int,
                      filter: dict[str, Any] | None = None) -> list[ChatMemory]:
        """Top-``limit`` active memories by vector similarity, filter applied first.

        Stores that drop the vectors of re-put records (``replaces_vectors_on_put``) only
        hold vectors of active memories, so they are not asked to filter on status.
        """
        where = dict(filter or {}) if self.caps.replaces_vectors_on_put else {"status": ACTIVE, **(filter or {})}
        hits = self.store.search(self.namespace("chat", user_id), query=query, filter=where or None,
                                 limit=limit)
        return _chat_hits(hits)

    # -- the persistent lexical index ----------------------------------------------------
    def lexical_ready(self, user_id: str) -> bool:
        """Whether :meth:`candidates` can answer for ``user_id``.

        Needs a store with a lexical index whose documents of the user were built with
        :data:`~hy_memory_langgraph.repos.chat_terms.LEXICAL_WINDOW`.
        """
        if self.indexed is None:
            return False
        return self.indexed.lexical_status(self.namespace("chat", user_id)).window in (None, LEXICAL_WINDOW)

    def candidates(self, user_id: str, query: str, *, pool: int, k1: float, b: float,
                   ts_range: tuple[float | None, float | None] | None = None) -> CandidatePools:
        """The best ``pool`` memories by vector similarity and by BM25 (``k1``, ``b``), read
        from the store's indexes without loading any memory (call :meth:`lexical_ready` first).

        ``ts_range`` (``memory_ts`` bounds, inclusive) restricts both pools before their top-k.
        """
        namespace = self.namespace("chat", user_id)
        ranked = self._ranked()
        lexical = ranked.lexical_search(namespace, Counter(tokenize(query)), limit=pool, k1=k1, b=b,
                                        ts_range=ts_range)
        vector = ranked.vector_search_keys(namespace, query, limit=pool, ts_range=ts_range)
        return CandidatePools(vector={h.key: h.score for h in vector},
                              lexical={h.key: h.score for h in lexical},
                              times={h.key: h.ts for h in (*lexical, *vector)})

    def _ranked(self) -> IndexedStore:
        """The store's ranked-key searches (callers checked :meth:`lexical_ready` first)."""
        if self.indexed is None:
            raise StoreError(f"{type(self.store).__name__} has no lexical index; "
                             "check lexical_ready() before ranked-key searches")
        return self.indexed

    def memories_of(self, user_id: str, ids: Sequence[str]) -> list[ChatMemory]:
        """The stored memories of ``user_id`` among ``ids`` (one batch; missing ones left out)."""
        namespace = self.namespace("chat", user_id)
        found = self.store.batch([GetOp(namespace, i) for i in ids]) if ids else []
        records = (readable_record(item.value) for item in found if isinstance(item, Item))
        return [cast(ChatMemory, r) for r in records if r is not None]

    def _derived_ops(self, ops: Sequence[Op], written: Mapping[int, Record] | None = None) -> list[Op]:
        """The lexical documents of the active chat memories a batch writes (stores with a
        lexical index); a memory written inactive gets none, so the store drops its own.
        A put's record comes from ``written`` when there, else from its value."""
        if self.indexed is None:
            return []
        label = self.namespace("chat", "_")[0]
        last: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, PutOp) and op.namespace[0] == label:
                last[(op.namespace, op.key)] = op
        out: list[Op] = []
        for op in last.values():
            if op.value is None or op.value.get("status") != ACTIVE:
                continue
            record = (written or {}).get(id(op.value)) or record_from_value(dict(op.value))
            if isinstance(record, ChatMemory):
                out.append(lexical_op(op.namespace, record))
        return out

    def _forget_quotes(self, change: Change, deleted: Record, texts: Sequence[str] = ()) -> None:
        """Lite turns keep the message before them as retrieval context: when that message
        is the deleted memory (as it is now or was before an update), the context goes
        with it; so does its turn-index entry."""
        if not isinstance(deleted, ChatMemory) or not deleted.content.strip():
            return
        if deleted.turn_hash:
            ns = self.turn_namespace(deleted.user_id)
            entry = self.store.get(ns, deleted.turn_hash)
            if entry is not None and entry.value.get("memory_id") == deleted.memory_id:
                change.ops.append(PutOp(ns, deleted.turn_hash, None))
        quoted = [t.strip() for t in (deleted.content, *texts) if t and t.strip()]
        for memory in self.active(deleted.user_id):
            if memory.memory_id != deleted.memory_id and memory.context and \
                    any(text in memory.context for text in quoted):
                memory.context = ""
                change.relink(memory)

    def _user_namespaces(self, user_id: str) -> list[tuple[str, ...]]:
        return [self.turn_namespace(user_id)]

    def _chat(self, memory_id: str) -> ChatMemory | None:
        record = self.get(memory_id)
        return record if isinstance(record, ChatMemory) else None

    def _chat_many(self, ids: list[str]) -> list[ChatMemory]:
        return [r for r in self.get_many(ids) if isinstance(r, ChatMemory)]
