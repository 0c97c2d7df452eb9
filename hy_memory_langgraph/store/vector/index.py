"""The derived FAISS index: ``IndexIDMap2(IndexFlatIP)`` over L2-normalised vectors.

(With LangGraph's other distance types, ``inner_product`` indexes the raw vectors in
``IndexFlatIP`` and ``l2`` in ``IndexFlatL2``, scores following LangGraph's stores:
the inner product, and minus the Euclidean distance; higher is closer in all three.)

Vector ids pack the owning item id and the vector's position inside the item,
``(item_id << POS_BITS) | pos``, so the item of any hit is ``vid >> POS_BITS``
and no separate id map is needed. Inner products of normalised vectors are
cosine similarities. Search is exact: a flat scan over the whole index, over a
selector of allowed ids, or (for small candidate sets) numpy brute force over
the reconstructed candidate vectors. An index given :class:`.approximate.ApproximateSearch`
settings turns into an IVF index once it holds their ``min_vectors`` (see
:mod:`.approximate` for what then stays exact).

Example:
    >>> import numpy as np
    >>> index = VectorIndex(3)
    >>> index.add(np.array([pack(7, 0)]), np.array([[1.0, 0.0, 0.0]], dtype="float32"))
    >>> scores, vids = index.search(np.array([1.0, 0.0, 0.0], dtype="float32"), 1)
    >>> int(vids[0] >> POS_BITS), round(float(scores[0]), 3)
    (7, 1.0)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import numpy as np
import numpy.typing as npt

from hy_memory_langgraph.errors import (
    InvalidInputError,
)
from hy_memory_langgraph.store.vector.approximate import ApproximateSearch, build_ivf
from hy_memory_langgraph.threads import check_thread_count

__all__ = [
    "POS_BITS",
    "MAX_VECTORS_PER_ITEM",
    "BRUTE_FORCE_MAX",
    "METRICS",
    "VectorIndex",
    "pack",
    "normalize",
]

POS_BITS = 20
MAX_VECTORS_PER_ITEM = 1 << POS_BITS
BRUTE_FORCE_MAX = 8192  # candidate vectors below which numpy beats a selector scan

#: LangGraph's ``distance_type`` values the index ranks by.
METRICS = ("cosine", "inner_product", "l2")

FloatArray = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]


def pack(item_id: int, pos: int) -> int:
    """The FAISS id of vector ``pos`` of item ``item_id``."""
    if not 0 <= pos < MAX_VECTORS_PER_ITEM:
        raise InvalidInputError(f"an item can have at most {MAX_VECTORS_PER_ITEM} vectors")
    return (item_id << POS_BITS) | pos


def normalize(vectors: FloatArray) -> FloatArray:
    """Row-wise L2 normalisation (zero rows stay zero), as a new float32 array."""
    out = np.array(vectors, dtype=np.float32, copy=True, ndmin=2)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


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

    @property
    def is_approximate(self) -> bool:
        """Whether searches rank the nearest IVF lists only (see :mod:`.approximate`)."""
        return self._ivf

    @property
    def nlist(self) -> int:
        """IVF lists (0 while the index is exact)."""
        return int(self._index.nlist) if self._ivf else 0

    def overhead_bytes(self) -> int:
        """Memory beyond the per-vector cost: the IVF centroids."""
        return self.nlist * self.dims * 4

    def _prepare(self, vectors: FloatArray) -> FloatArray:
        if self.metric == "cosine":
            return normalize(vectors)
        return np.array(vectors, dtype=np.float32, copy=True, ndmin=2)

    @property
    def ntotal(self) -> int:
        return int(self._index.ntotal)

    def add(self, ids: IdArray, vectors: FloatArray) -> None:
        """Add raw vectors (normalised here for cosine) under ``ids``."""
        if len(ids) == 0:
            return
        data = self._prepare(vectors)
        if data.shape[1] != self.dims:
            raise InvalidInputError(f"vectors have {data.shape[1]} dims, the index has {self.dims}")
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        settings = self._approximate
        if settings is not None and not self._ivf and self.ntotal + len(ids) >= settings.min_vectors:
            self._become_approximate(ids, data)
            return
        self._index.add_with_ids(data, ids)

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
            self._index = build_ivf(faiss, data, ids, self.metric)
        self._ivf = True

    def remove(self, ids: IdArray) -> int:
        """Remove ``ids`` (unknown ids are ignored); returns how many were removed."""
        if len(ids) == 0 or self.ntotal == 0:
            return 0
        faiss = _faiss()
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        if self._ivf:  # a hash-table id map removes listed ids only
            return int(self._index.remove_ids(faiss.IDSelectorArray(len(ids), faiss.swig_ptr(ids))))
        return int(self._index.remove_ids(faiss.IDSelectorBatch(ids)))

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
            if allowed is not None and len(allowed) <= BRUTE_FORCE_MAX:
                return self._brute_force(q[0], k, allowed)
            if not self._ivf:
                return self._scan(q, k, allowed)
            return self._ivf_search(q, k, allowed, nprobe)

    def _ivf_search(self, q: FloatArray, k: int, allowed: IdArray | None,
                    nprobe: int | None) -> tuple[FloatArray, IdArray]:
        """Rank the nearest lists; every list when the candidates are a small share or
        the probed lists held fewer than ``k`` of them."""
        settings = self._approximate
        assert settings is not None
        eligible = self.ntotal if allowed is None else len(allowed)
        if allowed is None or eligible >= settings.exact_share * self.ntotal:
            found = self._scan(q, k, allowed, nprobe or settings.lists_to_probe(self.nlist))
            if len(found[1]) >= min(k, eligible):
                return found
        return self._scan(q, k, allowed, self.nlist)

    def _scan(self, q: FloatArray, k: int, allowed: IdArray | None,
              nprobe: int | None = None) -> tuple[FloatArray, IdArray]:
        """FAISS scan (flat, or the ``nprobe`` nearest IVF lists), over a selector of
        ``allowed`` ids when given."""
        eligible = self.ntotal if allowed is None else len(allowed)
        k = min(k, eligible)
        if k <= 0:
            return np.empty(0, np.float32), np.empty(0, np.int64)
        faiss = _faiss()
        selector = None
        if allowed is not None:
            selector = faiss.IDSelectorBatch(np.ascontiguousarray(allowed, dtype=np.int64))
        if self._ivf:
            params = faiss.SearchParametersIVF(sel=selector, nprobe=min(nprobe or 1, self.nlist))
        else:
            params = None if selector is None else faiss.SearchParameters(sel=selector)
        scores, vids = self._index.search(q, k, params=params)
        keep = vids[0] >= 0
        found = scores[0][keep]
        if self.metric == "l2":  # FAISS gives squared distances, nearest first
            found = -np.sqrt(np.maximum(found, 0.0)).astype(np.float32)
        return found, vids[0][keep]

    def _brute_force(
        self, q: FloatArray, k: int, allowed: IdArray
    ) -> tuple[FloatArray, IdArray]:
        if len(allowed) == 0 or k <= 0:
            return np.empty(0, np.float32), np.empty(0, np.int64)
        ids = np.ascontiguousarray(allowed, dtype=np.int64)
        stored = self._index.reconstruct_batch(ids)
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
