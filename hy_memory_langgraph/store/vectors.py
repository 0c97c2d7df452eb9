"""The derived FAISS index: ``IndexIDMap2(IndexFlatIP)`` over L2-normalised vectors.

Vector ids pack the owning item id and the vector's position inside the item,
``(item_id << POS_BITS) | pos``, so the item of any hit is ``vid >> POS_BITS``
and no separate id map is needed. Inner products of normalised vectors are
cosine similarities. Search is exact: a flat scan over the whole index, over a
selector of allowed ids, or (for small candidate sets) numpy brute force over
the reconstructed candidate vectors.

Example:
    >>> import numpy as np
    >>> index = VectorIndex(3)
    >>> index.add(np.array([pack(7, 0)]), np.array([[1.0, 0.0, 0.0]], dtype="float32"))
    >>> scores, vids = index.search(np.array([1.0, 0.0, 0.0], dtype="float32"), 1)
    >>> int(vids[0] >> POS_BITS), round(float(scores[0]), 3)
    (7, 1.0)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import faiss
import numpy as np
import numpy.typing as npt

from hy_memory_langgraph.errors import InvalidInputError, StoreCorruptionError

__all__ = ["POS_BITS", "MAX_VECTORS_PER_ITEM", "BRUTE_FORCE_MAX", "VectorIndex", "pack", "normalize"]

POS_BITS = 20
MAX_VECTORS_PER_ITEM = 1 << POS_BITS
BRUTE_FORCE_MAX = 8192  # candidate vectors below which numpy beats a selector scan

FloatArray = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]

_THREADS_LOCK = threading.Lock()


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


@contextmanager
def _omp_threads(threads: int | None) -> Iterator[None]:
    """Run a FAISS call with ``threads`` OpenMP threads (``None`` = unchanged).

    A single-query flat scan is memory bound; OpenMP fan-out only adds overhead
    there, so stores search with one thread by default.
    """
    if threads is None:
        yield
        return
    with _THREADS_LOCK:
        previous = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(threads)
        try:
            yield
        finally:
            faiss.omp_set_num_threads(previous)


class VectorIndex:
    """Exact cosine index keyed by packed vector ids.

    Args:
        dims: Vector size.
        search_threads: OpenMP threads for a search (``None``: FAISS default).
    """

    def __init__(self, dims: int, *, search_threads: int | None = 1) -> None:
        self.dims = dims
        self.search_threads = search_threads
        self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(dims))

    @property
    def ntotal(self) -> int:
        return int(self._index.ntotal)

    def ids(self) -> IdArray:
        """All vector ids currently indexed."""
        return faiss.vector_to_array(self._index.id_map).astype(np.int64, copy=False)

    def add(self, ids: IdArray, vectors: FloatArray) -> None:
        """Add raw vectors (normalised here) under ``ids``."""
        if len(ids) == 0:
            return
        data = normalize(vectors)
        if data.shape[1] != self.dims:
            raise InvalidInputError(f"vectors have {data.shape[1]} dims, the index has {self.dims}")
        self._index.add_with_ids(data, np.ascontiguousarray(ids, dtype=np.int64))

    def remove(self, ids: IdArray) -> int:
        """Remove ``ids`` (unknown ids are ignored); returns how many were removed."""
        if len(ids) == 0 or self.ntotal == 0:
            return 0
        selector = faiss.IDSelectorBatch(np.ascontiguousarray(ids, dtype=np.int64))
        return int(self._index.remove_ids(selector))

    def search(
        self, query: FloatArray, k: int, allowed: IdArray | None = None
    ) -> tuple[FloatArray, IdArray]:
        """Top-``k`` vectors by cosine, best first, optionally only among ``allowed``.

        Returns fewer than ``k`` hits only when fewer vectors are eligible.
        """
        q = normalize(query)
        if allowed is not None and len(allowed) <= BRUTE_FORCE_MAX:
            return self._brute_force(q[0], k, allowed)
        eligible = self.ntotal if allowed is None else len(allowed)
        k = min(k, eligible)
        if k <= 0:
            return np.empty(0, np.float32), np.empty(0, np.int64)
        params = None
        if allowed is not None:
            selector = faiss.IDSelectorBatch(np.ascontiguousarray(allowed, dtype=np.int64))
            params = faiss.SearchParameters(sel=selector)
        with _omp_threads(self.search_threads):
            scores, vids = self._index.search(q, k, params=params)
        keep = vids[0] >= 0
        return scores[0][keep], vids[0][keep]

    def _brute_force(
        self, q: FloatArray, k: int, allowed: IdArray
    ) -> tuple[FloatArray, IdArray]:
        if len(allowed) == 0 or k <= 0:
            return np.empty(0, np.float32), np.empty(0, np.int64)
        ids = np.ascontiguousarray(allowed, dtype=np.int64)
        scores = self._index.reconstruct_batch(ids) @ q
        if k < len(ids):
            top = np.argpartition(-scores, k - 1)[:k]
        else:
            top = np.arange(len(ids))
        order = top[np.argsort(-scores[top], kind="stable")]
        return scores[order].astype(np.float32), ids[order]

    def to_bytes(self) -> npt.NDArray[np.uint8]:
        """Serialise the index (FAISS format)."""
        return faiss.serialize_index(self._index)

    @classmethod
    def from_bytes(
        cls, data: npt.NDArray[np.uint8], dims: int, *, search_threads: int | None = 1
    ) -> VectorIndex:
        """Load a serialised index; :class:`StoreCorruptionError` if unusable."""
        try:
            index = faiss.deserialize_index(np.ascontiguousarray(data, dtype=np.uint8))
        except RuntimeError as exc:
            raise StoreCorruptionError(f"FAISS index is unreadable: {exc}") from exc
        if index.d != dims:
            raise StoreCorruptionError(f"FAISS index has {index.d} dims, expected {dims}")
        if not isinstance(index, faiss.IndexIDMap2):
            raise StoreCorruptionError(f"FAISS index is a {type(index).__name__}, not IndexIDMap2")
        loaded = cls(dims, search_threads=search_threads)
        loaded._index = index
        return loaded
