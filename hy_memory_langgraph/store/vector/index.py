"""The derived FAISS index: ``IndexIDMap2(IndexFlatIP)`` over L2-normalised vectors.

(With LangGraph's other distance types, ``inner_product`` indexes the raw vectors in
``IndexFlatIP`` and ``l2`` in ``IndexFlatL2``, scores following LangGraph's stores:
the inner product, and minus the Euclidean distance; higher is closer in all three.)

Vector ids pack the owning item id and the vector's position inside the item,
``(item_id << POS_BITS) | pos``, so the item of any hit is ``vid >> POS_BITS``
and no separate id map is needed. Inner products of normalised vectors are
cosine similarities. Search is exact: a flat scan over the whole index, over a
selector of allowed ids, or (for small candidate sets) numpy brute force over
the reconstructed candidate vectors. An index given :class:`.settings.ApproximateSearch`
settings turns into an IVF index once it holds their ``min_vectors`` (see
:mod:`.approximate` for what then stays exact).

Example:
    >>> import numpy as np
    >>> index = VectorIndex(3)
    >>> index.add(np.array([7 << POS_BITS]), np.array([[1.0, 0.0, 0.0]], dtype="float32"))
    >>> scores, vids = index.search(np.array([1.0, 0.0, 0.0], dtype="float32"), 1)
    >>> int(vids[0] >> POS_BITS), round(float(scores[0]), 3)
    (7, 1.0)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.openmp import check_thread_count
from hy_memory_langgraph.store.vector.approximate import IvfPair, build_ivf, rerank_depth
from hy_memory_langgraph.store.vector.settings import (
    ID_BYTES,
    METRICS,
    POS_BITS,
    ApproximateSearch,
)

BRUTE_FORCE_MAX = 8192  # candidate vectors below which numpy beats a selector scan

FloatArray = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]


def normalize(vectors: FloatArray) -> FloatArray:
    """``vectors`` (a writable 2-d float32 array) L2-normalised row by row, in place (zero
    rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    np.divide(vectors, norms, out=vectors, where=norms > 0)
    return vectors


def _writable_f32(vectors: FloatArray) -> bool:
    return (isinstance(vectors, np.ndarray) and vectors.dtype == np.float32 and vectors.ndim == 2
            and vectors.flags.writeable and vectors.flags.c_contiguous)


def _faiss() -> ModuleType:
    """The ``faiss`` module, imported on first use.

    Loading faiss starts its OpenMP runtime, which reads ``OMP_WAIT_POLICY`` and
    ``OMP_NUM_THREADS`` once, at load. Importing it with the first index (not with
    the package) lets ``hy_memory_langgraph.configure_threads`` or the ``hy-memory``
    command set them after ``import hy_memory_langgraph``.
    """
    import faiss

    return faiss


@contextmanager
def _omp_threads(threads: int | None) -> Iterator[None]:
    """Run FAISS calls of the calling thread with ``threads`` OpenMP threads.

    ``omp_set_num_threads`` sets the nthreads ICV of the calling thread's data
    environment only (OpenMP spec; checked for the libgomp that faiss bundles),
    so no lock is needed: searches in other threads keep their own setting. The
    caller's previous value is restored. ``None`` leaves the setting alone.
    """
    if threads is None:
        yield
        return
    faiss = _faiss()
    previous = faiss.omp_get_max_threads()
    if previous == threads:
        yield
        return
    faiss.omp_set_num_threads(threads)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(previous)


class VectorIndex:
    """Exact index keyed by packed vector ids (cosine unless told otherwise).

    Args:
        dims: Vector size.
        metric: One of :data:`METRICS`.
        search_threads: OpenMP threads FAISS may use for one search, set for the
            searching thread only (``None``: the OpenMP default, one per core).
            Even a single query fans out: faiss >= 1.14.2 splits an unrestricted
            scan of 10,000+ vectors over the threads, and ``IndexIDMap2`` maps
            result ids in a parallel loop.

        approximate: When (and how) the index becomes approximate; ``None``: never.

    Raises:
        ConfigError: ``search_threads`` is not a positive int or ``None``.
    """

    def __init__(self, dims: int, *, search_threads: int | None = 1, metric: str = "cosine",
                 approximate: ApproximateSearch | None = None) -> None:
        if metric not in METRICS:
            raise InvalidInputError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        faiss = _faiss()
        self.dims = dims
        self.metric = metric
        self.search_threads = check_thread_count(search_threads, "search_threads")
        flat = faiss.IndexFlatL2(dims) if metric == "l2" else faiss.IndexFlatIP(dims)
        self._index = faiss.IndexIDMap2(flat)
        self._approximate = approximate if approximate is not None and approximate.enabled else None
        self._ivf: bool = False
        self._pair: IvfPair | None = None  # the in-memory IVF index and its coded twin
        # A mapped snapshot (read-only IVF and twin) under an overlay: ``_index`` then holds
        # the vectors added since, ``_dead`` the snapshot's ids removed since.
        self._base_pair: IvfPair | None = None
        self._base_ids: IdArray = np.empty(0, np.int64)
        self._dead: set[int] = set()

    def adopt_snapshot(self, base: IvfPair, base_ids: IdArray) -> None:
        """Serve searches from a mapped, read-only IVF ``base`` holding ``base_ids``
        (sorted); later adds and removes go to an in-memory overlay."""
        if self.ntotal or self._approximate is None:
            raise ValueError("adopt_snapshot needs an empty index with approximate settings")
        self._base_pair, self._base_ids, self._dead = base, np.ascontiguousarray(base_ids, np.int64), set()
        self._ivf = True

    @property
    def _base(self) -> Any:
        """The mapped snapshot's full-vector IVF index, or ``None``."""
        return self._base_pair.exact if self._base_pair is not None else None

    @property
    def is_approximate(self) -> bool:
        """Whether searches rank the nearest IVF lists only (see :mod:`.approximate`)."""
        return self._ivf

    @property
    def is_mapped(self) -> bool:
        """Whether the index serves a mapped snapshot (see :meth:`adopt_snapshot`)."""
        return self._base is not None

    @property
    def nlist(self) -> int:
        """IVF lists (0 while the index is exact)."""
        if not self._ivf:
            return 0
        return int((self._base if self._base is not None else self._index).nlist)

    def overhead_bytes(self) -> int:
        """Memory beyond the per-vector cost: the IVF centroids (twice: the coded twin has
        its own), the twin's codes and id bookkeeping, and a mapped snapshot's ids."""
        pair = self._pair
        codes = int(pair.codes.ntotal) * (pair.code_bytes() + ID_BYTES) if pair is not None else 0
        return 2 * self.nlist * self.dims * 4 + codes + len(self._base_ids) * 8 + len(self._dead) * 64

    def ivf(self) -> IvfPair | None:
        """The in-memory IVF index and its twin (what a snapshot saves), or ``None`` when
        the index is exact or serves a mapped snapshot."""
        return self._pair if self._base is None else None

    def mapped_bytes(self) -> int:
        """Bytes of vectors read from a mapped snapshot's file rather than held in memory."""
        return (int(self._base.ntotal) - len(self._dead)) * self.dims * 4 if self._base is not None else 0

    def _prepare(self, vectors: FloatArray, owned: bool = False) -> FloatArray:
        """``vectors`` as float32 rows (normalised for cosine): a copy unless ``owned``
        and already a writable float32 array."""
        data = vectors if owned and _writable_f32(vectors) else np.array(vectors, dtype=np.float32, copy=True, ndmin=2)
        return normalize(data) if self.metric == "cosine" else data

    @property
    def ntotal(self) -> int:
        base = int(self._base.ntotal) - len(self._dead) if self._base is not None else 0
        return base + int(self._index.ntotal)

    def add(self, ids: IdArray, vectors: FloatArray, *, owned: bool = False) -> None:
        """Add raw vectors (normalised here for cosine) under ``ids``. ``owned``: the
        caller hands ``vectors`` over, so a writable float32 array is normalised in
        place instead of copied (a bulk load then holds its vectors once less)."""
        if len(ids) == 0:
            return
        data = self._prepare(vectors, owned)
        if data.shape[1] != self.dims:
            raise InvalidInputError(f"vectors have {data.shape[1]} dims, the index has {self.dims}")
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        settings = self._approximate
        if self._base is not None:  # the overlay of a mapped snapshot
            self._index.add_with_ids(data, ids)
            return
        if settings is not None and not self._ivf and self.ntotal + len(ids) >= settings.min_vectors:
            self._become_approximate(ids, data)
            return
        self._index.add_with_ids(data, ids)
        if self._pair is not None:
            self._pair.codes.add_with_ids(data, ids)

    def _become_approximate(self, ids: IdArray, data: FloatArray) -> None:
        """Replace the flat index by an IVF index over its vectors plus ``data``."""
        faiss = _faiss()
        if self.ntotal:
            old_ids = faiss.vector_to_array(self._index.id_map).astype(np.int64)
            old = faiss.rev_swig_ptr(faiss.downcast_index(self._index.index).get_xb(), self.ntotal * self.dims)
            data = np.concatenate([np.array(old, dtype=np.float32).reshape(-1, self.dims), data])
            ids = np.concatenate([old_ids, ids])
            self._index.reset()
        with _omp_threads(self.search_threads):
            pair = build_ivf(faiss, data, ids, self.metric)
        self._index, self._pair, self._ivf = pair.exact, pair, True

    def remove(self, ids: IdArray) -> int:
        """Remove ``ids`` (unknown ids are ignored); returns how many were removed."""
        if len(ids) == 0 or self.ntotal == 0:
            return 0
        faiss = _faiss()
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        if self._base is not None:
            return self._remove_mapped(ids)
        if self._ivf:  # a hash-table id map removes listed ids only
            assert self._pair is not None
            listed = faiss.IDSelectorArray(len(ids), faiss.swig_ptr(ids))
            self._pair.codes.remove_ids(listed)
            return int(self._index.remove_ids(listed))
        return int(self._index.remove_ids(faiss.IDSelectorBatch(ids)))

    def _remove_mapped(self, ids: IdArray) -> int:
        """Mask the snapshot's ``ids``, remove the overlay's."""
        in_base = np.isin(ids, self._base_ids)
        masked = {int(i) for i in ids[in_base]} - self._dead
        self._dead |= masked
        rest = np.ascontiguousarray(ids[~in_base])
        removed = int(self._index.remove_ids(_faiss().IDSelectorBatch(rest))) if len(rest) else 0
        return len(masked) + removed

    def search(
        self, query: FloatArray, k: int, allowed: IdArray | None = None, *, nprobe: int | None = None
    ) -> tuple[FloatArray, IdArray]:
        """Top-``k`` vectors by the metric's score, best first, optionally only among ``allowed``.

        Returns fewer than ``k`` hits only when fewer vectors are eligible. FAISS
        runs with :attr:`search_threads` OpenMP threads in the calling thread. On an
        approximate index ``nprobe`` overrides the settings' lists per search.
        """
        q = self._prepare(query)
        with _omp_threads(self.search_threads):
            if self._base is not None:
                return self._mapped_search(q, k, allowed, nprobe)
            if allowed is not None and len(allowed) <= BRUTE_FORCE_MAX:
                return self._brute_force(self._index, q[0], k, allowed)
            if not self._ivf:
                return self._scan(self._index, q, k, allowed)
            assert self._pair is not None
            return self._ivf_search(self._pair, q, k, allowed, nprobe, self.ntotal)

    def _ivf_search(self, pair: IvfPair, q: FloatArray, k: int, allowed: IdArray | None,
                    nprobe: int | None, total: int, exclude: IdArray | None = None) -> tuple[FloatArray, IdArray]:
        """Rank the nearest lists of ``pair`` (``total`` live vectors, ``exclude`` masked):
        the coded twin's scan picks candidates, their full vectors rank them; every list of
        the full-vector index (exact) when every list is to be probed, the candidates are a
        small share or the probed lists held fewer than ``k`` of them."""
        settings = self._approximate
        assert settings is not None
        index = pair.exact
        nlist = int(index.nlist)
        eligible = total if allowed is None else len(allowed)
        probe = nprobe or settings.lists_to_probe(nlist)
        if probe < nlist and (allowed is None or eligible >= settings.exact_share * total):
            picked = self._scan(pair.codes, q, rerank_depth(k), allowed, probe, exclude, eligible)[1]
            found = self._brute_force(index, q[0], k, picked)
            if len(found[1]) >= min(k, eligible):
                return found
        return self._scan(index, q, k, allowed, nlist, exclude, eligible)

    def _mapped_search(self, q: FloatArray, k: int, allowed: IdArray | None,
                       nprobe: int | None) -> tuple[FloatArray, IdArray]:
        """A mapped snapshot (dead ids masked) and its overlay searched, hits merged."""
        dead = np.fromiter(self._dead, np.int64, len(self._dead))
        base_allowed = overlay_allowed = None
        if allowed is not None:  # a changed snapshot item is dead in the file, live in the overlay
            in_base = np.isin(allowed, self._base_ids)
            is_dead = np.isin(allowed, dead) if len(dead) else np.zeros(len(allowed), bool)
            base_allowed, overlay_allowed = allowed[in_base & ~is_dead], allowed[~in_base | is_dead]
        base_total = int(self._base.ntotal) - len(dead)
        if base_allowed is not None and len(base_allowed) <= BRUTE_FORCE_MAX:
            base = self._brute_force(self._base, q[0], k, base_allowed)
        else:
            assert self._base_pair is not None
            base = self._ivf_search(self._base_pair, q, k, base_allowed, nprobe, base_total,
                                    dead if base_allowed is None and len(dead) else None)
        # the overlay is small: a selector scan (ids it does not hold are ignored)
        overlay = self._scan(self._index, q, k, overlay_allowed)
        scores, vids = np.concatenate([base[0], overlay[0]]), np.concatenate([base[1], overlay[1]])
        order = np.lexsort((vids, -scores))[:k]
        return scores[order], vids[order]

    def _scan(self, index: Any, q: FloatArray, k: int, allowed: IdArray | None, nprobe: int | None = None,
              exclude: IdArray | None = None, eligible: int | None = None) -> tuple[FloatArray, IdArray]:
        """FAISS scan of ``index`` (flat, or its ``nprobe`` nearest IVF lists), over a
        selector of ``allowed`` ids when given, or of every id but ``exclude``."""
        if eligible is None:
            eligible = int(index.ntotal) if allowed is None else len(allowed)
        k = min(k, eligible)
        if k <= 0:
            return np.empty(0, np.float32), np.empty(0, np.int64)
        faiss = _faiss()
        selector: Any = None
        keep_alive: list[Any] = []
        if allowed is not None:
            selector = faiss.IDSelectorBatch(np.ascontiguousarray(allowed, dtype=np.int64))
        elif exclude is not None and len(exclude):
            keep_alive.append(faiss.IDSelectorBatch(np.ascontiguousarray(exclude, dtype=np.int64)))
            selector = faiss.IDSelectorNot(keep_alive[0])
        if hasattr(index, "nlist"):
            params = faiss.SearchParametersIVF(sel=selector, nprobe=min(nprobe or 1, int(index.nlist)))
        else:
            params = None if selector is None else faiss.SearchParameters(sel=selector)
        scores, vids = index.search(q, k, params=params)
        keep = vids[0] >= 0
        found = scores[0][keep]
        if self.metric == "l2":  # FAISS gives squared distances, nearest first
            found = -np.sqrt(np.maximum(found, 0.0)).astype(np.float32)
        return found, vids[0][keep]

    def _brute_force(
        self, index: Any, q: FloatArray, k: int, allowed: IdArray
    ) -> tuple[FloatArray, IdArray]:
        if len(allowed) == 0 or k <= 0:
            return np.empty(0, np.float32), np.empty(0, np.int64)
        ids = np.ascontiguousarray(allowed, dtype=np.int64)
        stored = index.reconstruct_batch(ids)
        if self.metric == "l2":
            scores = -np.linalg.norm(stored - q, axis=1)
        else:
            scores = stored @ q
        if k < len(ids):
            top = np.argpartition(-scores, k - 1)[:k]
        else:
            top = np.arange(len(ids))
        order = top[np.argsort(-scores[top], kind="stable")]
        return scores[order].astype(np.float32), ids[order]
