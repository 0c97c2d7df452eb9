"""Experiences and facts of one productivity variant over a LangGraph ``BaseStore``.

One store per variant (``coding_memory.db`` for working, ``coding_memory_cv.db`` for
coding). The first namespace label is the vector collection name (seed 1 §5), passed
through :func:`encode_label` (a ``.`` in the db file name would otherwise make an
invalid label):

* ``(config.experience_collection(v), user)`` / id → an experience; ``task`` and each
  ``search_keys[*]`` are separate vectors (the store max-pools per item).
* ``(config.fact_collection(v), user)`` / id → a fact; only ``embed_text``
  (``"subject: statement"``) is embedded, and only while the fact is active.
* ``("memory_ids",)`` / id → ``{"user_id", "kind"}`` so an id is found without a scan.

Ids name their kind and variant (``fact_coding_<hex>``, ``exp_working_<hex>``), so the
client can route ``get``/``delete``/``history`` without opening every store.

Portability: langgraph's ``InMemoryStore`` supports neither ``$or`` filters nor dropping
stale vectors when an item is re-put. For any store other than :class:`HyMemoryStore`
the repository therefore splits a top-level ``$or`` into one search per branch (merged
by score: exact, since the branches are disjoint) and deletes before re-putting.

Example:
    >>> from langgraph.store.memory import InMemoryStore
    >>> from hy_memory_langgraph.config import MemoryConfig
    >>> repo = ProductivityRepository(InMemoryStore(), MemoryConfig.from_env({}), "coding")
    >>> repo.fact_ns("u.1")
    ('coding_memory_working_facts_cv', 'u%2E1')
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Sequence
from typing import Any, Final, Literal, cast

from langgraph.store.base import BaseStore, Item, PutOp, SearchItem, SearchOp

from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.scenes import PRODUCTIVITY_SCENES
from hy_memory_langgraph.timeutil import iso, utcnow
from hy_memory_langgraph.repos.namespaces import encode_label

__all__ = [
    "ACTIVE", "SUPERSEDED", "DELETED", "FACT_INDEX_FIELDS", "EXPERIENCE_INDEX_FIELDS",
    "ProductivityRepository", "Kind", "new_id", "parse_id", "public_view", "experience_event",
]

Kind = Literal["fact", "experience"]
_PREFIX: Final[dict[str, str]] = {"fact": "fact", "experience": "exp"}
_KIND_OF: Final[dict[str, Kind]] = {"fact": "fact", "exp": "experience"}
ACTIVE: Final = "active"
SUPERSEDED: Final = "superseded"
DELETED: Final = "deleted"
FACT_INDEX_FIELDS: Final = ("embed_text",)
EXPERIENCE_INDEX_FIELDS: Final = ("task", "search_keys[*]")
_ID_NS: Final = ("memory_ids",)
_ID_RE: Final = re.compile(rf"^(fact|exp)_({'|'.join(PRODUCTIVITY_SCENES)})_[0-9a-f]{{32}}$")
_SCAN_LIMIT: Final = 1_000_000
_INTERNAL: Final = frozenset({"embed_text", "subject_key", "versions", "events"})


def new_id(kind: Kind, variant: str) -> str:
    """A fresh memory id naming its kind and variant, e.g. ``fact_coding_<32 hex>``."""
    return f"{_PREFIX[kind]}_{variant}_{uuid.uuid4().hex}"


def parse_id(memory_id: str) -> tuple[Kind, str] | None:
    """``(kind, variant)`` of a productivity id, ``None`` for any other id."""
    match = _ID_RE.match(memory_id) if isinstance(memory_id, str) else None
    return (_KIND_OF[match.group(1)], match.group(2)) if match else None  # type: ignore[return-value]


def public_view(value: dict[str, Any], score: float | None = None) -> dict[str, Any]:
    """The caller-facing dict of a stored experience or fact."""
    out = {k: v for k, v in value.items() if k not in _INTERNAL}
    if score is not None:
        out["score"] = round(float(score), 6)
    return out


def _native(store: BaseStore) -> bool:
    """Whether ``store`` evaluates ``$or`` and drops vectors on re-put (HyMemoryStore)."""
    try:
        from hy_memory_langgraph.store import HyMemoryStore
    except ImportError:  # pragma: no cover - the store ships with the package
        return False
    return isinstance(store, HyMemoryStore)


def _best_first(pair: tuple[dict[str, Any], float]) -> tuple[float, str]:
    return (-pair[1], pair[0]["memory_id"])


def _branches(where: dict[str, Any]) -> list[dict[str, Any]]:
    """Split a top-level ``$or`` into disjoint plain filters (for non-native stores)."""
    if "$or" not in where:
        return [where]
    base = {k: v for k, v in where.items() if k != "$or"}
    return [{**base, **alt} for alt in where["$or"]]


class ProductivityRepository:
    """Create, change and look up the experiences and facts of one variant.

    Args:
        store: The variant's store (indexed on ``embed_text`` by default).
        config: Gives the collection names.
        variant: ``"working"`` or ``"coding"``.
    """

    def __init__(self, store: BaseStore, config: MemoryConfig, variant: str) -> None:
        self.store = store
        self.variant = variant
        self.native = _native(store)
        self._collections: dict[Kind, str] = {
            "fact": config.fact_collection(variant),
            "experience": config.experience_collection(variant),
        }
        #: Namespace labels of the collections (names with ``%``/``.`` escaped).
        self._labels: dict[Kind, str] = {k: encode_label(v) for k, v in self._collections.items()}

    # -- namespaces -------------------------------------------------------------------
    def fact_ns(self, user_id: str) -> tuple[str, str]:
        return (self._labels["fact"], encode_label(user_id))

    def experience_ns(self, user_id: str) -> tuple[str, str]:
        return (self._labels["experience"], encode_label(user_id))

    def _ns(self, kind: Kind, user_id: str) -> tuple[str, str]:
        return self.fact_ns(user_id) if kind == "fact" else self.experience_ns(user_id)

    @staticmethod
    def _index(value: dict[str, Any]) -> list[str] | Literal[False]:
        if value.get("status") != ACTIVE:
            return False
        return list(FACT_INDEX_FIELDS if value["kind"] == "fact" else EXPERIENCE_INDEX_FIELDS)

    # -- writes -----------------------------------------------------------------------
    def put(self, values: Sequence[dict[str, Any]], *, replace: bool = False) -> None:
        """Store experiences/facts in one batch (one embedding call for all of them).

        Each value needs ``kind``, ``memory_id``, ``user_id`` and ``status``; only active
        ones are indexed. ``replace`` marks values that overwrite an existing item.
        """
        if not values:
            return
        if replace and not self.native:
            for value in values:
                self.store.delete(self._ns(value["kind"], value["user_id"]), value["memory_id"])
        ops: list[PutOp] = []
        for value in values:
            ns = self._ns(value["kind"], value["user_id"])
            ops.append(PutOp(ns, value["memory_id"], dict(value), index=self._index(value)))
            if not replace:
                ops.append(PutOp(_ID_NS, value["memory_id"],
                                 {"user_id": value["user_id"], "kind": value["kind"]}, index=False))
        self.store.batch(ops)

    # -- reads ------------------------------------------------------------------------
    def get(self, memory_id: str) -> dict[str, Any] | None:
        """The stored value of ``memory_id`` (any status), or ``None``."""
        parsed = parse_id(memory_id)
        if parsed is None or parsed[1] != self.variant:
            return None
        entry = self.store.get(_ID_NS, memory_id)
        if entry is None:
            return None
        item = self.store.get(self._ns(parsed[0], entry.value["user_id"]), memory_id)
        return None if item is None else dict(item.value)

    def get_public(self, memory_id: str) -> dict[str, Any] | None:
        """The caller-facing dict of ``memory_id`` (see :func:`public_view`), or ``None``."""
        value = self.get(memory_id)
        return None if value is None else public_view(value)

    def get_many(self, ids: Iterable[str]) -> list[dict[str, Any]]:
        """Stored values of the ids that exist, in the given order (duplicates dropped)."""
        out: list[dict[str, Any]] = []
        for memory_id in dict.fromkeys(ids):
            value = self.get(memory_id)
            if value is not None:
                out.append(value)
        return out

    def search(self, kind: Kind, user_ids: Sequence[str], query: str, *,
               where: dict[str, Any], limit: int) -> list[tuple[dict[str, Any], float]]:
        """Vector top-``limit`` over the users' items, ``where`` applied before the top-k.

        Returns ``(value, cosine)`` pairs, best first. Unscored items (no vector, e.g.
        superseded) never appear.
        """
        return self.search_layers({kind: limit}, user_ids, query, where=where)[kind]

    def search_layers(self, limits: dict[Kind, int], user_ids: Sequence[str], query: str, *,
                      where: dict[str, Any]) -> dict[Kind, list[tuple[dict[str, Any], float]]]:
        """:meth:`search` of several kinds in one store batch (the query is embedded once).

        A native store answers several users in one search (``user_id $in``); other
        stores get one search per user, merged.
        """
        users = list(dict.fromkeys(user_ids))
        requests: list[tuple[tuple[str, ...], str, dict[str, Any], int]] = []
        owners: list[Kind] = []
        for kind, limit in limits.items():
            if self.native and len(users) > 1:
                requests.append(((self._labels[kind],), query,
                                 {**where, "user_id": {"$in": users}}, limit))
                owners.append(kind)
            else:
                requests += [(self._ns(kind, u), query, where, limit) for u in users]
                owners += [kind] * len(users)
        out: dict[Kind, list[tuple[dict[str, Any], float]]] = {kind: [] for kind in limits}
        for kind, hits in zip(owners, self._run(requests)):
            out[kind].extend(hits)
        return {kind: sorted(pairs, key=_best_first)[:limits[kind]] for kind, pairs in out.items()}

    def search_many(self, kind: Kind, requests: Sequence[tuple[str, str]], *,
                    where: dict[str, Any], limit: int) -> list[list[tuple[dict[str, Any], float]]]:
        """Several ``(user_id, query)`` searches in one store batch; one list each."""
        return self._run([(self._ns(kind, user_id), query, where, limit)
                          for user_id, query in requests])

    def few_or_nearest(self, kind: Kind, user_id: str, query: str, *, where: dict[str, Any],
                       limit: int) -> list[dict[str, Any]]:
        """Every match, newest first, when at most ``limit`` exist (no embedding call);
        otherwise the ``limit`` nearest to ``query``."""
        found = self.scan(kind, user_id, where, limit=limit + 1)
        if len(found) <= limit:
            return sorted(found, key=lambda v: (-v["memory_ts"], v["memory_id"]))
        return [value for value, _ in self.search(kind, [user_id], query, where=where, limit=limit)]

    def _run(self, requests: Sequence[tuple[tuple[str, ...], str, dict[str, Any], int]],
             ) -> list[list[tuple[dict[str, Any], float]]]:
        """One store batch for ``(prefix, query, filter, limit)`` requests (``$or`` split if needed)."""
        plans = [(ns, query, [where] if self.native else _branches(where), limit)
                 for ns, query, where, limit in requests]
        ops = [SearchOp(ns, filter=f or None, limit=limit, query=query)
               for ns, query, filters, limit in plans for f in filters]
        results = iter(self.store.batch(ops) if ops else [])
        out: list[list[tuple[dict[str, Any], float]]] = []
        for _, _, filters, limit in plans:
            merged: dict[str, tuple[dict[str, Any], float]] = {}
            for _ in filters:
                for hit in cast(list[SearchItem], next(results)):
                    if hit.score is not None and hit.key not in merged:
                        merged[hit.key] = (dict(hit.value), float(hit.score))
            out.append(sorted(merged.values(), key=_best_first)[:limit])
        return out

    def scan(self, kind: Kind, user_id: str, where: dict[str, Any], *,
             limit: int = _SCAN_LIMIT) -> list[dict[str, Any]]:
        """Stored values of ``user_id`` matching ``where`` (no ranking; at most ``limit``
        per ``$or`` branch on non-native stores)."""
        filters = [where] if self.native else _branches(where)
        seen: dict[str, dict[str, Any]] = {}
        for f in filters:
            for item in self._scan(self._ns(kind, user_id), f, limit):
                seen.setdefault(item.key, dict(item.value))
        return list(seen.values())

    def ancestors(self, fact: dict[str, Any], generations: int) -> list[dict[str, Any]]:
        """Facts ``fact`` superseded, up to ``generations`` back, oldest first."""
        found: dict[str, dict[str, Any]] = {}
        frontier = list(fact.get("supersedes") or [])
        for _ in range(max(0, generations)):
            nxt: list[str] = []
            for value in self.get_many(i for i in frontier if i not in found):
                found[value["memory_id"]] = value
                nxt.extend(value.get("supersedes") or [])
            frontier = nxt
            if not frontier:
                break
        return sorted(found.values(), key=lambda v: (v["memory_ts"], v["created_at"]))

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """Versions of an experience, or a fact and the facts it superseded; oldest first."""
        value = self.get(memory_id)
        if value is None:
            return []
        if value["kind"] == "fact":
            chain = [*self.ancestors(value, generations=_SCAN_LIMIT), value]
            return [event for v in chain
                    for event in (_fact_event(v), *(dict(e) for e in v.get("events") or []))]
        events = [dict(v) for v in value.get("versions") or []]
        events.append(experience_event(value))
        return events

    # -- deletes ----------------------------------------------------------------------
    def delete(self, memory_id: str, *, at: str | None = None) -> bool:
        """Remove one experience or fact; ``False`` when it did not exist.

        The facts a deleted fact superseded are not left pointing at a deleted id: when
        the deleted fact was itself superseded they pass to its successor, otherwise they
        become active again (status, ``superseded_by`` and vector restored). Either way
        they record a history event (``RESTORE`` / ``RELINK``).
        """
        value = self.get(memory_id)
        if value is None:
            return False
        self.store.delete(self._ns(value["kind"], value["user_id"]), memory_id)
        self.store.delete(_ID_NS, memory_id)
        if value["kind"] == "fact":
            self._release_predecessors(value, at or _now_iso())
        return True

    def _release_predecessors(self, deleted: dict[str, Any], now: str) -> None:
        """Re-activate (or relink to the successor) the facts ``deleted`` superseded."""
        deleted_id = deleted["memory_id"]
        found = {v["memory_id"]: v for v in self.get_many(deleted.get("supersedes") or [])}
        for v in self.scan("fact", deleted["user_id"], {"superseded_by": deleted_id}):
            found.setdefault(v["memory_id"], v)
        preds = [v for v in found.values()
                 if v.get("kind") == "fact" and v.get("superseded_by") == deleted_id]
        if not preds:
            return
        successor_id = deleted.get("superseded_by")
        successor = self.get(successor_id) if successor_id else None
        if successor is not None and successor.get("kind") != "fact":
            successor = None
        changed: list[dict[str, Any]] = []
        for pred in sorted(preds, key=lambda v: v["memory_id"]):
            if successor is not None:
                new = {**pred, "superseded_by": successor["memory_id"], "updated_at": now}
                op = "RELINK"
            else:
                new = {**pred, "status": ACTIVE, "superseded_by": None, "updated_at": now}
                op = "RESTORE"
            event = {
                "memory_id": pred["memory_id"], "op": op, "content": pred["statement"],
                "subject": pred.get("subject", ""), "status": new["status"],
                "superseded_by": new["superseded_by"], "deleted_successor": deleted_id,
                "supersedes": list(pred.get("supersedes") or []), "summary": pred.get("summary"),
                "memory_at": pred["memory_at"], "at": now, "request_id": "manual",
            }
            new["events"] = [*(pred.get("events") or []), event]
            changed.append(new)
        if successor is not None:
            moved = [v["memory_id"] for v in changed]
            kept = [i for i in successor.get("supersedes") or [] if i != deleted_id]
            changed.append({**successor, "supersedes": list(dict.fromkeys([*kept, *moved])),
                            "updated_at": now})
        self.put(changed, replace=True)

    def delete_all(self, user_id: str) -> int:
        """Remove every experience and fact of ``user_id``; returns the count."""
        removed = 0
        kinds: tuple[Kind, ...] = ("fact", "experience")
        for kind in kinds:
            for item in self._scan(self._ns(kind, user_id), {}):
                self.store.delete(_ID_NS, item.key)
                self.store.delete(item.namespace, item.key)
                removed += 1
        return removed

    def _scan(self, namespace: tuple[str, ...], where: dict[str, Any],
              limit: int = _SCAN_LIMIT) -> list[Item]:
        return list(self.store.search(namespace, filter=where or None, limit=limit))


def _now_iso() -> str:
    return iso(utcnow())


def _fact_event(value: dict[str, Any]) -> dict[str, Any]:
    return {
        "memory_id": value["memory_id"], "op": "SUPERSEDE" if value.get("supersedes") else "INSERT",
        "content": value["statement"], "subject": value.get("subject", ""),
        "status": value["status"], "superseded_by": value.get("superseded_by"),
        "supersedes": list(value.get("supersedes") or []), "summary": value.get("summary"),
        "memory_at": value["memory_at"], "at": value["created_at"],
        "request_id": value.get("request_id"),
    }


def experience_event(value: dict[str, Any]) -> dict[str, Any]:
    """The history entry describing the current version of an experience."""
    return {
        "memory_id": value["memory_id"], "op": value.get("last_op", "ADD"),
        "version": value.get("version", 1), "task": value["task"], "solution": value["solution"],
        "search_keys": list(value.get("search_keys") or []), "status": value["status"],
        "memory_at": value["memory_at"], "at": value["updated_at"],
        "request_id": value.get("request_id"),
    }
