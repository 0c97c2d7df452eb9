"""What every record repository shares: id index, history log, one batch per change.

Layout inside a LangGraph ``BaseStore`` (labels pass through :func:`encode_label`):

* ``(collection, user)`` / ``memory_id`` → a record (:mod:`.records`); one collection
  per record kind;
* ``(history, user)`` / ``memory_id:seq`` → one event per change of a record;
* ``("memory_ids",)`` / ``memory_id`` → ``{"user_id", "kind"}``, so an id is found
  without a scan;
* ``("revisions",)`` / ``user`` → a marker changed by every change of that user's
  records (any process), so readers may reuse what they loaded while it stays.

A :class:`Change` collects the puts, deletes and events of one logical change and is
written by :meth:`RecordRepository.commit` in ONE store batch. Every record the change
overwrites or deletes is guarded: the batch is written only if that record is still as
it was read (same ``updated_at``), else :class:`ConflictError` and nothing is written.
Stores with ``supports_guards`` check this inside their write transaction (atomic across
processes); on other stores the repository checks under a lock of this process. Deleting
a record
erases its events (one content-free ``DELETE`` event stays) and gives the records it
had superseded back: to its successor when it was itself superseded (``RELINKED``),
else as active records (``RESTORED``).

Example:
    >>> from langgraph.store.memory import InMemoryStore
    >>> from hy_memory_langgraph.repos.records import ChatMemory
    >>> repo = RecordRepository(InMemoryStore(), {"chat": "chat"}, "chat_history")
    >>> change = repo.begin("r1")
    >>> _ = change.add(ChatMemory(memory_id="m1", user_id="u1", content="hi",
    ...                           memory_at="2024-01-01T00:00:00+00:00", memory_ts=0.0), "ADD")
    >>> repo.commit(change)
    >>> [e["op"] for e in repo.history("m1")]
    ['ADD']
"""

from __future__ import annotations

import copy
import itertools
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp

from hy_memory_langgraph.errors import ConflictError, StoreCorruptionError
from hy_memory_langgraph.ids import random_id
from hy_memory_langgraph.repos.namespaces import encode_label
from hy_memory_langgraph.repos.records import (
    ACTIVE,
    SUPERSEDED,
    Record,
    readable_record,
    record_from_value,
)
from hy_memory_langgraph.store import CapabilityFlags, GuardOp, IndexedStore
from hy_memory_langgraph.timeutil import iso, utcnow
from hy_memory_langgraph.values import MAX_JSON_DEPTH, json_depth

ID_NS: Final = ("memory_ids",)
REV_NS: Final = ("revisions",)
SCAN_LIMIT: Final = 1_000_000
#: Attempts of a read-change-write that met concurrent changes.
RETRIES: Final = 8
_SEQ = itertools.count()
_LOCKS: weakref.WeakKeyDictionary[BaseStore, threading.RLock] = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()


def _process_lock(store: BaseStore) -> threading.RLock:
    """The lock serialising guarded changes to ``store`` within this process."""
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(store, threading.RLock())


class _Undeclared:
    """The capabilities of a store that declares none (:class:`~hy_memory_langgraph.store.CapabilityFlags`)."""

    supports_or_filters = replaces_vectors_on_put = supports_guards = lists_newest_first = False
    supports_lexical_index = False


def _readable(values: Iterable[Any]) -> list[Record]:
    """The records of ``values``, damaged ones skipped (and logged)."""
    return [r for r in map(readable_record, values) if r is not None]


def version_texts(events: Iterable[dict[str, Any]]) -> list[str]:
    """Every text a record held, from its history events (each update's old and new)."""
    texts = [str(e[k]) for e in events for k in ("content", "previous_content") if e.get(k)]
    return list(dict.fromkeys(texts))


def split_or(where: dict[str, Any]) -> list[dict[str, Any]]:
    """Split a top-level ``$or`` into plain filters (their results are merged by the caller)."""
    if "$or" not in where:
        return [where]
    base = {k: v for k, v in where.items() if k != "$or"}
    return [{**base, **alt} for alt in where["$or"]]


def _seq() -> int:
    """Orders events: nanoseconds, plus a counter so events of one change keep their order."""
    return time.time_ns() + next(_SEQ) % 1000


@dataclass
class Change:
    """The puts, deletes and history events of one change, written in one batch.

    Build it with :meth:`RecordRepository.begin`; nothing is stored before
    :meth:`RecordRepository.commit`.
    """

    repo: RecordRepository
    request_id: str | None
    now: str = field(default_factory=lambda: iso(utcnow()))
    ops: list[PutOp] = field(default_factory=list)
    users: set[str] = field(default_factory=set)
    replaced: list[Record] = field(default_factory=list)
    guards: list[GuardOp] = field(default_factory=list)
    #: Each record put, as it was put, by the ``id`` of its put's value (the put holds it).
    written: dict[int, Record] = field(default_factory=dict)

    def add(self, record: Record, op: str, *, related: str | None = None) -> Record:
        """Store a new record (and its id entry) with its creation event ``op``."""
        record.created_at = record.created_at or self.now
        record.updated_at = self.now
        record.request_id = record.request_id or self.request_id
        self.ops.append(PutOp(ID_NS, record.memory_id,
                              {"user_id": record.user_id, "kind": record.kind}, index=False))
        return self._put(record, op, related=related)

    def save(self, record: Record, op: str, *, previous: str | None = None,
             related: str | None = None) -> Record:
        """Overwrite an existing record (guarded: unchanged since read) with the event ``op``."""
        self._guard(record)
        record.updated_at = self.now
        self.replaced.append(record)
        return self._put(record, op, previous=previous, related=related)

    def remove(self, record: Record, events: Iterable[Item] = ()) -> None:
        """Delete a record, its id entry and its ``events``; keep a content-free ``DELETE``."""
        self._guard(record)
        self.ops.append(PutOp(self.repo.namespace(record.kind, record.user_id), record.memory_id, None))
        self.ops.append(PutOp(ID_NS, record.memory_id, None))
        self.ops.extend(PutOp(e.namespace, e.key, None) for e in events)
        tombstone = {"memory_id": record.memory_id, "user_id": record.user_id,
                     "kind": record.kind, "op": "DELETE", "status": "deleted", "at": self.now,
                     "seq": _seq(), "request_id": self.request_id}
        self._event(record.user_id, tombstone)

    def relink(self, record: Record) -> None:
        """Overwrite a record whose links changed (guarded, no event of its own)."""
        self._guard(record)
        record.updated_at = self.now
        self.replaced.append(record)
        self._put_record(record)

    def _guard(self, record: Record) -> None:
        ns = self.repo.namespace(record.kind, record.user_id)
        self.guards.append(GuardOp(ns, record.memory_id, {"updated_at": record.updated_at}))

    def _put(self, record: Record, op: str, *, previous: str | None = None,
             related: str | None = None) -> Record:
        self._put_record(record)
        event = {
            "memory_id": record.memory_id, "user_id": record.user_id, "kind": record.kind,
            "op": op, "version": record.version, "content": record.text,
            "previous_content": previous, "status": record.status,
            "supersedes": list(record.supersedes), "superseded_by": record.superseded_by,
            "related_id": related, "memory_at": record.memory_at, "at": self.now, "seq": _seq(),
            "request_id": self.request_id, **record.event_fields(),
        }
        self._event(record.user_id, event)
        return record

    def _put_record(self, record: Record) -> None:
        value = record.stored_value()
        self.ops.append(PutOp(self.repo.namespace(record.kind, record.user_id), record.memory_id, value,
                              index=record.index_paths()))
        self.written[id(value)] = copy.copy(record)

    def _event(self, user_id: str, event: dict[str, Any]) -> None:
        key = f"{event['memory_id']}:{event['seq']:020d}:{random_id()[:6]}"
        self.ops.append(PutOp(self.repo.history_namespace(user_id), key, event, index=False))
        self.users.add(user_id)


class RecordRepository:
    """Records of several kinds in one store, with the shared mechanics above.

    Args:
        store: Any LangGraph store; what it declares beyond ``BaseStore`` is read once
            (:class:`~hy_memory_langgraph.store.CapabilityFlags`, :class:`~hy_memory_langgraph.store.IndexedStore`).
        collections: Collection (first namespace label) of each record kind.
        history: Label of the history namespace.
    """

    def __init__(self, store: BaseStore, collections: Mapping[str, str], history: str) -> None:
        self.store = store
        #: The capability flags the store declares (none: all false).
        self.caps: CapabilityFlags = store if isinstance(store, CapabilityFlags) else _Undeclared()
        #: The store's ranked-key searches over its persistent lexical index (``None``: none).
        self.indexed: IndexedStore | None = \
            store if isinstance(store, IndexedStore) and self.caps.supports_lexical_index else None
        self._labels = {kind: encode_label(name) for kind, name in collections.items()}
        self._history = encode_label(history)

    # -- namespaces -----------------------------------------------------------------
    def namespace(self, kind: str, user_id: str) -> tuple[str, str]:
        """Where records of ``kind`` of ``user_id`` live."""
        return (self._labels[kind], encode_label(user_id))

    def history_namespace(self, user_id: str) -> tuple[str, str]:
        return (self._history, encode_label(user_id))

    # -- reads ----------------------------------------------------------------------
    def locate(self, memory_id: str) -> tuple[str, str] | None:
        """``(user_id, kind)`` of an existing record of this repository, or ``None``."""
        owner = self._owners([memory_id]).get(memory_id)
        return owner if owner is not None and owner[1] in self._labels else None

    def get(self, memory_id: str) -> Record | None:
        """The record ``memory_id`` (any status), or ``None``."""
        found = self.get_many([memory_id])
        return found[0] if found else None

    def get_many(self, ids: Iterable[str]) -> list[Record]:
        """The records of ``ids`` that exist, in order, duplicates dropped (two batches)."""
        located = [(i, owner) for i, owner in self._owners(list(ids)).items() if owner[1] in self._labels]
        items = self.store.batch([GetOp(self.namespace(kind, user), i)
                                  for i, (user, kind) in located]) if located else []
        return _readable(item.value for item in items if isinstance(item, Item))

    def revision(self, user_id: str) -> str | None:
        """A marker that changes whenever a record of ``user_id`` changes (any process)."""
        item = self.store.get(REV_NS, encode_label(user_id))
        return None if item is None else str(item.value["rev"])

    def scan(self, kind: str, user_id: str, where: dict[str, Any] | None = None, *,
             limit: int = SCAN_LIMIT) -> list[Record]:
        """Records of ``user_id`` matching ``where`` (no ranking; ``$or`` honoured on any store)."""
        filters = [where or {}] if self.caps.supports_or_filters else split_or(where or {})
        seen: dict[str, Record] = {}
        for f in filters:
            for item in self.store.search(self.namespace(kind, user_id), filter=f or None,
                                          limit=limit):
                record = seen.get(item.key) or readable_record(item.value)
                if record is not None:
                    seen[item.key] = record
        return list(seen.values())

    def recent(self, kind: str, user_id: str, count: int) -> list[Record]:
        """The ``count`` active records of ``kind`` of ``user_id`` updated last, newest
        first (a store that does not list newest first is read whole and sorted)."""
        where = {"status": ACTIVE}
        if self.caps.lists_newest_first:
            items = self.store.search(self.namespace(kind, user_id), filter=where, limit=count)
            return _readable(item.value for item in items)
        records = self.scan(kind, user_id, where)
        return sorted(records, key=lambda r: (r.updated_at, r.memory_id), reverse=True)[:count]

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """Events of ``memory_id`` and of every record it superseded, oldest first.

        Ops: the creation op (``ADD``, ``INSERT`` or ``SUPERSEDE``), ``UPDATE``,
        ``SUPERSEDED``, ``DELETE`` (content-free after a delete), ``RESTORED``,
        ``RELINKED``.
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
            found = [e.value for e in self._events(user_id, current)]
            events.extend(found)
            record = self.get(current)
            pending.extend(record.supersedes if record else [])
            for event in found:
                pending.extend(event.get("supersedes") or [])
        return sorted(events, key=lambda e: (e["seq"], e["at"]))

    # -- export / import --------------------------------------------------------------
    def dump(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored record and history event of every user, as they are stored.

        Yields ``("record", memory_id, value)`` (any status; internal fields included)
        then ``("event", key, value)``. Vectors are not included (they are derived).
        """
        for label in self._labels.values():
            for item in self._items((label,)):
                yield "record", item.key, item.value
        for item in self._items((self._history,)):
            yield "event", item.key, item.value

    def restore(self, records: Iterable[dict[str, Any]],
                events: Iterable[tuple[str, dict[str, Any]]] = ()) -> tuple[int, list[dict[str, str]]]:
        """Write records and events exactly as :meth:`dump` gave them, in one batch.

        Each record keeps its id, status, links, times and version (active records are
        indexed for vector search again); its id entry is rebuilt and each user's
        revision marker moves. An existing record with the same id is replaced only when
        it belongs to the same user and kind: a row whose id is another user's (or names
        another scene or kind) is refused, with its events, and reported.

        Returns:
            The number of records written, and ``{"memory_id", "user_id", "reason"}`` of
            each refused row.
        """
        values = [dict(v) for v in records]
        owners = self._owners([str(v.get("memory_id")) for v in values])
        ops: list[Op] = []
        users: set[str] = set()
        refused: list[dict[str, str]] = []
        for value in values:
            try:
                if json_depth(value, MAX_JSON_DEPTH + 2) > MAX_JSON_DEPTH + 2:
                    raise StoreCorruptionError(f"it nests deeper than {MAX_JSON_DEPTH} levels")
                record = record_from_value(value)
            except StoreCorruptionError as exc:
                refused.append({"memory_id": str(value.get("memory_id")), "user_id": str(value.get("user_id")),
                                "reason": f"not a valid memory record: {exc}"})
                continue
            if record.kind not in self._labels:
                raise ValueError(f"record kind {record.kind!r} does not belong in this repository")
            reason = self._refusal(record, owners.get(record.memory_id))
            if reason is not None:
                refused.append({"memory_id": record.memory_id, "user_id": record.user_id, "reason": reason})
                continue
            owners[record.memory_id] = (record.user_id, record.kind)
            ops.append(PutOp(ID_NS, record.memory_id, {"user_id": record.user_id, "kind": record.kind},
                             index=False))
            ops.append(PutOp(self.namespace(record.kind, record.user_id), record.memory_id, value,
                             index=record.index_paths()))
            users.add(record.user_id)
        written = len(values) - len(refused)
        skipped = {r["memory_id"] for r in refused}
        for key, event in events:
            if str(event.get("memory_id")) in skipped:
                continue
            ops.append(PutOp(self.history_namespace(str(event["user_id"])), key, dict(event), index=False))
            users.add(str(event["user_id"]))
        ops += self._derived_ops(ops)
        ops += [PutOp(REV_NS, encode_label(u), {"rev": random_id()}, index=False) for u in sorted(users)]
        if ops:
            self.store.batch(ops)
        return written, refused

    def _owners(self, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """``{memory_id: (user_id, kind)}`` of the ids the id index already holds."""
        wanted = list(dict.fromkeys(ids))
        entries = self.store.batch([GetOp(ID_NS, i) for i in wanted]) if wanted else []
        return {i: (str(e.value.get("user_id")), str(e.value.get("kind", "chat")))
                for i, e in zip(wanted, entries) if isinstance(e, Item)}

    def _refusal(self, record: Record, owner: tuple[str, str] | None) -> str | None:
        """Why an imported record may not be written here, or ``None``."""
        if not self.owns_id(record.memory_id, record.kind):
            return f"the id {record.memory_id!r} is not a {record.kind} id of this scene"
        if owner is not None and owner != (record.user_id, record.kind):
            return "the id belongs to another user's memory here" if owner[0] != record.user_id \
                else f"the id belongs to a {owner[1]} record here"
        return None

    def owns_id(self, memory_id: str, kind: str) -> bool:
        """Whether ``memory_id`` has the form of a ``kind`` id of this repository."""
        return True

    # -- writes ---------------------------------------------------------------------
    def begin(self, request_id: str | None) -> Change:
        """A new, empty change."""
        return Change(self, request_id)

    def commit(self, change: Change) -> None:
        """Write ``change`` (and a revision bump of each user it touched) in one batch.

        Raises:
            ConflictError: a record the change overwrites or deletes changed since it
                was read; nothing was written.
        """
        if not change.ops:
            return
        bumps = [PutOp(REV_NS, encode_label(u), {"rev": random_id()}, index=False)
                 for u in sorted(change.users)]
        derived = self._derived_ops(change.ops, change.written)
        if self.caps.supports_guards:
            self.store.batch([*change.guards, *change.ops, *derived, *bumps])
            return
        with _process_lock(self.store):
            self._check_here(change.guards)
            if change.replaced and not self.caps.replaces_vectors_on_put:
                # delete first, or the store would keep the replaced records' old vectors
                self.store.batch([PutOp(self.namespace(r.kind, r.user_id), r.memory_id, None)
                                  for r in change.replaced])
            self.store.batch([*change.ops, *derived, *bumps])

    def _derived_ops(self, ops: Sequence[Op], written: Mapping[int, Record] | None = None) -> list[Op]:
        """Store ops derived from a batch's puts, written in the same batch (none by
        default; the chat repository adds lexical documents). ``written``: the records
        behind puts, by the ``id`` of the put's value (:attr:`Change.written`)."""
        return []

    def _check_here(self, guards: list[GuardOp]) -> None:
        """The guards of a store without guard support, checked in this process."""
        for guard in guards:
            item = self.store.get(guard.namespace, guard.key)
            if item is None:
                raise ConflictError(f"record {guard.key!r} was deleted concurrently")
            if any(item.value.get(k) != v for k, v in (guard.expect or {}).items()):
                raise ConflictError(f"record {guard.key!r} changed concurrently; read it again")

    def delete(self, memory_id: str, *, request_id: str | None = None) -> bool:
        """Delete one record in one change; ``False`` when it did not exist.

        A concurrent change of the record (or of a record it links) makes the delete
        read again and retry; a concurrent delete makes it return ``False``.
        """
        for _ in range(RETRIES):
            record = self.get(memory_id)
            if record is None:
                return False
            change = self.begin(request_id)
            events = self._events(record.user_id, memory_id)
            change.remove(record, events)
            self._release_predecessors(change, record)
            self._forget_quotes(change, record, version_texts(e.value for e in events))
            try:
                self.commit(change)
            except ConflictError:
                continue
            return True
        raise ConflictError(f"memory_id={memory_id!r} kept changing while being deleted; retry")

    def delete_all(self, user_id: str) -> int:
        """Delete every record, event and id entry of ``user_id`` in one batch; the count."""
        ops: list[PutOp] = []
        removed = 0
        for kind in self._labels:
            for item in self._items(self.namespace(kind, user_id)):
                ops += [PutOp(item.namespace, item.key, None), PutOp(ID_NS, item.key, None)]
                removed += 1
        for ns in [self.history_namespace(user_id), *self._user_namespaces(user_id)]:
            ops += [PutOp(i.namespace, i.key, None) for i in self._items(ns)]
        ops.append(PutOp(REV_NS, encode_label(user_id), None))
        self.store.batch(ops)
        return removed

    # -- helpers --------------------------------------------------------------------
    def _items(self, namespace: tuple[str, ...], where: dict[str, Any] | None = None) -> list[Item]:
        return list(self.store.search(namespace, filter=where, limit=SCAN_LIMIT))

    def _events(self, user_id: str, memory_id: str) -> list[Item]:
        return self._items(self.history_namespace(user_id), {"memory_id": memory_id})

    def _history_owner(self, memory_id: str) -> str | None:
        located = self.locate(memory_id)
        if located is not None:
            return located[0]
        hits = self.store.search((self._history,), filter={"memory_id": memory_id}, limit=1)
        return str(hits[0].value["user_id"]) if hits else None

    def _user_namespaces(self, user_id: str) -> list[tuple[str, ...]]:
        """Other namespaces holding entries of ``user_id`` (erased by :meth:`delete_all`)."""
        return []

    def _forget_quotes(self, change: Change, deleted: Record, texts: Sequence[str] = ()) -> None:
        """Remove what other records keep of ``deleted``'s text (none by default)."""

    def _release_predecessors(self, change: Change, deleted: Record) -> None:
        """Give the records ``deleted`` superseded to its successor, or make them active."""
        preds = [r for r in self.get_many(deleted.supersedes)
                 if r.status == SUPERSEDED and r.superseded_by == deleted.memory_id]
        if not preds:
            return
        successor = self.get(deleted.superseded_by) if deleted.superseded_by else None
        for pred in sorted(preds, key=lambda r: r.memory_id):
            if successor is not None:
                pred.superseded_by = successor.memory_id
                change.save(pred, "RELINKED", related=deleted.memory_id)
            else:
                pred.status, pred.superseded_by = ACTIVE, None
                change.save(pred, "RESTORED", related=deleted.memory_id)
        if successor is not None:
            moved = [p.memory_id for p in preds]
            kept = [i for i in successor.supersedes if i != deleted.memory_id]
            successor.supersedes = list(dict.fromkeys([*kept, *moved]))
            change.relink(successor)

