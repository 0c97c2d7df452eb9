"""Keep a store object's :class:`~.mirror.Mirror` in step with SQLite.

* :meth:`IndexSync.open` loads ``<db>.faiss`` when its manifest matches this
  database and the change log still covers the gap, replays the log, and checks
  the indexed ids against SQL; otherwise (missing, stale, corrupt, dims
  mismatch) it rebuilds from the vectors table and logs a warning.
* :meth:`IndexSync.catch_up` replays the change log since the mirror's
  position: items whose latest change is one of ours come from the caller's
  local copy, the others are re-read from SQL. A log pruned past our position
  triggers a rebuild.
* :meth:`IndexSync.persist` writes the index atomically (see :mod:`.persist`).

Example:
    >>> from hy_memory_langgraph.store.mirror import Mirror
    >>> sync = IndexSync(Mirror(4), index_file=None, store_uid="u")
    >>> sync.mirror.seq
    0
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy.engine import Connection, Row

from hy_memory_langgraph.errors import StoreCorruptionError
from hy_memory_langgraph.store import persist, sql
from hy_memory_langgraph.store.mirror import ItemVectors, Mirror
from hy_memory_langgraph.store.vectors import POS_BITS, VectorIndex

__all__ = ["IndexSync"]

logger = logging.getLogger(__name__)


class IndexSync:
    """Loads, replays, rebuilds and persists one store object's mirror.

    Args:
        mirror: The mirror to maintain.
        index_file: ``<db>.faiss`` path, or ``None`` to keep the index in memory.
        store_uid: The database's uid (``hy_store_meta``), recorded in manifests.
    """

    def __init__(self, mirror: Mirror, *, index_file: Path | None, store_uid: str) -> None:
        self.mirror = mirror
        self.index_file = index_file
        self.store_uid = store_uid
        self.needs_rebuild = False

    # ------------------------------------------------------------ decoding

    def _decode(self, blob: bytes) -> np.ndarray:
        vector = np.frombuffer(blob, dtype="<f4")
        if vector.shape[0] != self.mirror.dims:
            raise StoreCorruptionError(
                f"a stored vector has {vector.shape[0]} dims, the index has {self.mirror.dims}"
            )
        return vector

    def _group(self, rows: Iterable[Row[Any]]) -> dict[int, tuple[str, np.ndarray]]:
        grouped: dict[int, tuple[str, list[tuple[int, np.ndarray]]]] = {}
        for row in rows:
            entry = grouped.setdefault(row.item_id, (row.namespace, []))
            entry[1].append((row.pos, self._decode(row.embedding)))
        return {
            item_id: (ns, np.stack([v for _, v in sorted(vecs, key=lambda p: p[0])]))
            for item_id, (ns, vecs) in grouped.items()
        }

    def load_items(self, conn: Connection, item_ids: list[int], now: int) -> dict[int, ItemVectors]:
        """Current vectors of ``item_ids`` from SQL (``None`` for gone/expired/unindexed)."""
        found: dict[int, ItemVectors] = dict.fromkeys(item_ids)
        found.update(self._group(sql.vectors_of(conn, now, item_ids)))
        return found

    # ------------------------------------------------------------ rebuild / open

    def rebuild(self, conn: Connection, now: int) -> None:
        """Rebuild the whole mirror from the vectors table."""
        index = VectorIndex(self.mirror.dims, search_threads=self.mirror.search_threads)
        counts: dict[int, list[Any]] = {}
        ids: list[int] = []
        blocks: list[np.ndarray] = []
        for row in sql.vectors_of(conn, now):
            counts.setdefault(row.item_id, [row.namespace, 0])[1] += 1
            ids.append((row.item_id << POS_BITS) | row.pos)
            blocks.append(self._decode(row.embedding))
            if len(blocks) >= 8192:
                index.add(np.asarray(ids, dtype=np.int64), np.stack(blocks))
                ids, blocks = [], []
        if blocks:
            index.add(np.asarray(ids, dtype=np.int64), np.stack(blocks))
        self.mirror.reset(index, ((i, ns, n) for i, (ns, n) in counts.items()))
        self.mirror.seq = sql.last_seq(conn)
        self.mirror.pending = max(1, index.ntotal)
        self.needs_rebuild = False

    def open(self, conn: Connection, now: int) -> None:
        """Initialise the mirror: reuse ``<db>.faiss`` if trustworthy, else rebuild."""
        high = sql.last_seq(conn)
        low, _ = sql.change_bounds(conn)
        inventory = sql.vector_inventory(conn, now)
        reason = self._try_load(conn, now, high, low, inventory)
        if reason is None:
            return
        if self.index_file is None:
            logger.info("HyMemoryStore: building the in-memory FAISS index from the database")
        elif reason != "missing" or any(row.is_live for row in inventory):
            logger.warning("HyMemoryStore: rebuilding the FAISS index from SQLite (%s)", reason)
        self.rebuild(conn, now)

    def _try_load(
        self, conn: Connection, now: int, high: int, low: int, inventory: list[Row[Any]]
    ) -> str | None:
        """Load and replay the persisted index; the reason it is unusable, or ``None``."""
        if self.index_file is None:
            return "missing"
        try:
            loaded = persist.load(self.index_file)
            if loaded is None:
                return "missing"
            data, manifest = loaded
            if manifest.store_uid != self.store_uid:
                return "index file belongs to another database"
            if manifest.dims != self.mirror.dims:
                return f"index has {manifest.dims} dims, expected {self.mirror.dims}"
            if manifest.seq > high or (manifest.seq < high and low > manifest.seq + 1):
                return f"stale index (at change {manifest.seq}, database at {high})"
            index = VectorIndex.from_bytes(data, self.mirror.dims, search_threads=self.mirror.search_threads)
        except StoreCorruptionError as exc:
            return f"corrupt index: {exc}"
        changed = sorted({row.item_id for row in sql.changes_since(conn, manifest.seq)})
        if changed:
            present = index.ids()
            index.remove(present[np.isin(present >> POS_BITS, np.asarray(changed, np.int64))])
            fresh = self._group(sql.vectors_of(conn, now, changed))
            for item_id, (_, vecs) in fresh.items():
                index.add((item_id << POS_BITS) + np.arange(len(vecs), dtype=np.int64), vecs)
        return self._adopt(index, inventory, high, replayed=len(changed))

    def _adopt(
        self, index: VectorIndex, inventory: list[Row[Any]], high: int, replayed: int
    ) -> str | None:
        live_ids = {(r.item_id << POS_BITS) | r.pos for r in inventory if r.is_live}
        all_ids = {(r.item_id << POS_BITS) | r.pos for r in inventory}
        indexed = set(index.ids().tolist())
        if live_ids - indexed or not (indexed - live_ids) <= all_ids:
            return "index ids do not match the vectors table"
        index.remove(np.fromiter(indexed - live_ids, dtype=np.int64))  # expired since saved
        layout: dict[int, list[Any]] = {}
        for row in inventory:
            if row.is_live:
                layout.setdefault(row.item_id, [row.namespace, 0])[1] += 1
        self.mirror.reset(index, ((i, ns, n) for i, (ns, n) in layout.items()))
        self.mirror.seq = high
        self.mirror.pending = replayed
        return None

    # ------------------------------------------------------------ catch-up

    def catch_up(
        self,
        conn: Connection,
        now: int,
        local: Mapping[int, ItemVectors] | None = None,
        mine: set[int] | None = None,
    ) -> None:
        """Apply every change after the mirror's position (cheap when none)."""
        mirror = self.mirror
        high = sql.last_seq(conn)
        if self.needs_rebuild or high < mirror.seq:
            self._rebuild_logged(conn, now, "index state was lost or the database went back")
            return
        if high == mirror.seq:
            return
        low, _ = sql.change_bounds(conn)
        if low > mirror.seq + 1:
            self._rebuild_logged(conn, now, "change log was pruned past this store's position")
            return
        latest: dict[int, int] = {}
        for row in sql.changes_since(conn, mirror.seq):
            latest[row.item_id] = row.seq
        updates: dict[int, ItemVectors] = {}
        reload: list[int] = []
        for item_id, seq in latest.items():
            if local is not None and mine is not None and seq in mine and item_id in local:
                updates[item_id] = local[item_id]
            else:
                reload.append(item_id)
        updates.update(self.load_items(conn, reload, now))
        self.apply(updates)
        mirror.seq = high

    def advance(self, seqs: Sequence[int], local: Mapping[int, ItemVectors]) -> bool:
        """Apply this store object's own batch without reading the change log back.

        Only when the batch's change-log rows directly follow the mirror's position (no
        other writer in between: sequence numbers are assigned in the write transaction
        and never reused) and ``local`` holds every item they name; otherwise nothing is
        applied and ``False`` says to :meth:`catch_up` instead.
        """
        mirror = self.mirror
        if self.needs_rebuild or not seqs:
            return False
        low, high = min(seqs), max(seqs)
        if low != mirror.seq + 1 or high - low + 1 != len(seqs) or len(local) != len(seqs):
            return False
        self.apply(local)
        mirror.seq = high
        return True

    def apply(self, updates: Mapping[int, ItemVectors]) -> None:
        """Apply updates; on failure the next catch-up rebuilds from SQL."""
        try:
            self.mirror.apply(updates)
        except Exception:
            self.needs_rebuild = True
            raise

    def _rebuild_logged(self, conn: Connection, now: int, reason: str) -> None:
        logger.warning("HyMemoryStore: rebuilding the FAISS index from SQLite (%s)", reason)
        self.rebuild(conn, now)

    # ------------------------------------------------------------ persistence

    def persist(self) -> bool:
        """Write the index next to the database; ``False`` when memory-only."""
        if self.index_file is None or self.needs_rebuild:
            return False
        mirror = self.mirror
        manifest = persist.Manifest(
            store_uid=self.store_uid,
            dims=mirror.dims,
            seq=mirror.seq,
            ntotal=mirror.index.ntotal,
            checksum="",
        )
        persist.save(self.index_file, mirror.index.to_bytes(), manifest)
        mirror.pending = 0
        return True

