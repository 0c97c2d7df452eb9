"""Experiences and facts of one productivity scene over a LangGraph ``BaseStore``.

One store per scene (``coding_memory.db`` for working, ``coding_memory_cv.db`` for
coding). The first namespace label of each layer is its vector collection name
(``docs/design.md#storage-and-scoping``):

* ``(config.experience_collection(scene), user)`` / id → an :class:`Experience`;
  ``task`` and each ``search_keys[*]`` are separate vectors (the store max-pools per item);
* ``(config.fact_collection(scene), user)`` / id → a :class:`Fact`; only ``embed_text``
  (``"subject: statement"``) is embedded, and only while the fact is active;
* ``("history", user)``, ``("memory_ids",)``, ``("revisions",)``: see :mod:`.base`.

Ids name their kind and scene (``fact_coding_<hex>``, ``exp_working_<hex>``), so the
client routes ``get`` / ``delete`` / ``history`` without opening every store.

Example:
    >>> from langgraph.store.memory import InMemoryStore
    >>> from hy_memory_langgraph.config import MemoryConfig
    >>> repo = ProductivityRepository(InMemoryStore(), MemoryConfig.from_env({}), "coding")
    >>> repo.namespace("fact", "u.1")
    ('coding_memory_working_facts_cv', 'u%2E1')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final, Literal, cast

from langgraph.store.base import BaseStore, SearchItem, SearchOp

from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.ids import random_id
from hy_memory_langgraph.repos.base import RecordRepository, split_or
from hy_memory_langgraph.repos.records import (
    Experience,
    Fact,
    Record,
    readable_record,
)
from hy_memory_langgraph.scenes import PRODUCTIVITY_SCENES

Kind = Literal["fact", "experience"]
_PREFIX: Final[dict[str, str]] = {"fact": "fact", "experience": "exp"}
_KIND_OF: Final[dict[str, Kind]] = {"fact": "fact", "exp": "experience"}
_ID_RE: Final = re.compile(rf"^(fact|exp)_({'|'.join(PRODUCTIVITY_SCENES)})_[0-9a-f]{{32}}$")

Hit = tuple[Record, float]
_Request = tuple[tuple[str, ...], str, dict[str, Any], int]


def new_id(kind: Kind, scene: str) -> str:
    """A fresh memory id naming its kind and scene, e.g. ``fact_coding_<32 hex>``."""
    return f"{_PREFIX[kind]}_{scene}_{random_id()}"


def parse_id(memory_id: str) -> tuple[Kind, str] | None:
    """``(kind, scene)`` of a productivity id, ``None`` for any other id."""
    match = _ID_RE.match(memory_id) if isinstance(memory_id, str) else None
    return (_KIND_OF[match.group(1)], match.group(2)) if match else None


def _best_first(hit: Hit) -> tuple[float, str]:
    return (-hit[1], hit[0].memory_id)


class ProductivityRepository(RecordRepository):
    """The experiences and facts of one productivity scene.

    Args:
        store: The scene's store (indexed on ``embed_text`` by default).
        config: Gives the collection names.
        scene: A productivity scene of the registry.
    """

    def __init__(self, store: BaseStore, config: MemoryConfig, scene: str) -> None:
        super().__init__(store, {"fact": config.fact_collection(scene),
                                 "experience": config.experience_collection(scene)}, "history")
        self.scene = scene

    def owns_id(self, memory_id: str, kind: str) -> bool:
        return parse_id(memory_id) == (kind, self.scene)

    # -- reads ------------------------------------------------------------------------
    def get(self, memory_id: str) -> Record | None:
        parsed = parse_id(memory_id)
        if parsed is None or parsed[1] != self.scene:
            return None
        return super().get(memory_id)

    def facts(self, ids: Sequence[str]) -> list[Fact]:
        return [r for r in self.get_many(ids) if isinstance(r, Fact)]

    def experiences(self, ids: Sequence[str]) -> list[Experience]:
        return [r for r in self.get_many(ids) if isinstance(r, Experience)]

    def search_layers(self, limits: dict[Kind, int], user_ids: Sequence[str], query: str, *,
                      where: dict[str, Any]) -> dict[Kind, list[Hit]]:
        """Vector top-``limit`` of several kinds over the users' records, in one store batch
        (the query is embedded once); ``where`` is applied before the top-k.

        Returns ``(record, cosine)`` pairs, best first. A store with ``$or`` support
        answers several users in one search (``user_id $in``); other stores get one
        search per user and ``$or`` branch, merged.
        """
        users = list(dict.fromkeys(user_ids))
        requests: list[_Request] = []
        owners: list[Kind] = []
        for kind, limit in limits.items():
            if self.caps.supports_or_filters and len(users) > 1:
                requests.append(((self.namespace(kind, "")[0],), query,
                                 {**where, "user_id": {"$in": users}}, limit))
                owners.append(kind)
            else:
                requests += [(self.namespace(kind, u), query, where, limit) for u in users]
                owners += [kind] * len(users)
        out: dict[Kind, list[Hit]] = {kind: [] for kind in limits}
        for kind, hits in zip(owners, self._run(requests)):
            out[kind].extend(hits)
        return {kind: sorted(hits, key=_best_first)[:limits[kind]] for kind, hits in out.items()}

    def search_many(self, kind: Kind, requests: Sequence[tuple[str, str]], *,
                    where: dict[str, Any], limit: int) -> list[list[Hit]]:
        """Several ``(user_id, query)`` searches in one store batch; one list each."""
        return self._run([(self.namespace(kind, user_id), query, where, limit)
                          for user_id, query in requests])

    def few_or_nearest(self, kind: Kind, user_id: str, query: str, *, where: dict[str, Any],
                       limit: int) -> list[Record]:
        """Every match, newest first, when at most ``limit`` exist (no embedding call);
        otherwise the ``limit`` nearest to ``query``."""
        found = self.scan(kind, user_id, where, limit=limit + 1)
        if len(found) <= limit:
            return sorted(found, key=lambda r: (-r.memory_ts, r.memory_id))
        hits = self.search_layers({kind: limit}, [user_id], query, where=where)[kind]
        return [record for record, _ in hits]

    def ancestors(self, supersedes: Sequence[str], generations: int) -> list[Fact]:
        """Facts reached through ``supersedes``, up to ``generations`` back, oldest first."""
        found: dict[str, Fact] = {}
        frontier = list(supersedes)
        for _ in range(max(0, generations)):
            nxt: list[str] = []
            for fact in self.facts([i for i in frontier if i not in found]):
                found[fact.memory_id] = fact
                nxt.extend(fact.supersedes)
            frontier = nxt
            if not frontier:
                break
        return sorted(found.values(), key=lambda f: (f.memory_ts, f.created_at))

    def _run(self, requests: Sequence[_Request]) -> list[list[Hit]]:
        """One store batch for ``(prefix, query, filter, limit)`` requests (``$or`` split
        where the store lacks it); every query is embedded in that batch's one call."""
        plans = [(ns, query, [where] if self.caps.supports_or_filters else split_or(where), limit)
                 for ns, query, where, limit in requests]
        ops = [SearchOp(ns, filter=f or None, limit=limit, query=query)
               for ns, query, filters, limit in plans for f in filters]
        results = iter(self.store.batch(ops) if ops else [])
        out: list[list[Hit]] = []
        for _, _, filters, limit in plans:
            merged: dict[str, Hit] = {}
            for _ in filters:
                for hit in cast(list[SearchItem], next(results)):
                    record = readable_record(hit.value) if hit.score is not None else None
                    if record is not None and hit.key not in merged:
                        merged[hit.key] = (record, float(hit.score))
            out.append(sorted(merged.values(), key=_best_first)[:limit])
        return out
