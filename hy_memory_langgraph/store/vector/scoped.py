"""Per-scope vector indexes of one store object, loaded lazily and kept in step.

The database is the source of truth for every vector. A store object keeps an
exact FAISS index (a :class:`~.mirror.Mirror`) only for the scopes it has
searched — a scope is a namespace's first two labels, e.g. one user's chat
memories — in a byte-bounded LRU :class:`~.cache.IndexCache`:

* **Load**: the first search of a scope reads its live vectors with one query
  (``items.scope`` is indexed) inside the search's read transaction.
* **Catch up**: before a search, the change log since this object's position
  ``seq`` is read; changed items of *cached* scopes are re-read (or taken from
  the writer's own copy) and applied. Scopes not cached need nothing: they load
  fresh. A log pruned past ``seq`` just empties this object's cache entries.
* **Snapshots**: an approximate scope read from the database is saved (with
  ``snapshots``); a later cold open maps the saved index and replays the log
  since it instead of rebuilding (see :mod:`.snapshot`).
* **Evict**: the cache drops least recently used scopes beyond its budget.

Candidates are fixed first (a prefix inside a scope, the scopes under a shorter
prefix, or the rows a filter selected in SQL), each scope is ranked (exactly, or
approximately in a scope past the ``approximate`` threshold: see
:mod:`.approximate`) and the per-scope top-k lists are merged.

Example:
    >>> from hy_memory_langgraph.store.vector.cache import IndexCache
    >>> scoped = ScopedIndex(4, IndexCache(1 << 20))
    >>> scoped.seq, len(scoped.cache)
    (0, 0)
"""

from __future__ import annotations

import ctypes
import functools
import gc
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from sqlalchemy.engine import Connection, Row

from hy_memory_langgraph.errors import StoreCorruptionError
from hy_memory_langgraph.store.schema.tables import scope_of
from hy_memory_langgraph.store.sql import statements as sql
from hy_memory_langgraph.store.vector.cache import IndexCache
from hy_memory_langgraph.store.vector.index import FloatArray, IdArray
from hy_memory_langgraph.store.vector.mirror import ItemVectors, Mirror
from hy_memory_langgraph.store.vector.settings import ApproximateSearch
from hy_memory_langgraph.store.vector.snapshot import Snapshot, SnapshotDir
from hy_memory_langgraph.store.vector.targets import Target

#: Own log positions a writer may leave for a later catch-up (:meth:`ScopedIndex.defer`).
PENDING_MAX = 4096


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector around a bulk load.

    Loading a scope allocates a row object per vector; every few hundred allocations
    start a collection, and a full one walks every object of the process (measured:
    40 ms for 20,000 rows with the collector paused, 130 ms when a full collection
    hits). Nothing the load allocates is cyclic garbage. The collector is resumed only
    if it was running before.
    """
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


#: Rows whose vectors are copied into a scope's array at a time (a 96 MB chunk at 384 dims).
_FILL_CHUNK = 65536
#: A load that leaves at least this many bytes of vectors returns freed heap to the OS.
_TRIM_AFTER_BYTES = 64 << 20
#: A snapshot whose scope saw more changes than this (items, at least _OVERLAY_MIN) is
#: rebuilt from the database rather than served with an overlay.
_OVERLAY_MIN = 1000
_OVERLAY_SHARE = 0.1


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` (``None`` elsewhere)."""
    try:
        return ctypes.CDLL(None).malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


def _return_freed_memory() -> None:
    """Give the heap pages a bulk load freed back to the OS.

    Loading a scope holds its rows twice for a moment (the fetched rows, then the
    index); freed, the rows' memory stays in glibc's arenas and counts in the RSS
    (measured on 200,000 vectors of 384 dims from SQLite: 785 MB after the load
    without it, 462 MB with it, for a 349 MB index estimate). ``malloc_trim(0)``
    returns it; it changes no allocation policy.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


class ScopedIndex:
    """The per-scope indexes of one store object.

    Args:
        dims: Vector size.
        cache: Where the scope indexes live (shared with other stores).
        search_threads: OpenMP threads per FAISS search.
        metric: How vectors are compared (see :data:`.index.METRICS`).
        approximate: When a scope's index becomes approximate (``None``: never).
        snapshot_dir: Where approximate scope indexes are saved and mapped from when
            ``approximate.snapshot_dir`` names no folder (the store passes the folder
            beside its SQLite file; ``None``: nowhere, every cold open rebuilds them;
            see :mod:`.snapshot`).
        store_uid: The store's id, which the snapshots carry (``None``: no snapshots).
    """

    def __init__(self, dims: int, cache: IndexCache, *, search_threads: int | None = 1,
                 metric: str = "cosine", approximate: ApproximateSearch | None = None,
                 snapshot_dir: Path | None = None, store_uid: str | None = None) -> None:
        self.dims = dims
        self.approximate = approximate
        self.snapshots: SnapshotDir | None = None
        if approximate is not None and approximate.enabled and approximate.snapshots and store_uid:
            directory = approximate.snapshot_dir if approximate.snapshot_dir is not None else snapshot_dir
            if directory is not None:
                self.snapshots = SnapshotDir(directory, store_uid=store_uid)
        self.cache = cache
        self.search_threads = search_threads
        self.metric = metric
        self.owner = uuid.uuid4().hex
        self.seq = 0
        self.pending: set[int] = set()  # own log positions after seq, already applied

    # ------------------------------------------------------------ loading

    def _decode(self, blob: bytes) -> FloatArray:
        vector = np.frombuffer(blob, dtype="<f4")
        if vector.shape[0] != self.dims:
            raise StoreCorruptionError(f"a stored vector has {vector.shape[0]} dims, the index has {self.dims}")
        return vector

    def _group(self, rows: Iterable[Row[object]]) -> dict[int, ItemVectors]:
        grouped: dict[int, tuple[str, list[tuple[int, FloatArray]]]] = {}
        for item_id, pos, namespace, embedding in rows:  # unpacked: many rows, attribute reads cost
            entry = grouped.setdefault(item_id, (namespace, []))
            entry[1].append((pos, self._decode(embedding)))
        return {
            item_id: (ns, np.stack([v for _, v in sorted(vecs, key=lambda p: p[0])]))
            for item_id, (ns, vecs) in grouped.items()
        }

    def mirror(self, conn: Connection, now: int, scope: str) -> Mirror:
        """The index of ``scope``, loaded from the database when not cached."""
        key = (self.owner, scope)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        mirror = self._mapped(conn, now, scope) if self.snapshots is not None else None
        if mirror is None:
            mirror = self._load(conn, now, scope)
        self.cache.put(key, mirror)
        return mirror

    def _new_mirror(self) -> Mirror:
        return Mirror(self.dims, search_threads=self.search_threads, metric=self.metric,
                      approximate=self.approximate)

    def _load(self, conn: Connection, now: int, scope: str) -> Mirror:
        """The scope read from the database (and, when its index is approximate, saved)."""
        mirror = self._new_mirror()
        seq = sql.last_seq(conn)  # read first: replaying from here covers whatever the rows miss
        with _collector_paused():
            count, top = sql.scope_size(conn, now, scope)
            columns = self._columns(conn, now, scope, count) if top == 0 else None
            if columns is None:  # items of several vectors: grouped per item
                mirror.apply(self._group(sql.vectors_of_scope(conn, now, scope)))
            else:  # one vector per item: load in bulk, one page of rows held at a time
                item_ids, namespaces, matrix = columns
                del columns
                mirror.load(item_ids, namespaces, matrix, owned=True)
                del matrix
        if mirror.nbytes() >= _TRIM_AFTER_BYTES:
            _return_freed_memory()
        ivf = mirror.index.ivf()
        if ivf is not None and self.snapshots is not None:
            ids, counts, spaces = mirror.layout()
            self.snapshots.write(scope, ivf, item_ids=ids, counts=counts, namespaces=spaces, seq=seq,
                                 dims=self.dims, metric=self.metric)
        return mirror

    def _mapped(self, conn: Connection, now: int, scope: str) -> Mirror | None:
        """The scope from its snapshot plus the changes logged since, or ``None`` when
        there is no usable snapshot or too much changed since it."""
        assert self.snapshots is not None
        snap = self.snapshots.read(scope, dims=self.dims, metric=self.metric)
        if snap is None:
            return None
        low, high = sql.change_bounds(conn)
        if snap.seq > high or (high > snap.seq and low > snap.seq + 1):  # the log no longer covers it
            self.snapshots.discard(scope)
            return None
        latest = {int(item_id): str(namespace) for _, item_id, namespace in sql.changes_since(conn, snap.seq)}
        mirror = self._new_mirror()
        mirror.adopt_snapshot(snap.index, snap.item_ids.tolist(), snap.counts.tolist(), snap.namespaces)
        touched = [i for i, ns in latest.items() if i in mirror or (ns and scope_of(ns) == scope)]
        if len(touched) > max(_OVERLAY_MIN, _OVERLAY_SHARE * len(mirror)):
            return None  # a rebuild (and a new snapshot) beats a large overlay
        return self._replay(conn, now, scope, snap, mirror, touched)

    def _replay(self, conn: Connection, now: int, scope: str, snap: Snapshot, mirror: Mirror,
                touched: list[int]) -> Mirror:
        fresh = self._group(sql.vectors_of(conn, now, touched)) if touched else {}
        updates = {i: v if v is not None and scope_of(v[0]) == scope else None
                   for i, v in ((i, fresh.get(i)) for i in touched)}
        removed = any(v is None and i in mirror for i, v in updates.items())
        mirror.apply(updates)
        if removed:  # the file holds vectors of an item that is gone: erase it
            self.snapshots.discard(scope)  # type: ignore[union-attr]
        return mirror

    def discard_snapshots(self, scopes: Iterable[str]) -> None:
        """Remove the snapshots of ``scopes`` (items were removed from them)."""
        if self.snapshots is not None:
            for scope in set(scopes):
                self.snapshots.discard(scope)

    def _columns(self, conn: Connection, now: int, scope: str,
                 count: int) -> tuple[list[int], list[str], FloatArray] | None:
        """Item ids, namespaces and a new ``[n, dims]`` array of the scope's stored vectors
        (every blob checked for its size), read a page of rows at a time into an array
        made for ``count`` vectors, so the load never holds every row beside the array
        (a 1M scope: every row held was about 1.5 GB more at the peak). ``None`` when an
        item of several vectors shows up (written since ``count`` was read)."""
        matrix = np.empty((count, self.dims), dtype=np.float32)
        item_ids: list[int] = []
        spaces: dict[str, str] = {}  # one string per namespace, not one per row
        namespaces: list[str] = []
        beyond: list[FloatArray] = []  # rows written since ``count`` was read
        for page in sql.scope_pages(conn, now, scope, _FILL_CHUNK):
            blobs: list[bytes] = []
            at = len(item_ids)
            for item_id, pos, namespace, embedding in page:  # unpacked: attribute reads cost
                if pos:
                    return None
                item_ids.append(int(item_id))
                namespaces.append(spaces.setdefault(namespace, namespace))
                blobs.append(embedding)
            block = self._block(blobs)
            fits = max(0, min(len(page), count - at))
            matrix[at:at + fits] = block[:fits]
            if fits < len(page):
                beyond.append(block[fits:].copy())
        if beyond:
            matrix = np.concatenate([matrix, *beyond])
        return item_ids, namespaces, matrix[:len(item_ids)]

    def _block(self, blobs: list[bytes]) -> FloatArray:
        """The ``[n, dims]`` vectors of a page's blobs (a view of their joined bytes)."""
        size = self.dims * 4
        sizes = set(map(len, blobs))
        if sizes - {size}:
            raise StoreCorruptionError(f"a stored vector has {min(sizes - {size}) // 4} dims, "
                                       f"the index has {self.dims}")
        return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(-1, self.dims)

    def close(self) -> None:
        self.cache.drop_owner(self.owner)

    # ------------------------------------------------------------ catch-up

    def open(self, conn: Connection) -> None:
        """Start at the log's end: nothing is cached yet, so nothing needs replaying."""
        self.seq = sql.last_seq(conn)

    def catch_up(
        self,
        conn: Connection,
        now: int,
        local: Mapping[int, ItemVectors] | None = None,
        mine: set[int] | None = None,
    ) -> None:
        """Apply the changes after ``seq`` to the cached scopes (cheap when none)."""
        high = sql.last_seq(conn)
        if high == self.seq:
            return
        low, _ = sql.change_bounds(conn)
        if high < self.seq or low > self.seq + 1:
            self.cache.drop_owner(self.owner)  # position lost: reload scopes lazily
            self.seq, self.pending = high, set()
            return
        latest: dict[int, tuple[int, str]] = {}
        for seq, item_id, namespace in sql.changes_since(conn, self.seq):  # unpacked: many rows
            latest[item_id] = (seq, scope_of(namespace))
        self._apply_changes(conn, now, latest, local or {}, mine or set())
        self.seq, self.pending = high, set()

    def advance(self, seqs: Sequence[int], local: Mapping[int, ItemVectors]) -> bool:
        """Apply this object's own write without reading the change log back.

        Only when the write's log rows directly follow ``seq`` (so nobody else wrote in
        between: positions are assigned in the write transaction and never reused) and
        ``local`` names one item per row; otherwise nothing changes and ``False`` says
        to :meth:`catch_up` instead.
        """
        if not seqs:
            return False
        low, high = min(seqs), max(seqs)
        if low != self.seq + 1 or high - low + 1 != len(seqs) or len(local) != len(seqs):
            return False
        self._apply_local(local)
        self.seq = high
        return True

    def defer(self, seqs: Sequence[int], local: Mapping[int, ItemVectors]) -> bool:
        """Apply this object's own write now and leave the other writers' changes before
        it to the next :meth:`catch_up` (every search starts with one), which skips these
        positions: a write does not pay for reading what others wrote meanwhile.

        ``False`` (nothing changed): ``local`` does not name one item per log row, or
        :data:`PENDING_MAX` positions would wait (a process that only writes catches up
        then, so the set stays bounded).
        """
        if not seqs or len(local) != len(seqs) or len(self.pending) + len(seqs) > PENDING_MAX:
            return False
        self._apply_local(local)
        self.pending.update(seqs)
        return True

    def _apply_local(self, local: Mapping[int, ItemVectors]) -> None:
        by_scope: dict[str, dict[int, ItemVectors]] = {}
        for item_id, vectors in local.items():
            if vectors is not None:
                by_scope.setdefault(scope_of(vectors[0]), {})[item_id] = vectors
        self._apply(by_scope)
        self.forget(item_id for item_id, vectors in local.items() if vectors is None)

    def _apply(self, by_scope: Mapping[str, Mapping[int, ItemVectors]]) -> None:
        """Apply item updates to the cached scopes they belong to (others load them later)."""
        for scope, updates in by_scope.items():
            mirror = self.cache.peek((self.owner, scope))
            if mirror is not None:
                mirror.apply(updates)
                self.cache.resize((self.owner, scope))

    def _apply_changes(self, conn: Connection, now: int, latest: dict[int, tuple[int, str]],
                       local: Mapping[int, ItemVectors], mine: set[int]) -> None:
        by_scope: dict[str, dict[int, ItemVectors]] = {}
        reload: list[int] = []
        for item_id, (seq, scope) in latest.items():
            if seq in self.pending or self.cache.peek((self.owner, scope)) is None:
                continue  # (pending: this object's own change, applied when written)
            if seq in mine and item_id in local:
                by_scope.setdefault(scope, {})[item_id] = local[item_id]
            else:
                reload.append(item_id)
        fresh = self._group(sql.vectors_of(conn, now, reload)) if reload else {}
        for item_id in reload:
            by_scope.setdefault(latest[item_id][1], {})[item_id] = fresh.get(item_id)
        self._apply(by_scope)

    def forget(self, item_ids: Iterable[int]) -> None:
        """Drop items (expired or deleted) from whichever cached scope holds them."""
        wanted = set(item_ids)
        if not wanted:
            return
        for key in self.cache.keys_of(self.owner):
            mirror = self.cache.peek(key)
            gone = [i for i in wanted if mirror is not None and i in mirror]
            if gone and mirror is not None:
                mirror.apply(dict.fromkeys(gone))
                self.cache.resize(key)

    # ------------------------------------------------------------ search

    def search(
        self, conn: Connection, now: int, query: FloatArray, k: int, targets: list[Target]
    ) -> tuple[FloatArray, IdArray, int]:
        """Top-``k`` vectors over ``targets`` (best first) and how many were eligible."""
        all_scores: list[FloatArray] = []
        all_ids: list[IdArray] = []
        eligible = 0
        for target in targets:
            mirror = self.mirror(conn, now, target.scope)
            allowed = _allowed(mirror, target)
            eligible += mirror.index.ntotal if allowed is None else len(allowed)
            if k > 0 and (allowed is None or len(allowed)):
                scores, vids = mirror.index.search(query, k, allowed)
                all_scores.append(scores)
                all_ids.append(vids)
        if not all_scores:
            return np.empty(0, np.float32), np.empty(0, np.int64), eligible
        scores = np.concatenate(all_scores)
        vids = np.concatenate(all_ids)
        order = np.lexsort((vids, -scores))[:k]
        return scores[order], vids[order], eligible


def _allowed(mirror: Mirror, target: Target) -> IdArray | None:
    if target.item_ids is not None:
        return mirror.allowed_for_items(target.item_ids)
    if target.prefix is not None:
        return mirror.allowed_for_prefix(target.prefix)
    return None

