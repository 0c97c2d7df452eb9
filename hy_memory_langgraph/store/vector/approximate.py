"""Approximate search for large scopes: an inverted-file (IVF) FAISS index.

An exact scan costs time in proportion to the scope (about 0.13 ms per 1,000
vectors of 384 dims on one core). A scope that reaches
:attr:`.settings.ApproximateSearch.min_vectors` vectors is indexed instead by an
``IndexIVFFlat``: the vectors are clustered into ``nlist`` lists (k-means on a
seeded sample) and a search ranks only the ``nprobe`` lists nearest the query,
exactly within them. The full vectors are kept (no compression), so any id can be
reconstructed for an exact re-rank of a small candidate set, and ids are added and
removed in place as the scope changes.

Beside it sits a twin with the same lists and ids whose vectors are coded with one
bit per dimension plus two correction factors (``IndexIVFRaBitQ``: each vector's offset
from its list's centroid, as signs; 56 bytes for 384 dims instead of 1,536; vectors of
fewer dimensions get more bits each, see :func:`code_bits`; queries coded with 4 bits): a probed search scans the twin for :func:`rerank_depth`
candidates, which are then ranked exactly on their full vectors, so the scores a
search returns are exact. At a million vectors the full-vector scan of 200 lists is
memory-bound (11.7 ms on one thread here); the twin's scan plus the re-rank takes
2.2 ms. The re-rank depth was chosen on 28k e5 vectors of real text by
cross-validation over the queries (``bench/ann_recall.py``): the smallest depth whose
recall@10 stays within 0.001 of the full-vector scan's at every probe count.

What stays exact (see :meth:`.index.VectorIndex.search`): a restricted search whose
candidates are few (numpy over the candidates' own vectors) or a small share of the
scope (every list scanned under the candidate selector), so a selective filter never
loses hits to lists that were not probed; and any approximate search that returns
fewer hits than asked for while enough candidates exist is run again exhaustively.

Example:
    >>> lists_for(1_000_000), lists_for(337)
    (2000, 37)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

#: Training points per list and the cap on the training sample (k-means cost).
_TRAIN_PER_LIST = 40
_KMEANS_ITERATIONS = 10
_SEED = 1234
#: Candidates the coded scan hands to the exact re-rank: at least this many, and at
#: least this factor times ``k`` (see the module docstring for how it was chosen).
_RERANK_MIN = 160
_RERANK_FACTOR = 16
#: Bits per code of the twin at least (one per dimension of 384-dim e5 vectors, the size
#: measured); smaller vectors get more bits per dimension, up to ``_MAX_BITS``.
_CODE_BITS_MIN = 384
_MAX_BITS = 8
#: Bits per dimension of the query's code during a scan (four gave the same recall as
#: eight on the real vectors, and scan faster).
_QUERY_BITS = 4


def code_bits(dims: int) -> int:
    """Bits per dimension of the twin's codes for ``dims``-dimensional vectors.

    Example:
        >>> code_bits(384), code_bits(1536), code_bits(128), code_bits(16)
        (1, 1, 3, 8)
    """
    return min(_MAX_BITS, max(1, math.ceil(_CODE_BITS_MIN / max(dims, 1))))


def rerank_depth(k: int) -> int:
    """Candidates a quantised scan returns for an exact top-``k``."""
    return max(_RERANK_MIN, _RERANK_FACTOR * k)


@dataclass(frozen=True)
class IvfPair:
    """An approximate index: the full-vector IVF and its coded twin (same lists, ids)."""

    exact: Any
    codes: Any

    def __post_init__(self) -> None:
        # A search may use several OpenMP threads (``search_threads``); FAISS's default
        # splits queries between them, so a single query would use one. Split its lists.
        for index in (self.exact, self.codes):
            index.parallel_mode = 1
        self.codes.qb = _QUERY_BITS

    def code_bytes(self) -> int:
        """Bytes per vector of the twin's codes."""
        return int(self.codes.code_size)


def lists_for(n: int) -> int:
    """IVF lists for ``n`` vectors: about ``2 * sqrt(n)``, at least 16."""
    return max(16, int(round(2 * math.sqrt(max(n, 1)))))


def build_ivf(faiss: Any, vectors: npt.NDArray[np.float32], ids: npt.NDArray[np.int64], metric: str) -> IvfPair:
    """An ``IndexIVFFlat`` over prepared ``vectors`` (already normalised for cosine) and
    its coded twin.

    Trained on a seeded sample of at most ``40 * nlist`` vectors, so the same data
    gives the same lists; ids are looked up through a hash table (any int64 id,
    removable, reconstructable). The twin reuses the trained lists (a copy of the
    coarse quantizer: no second clustering).
    """
    n, dims = vectors.shape
    nlist = min(lists_for(n), max(1, n // 4))
    faiss_metric = faiss.METRIC_L2 if metric == "l2" else faiss.METRIC_INNER_PRODUCT
    quantizer = faiss.IndexFlatL2(dims) if metric == "l2" else faiss.IndexFlatIP(dims)
    ivf = faiss.IndexIVFFlat(quantizer, dims, nlist, faiss_metric)
    ivf.cp.niter = _KMEANS_ITERATIONS
    ivf.cp.seed = _SEED
    ivf.cp.max_points_per_centroid = _TRAIN_PER_LIST
    ivf.cp.min_points_per_centroid = 1
    sample_size = min(n, _TRAIN_PER_LIST * nlist)
    sample = vectors[np.sort(np.random.default_rng(_SEED).choice(n, sample_size, replace=False))]
    ivf.train(sample)
    lists = faiss.clone_index(ivf.quantizer)
    codes = faiss.IndexIVFRaBitQ(lists, dims, nlist, faiss_metric, True, code_bits(dims))
    lists.this.disown()  # the twin owns (and frees) its copy of the quantizer
    codes.own_fields = True
    codes.train(sample)  # the copied quantizer is trained: no second clustering
    del sample
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    _, assigned = ivf.quantizer.search(vectors, 1)  # the twin's lists are the same
    members = _members(assigned.ravel(), nlist)
    for index in (ivf, codes):
        _fill(faiss, index, vectors, ids, members)
        index.set_direct_map_type(faiss.DirectMap.Hashtable)  # built from the filled lists
    return IvfPair(ivf, codes)


def _members(assigned: npt.NDArray[np.int64], nlist: int) -> list[tuple[int, npt.NDArray[np.intp]]]:
    """``(list, rows)`` of every non-empty list, the rows in their original order."""
    order = np.argsort(assigned, kind="stable")
    bounds = np.searchsorted(assigned[order], np.arange(nlist + 1))
    return [(int(lst), order[bounds[lst]:bounds[lst + 1]]) for lst in range(nlist)
            if bounds[lst + 1] > bounds[lst]]


def _fill(faiss: Any, index: Any, vectors: npt.NDArray[np.float32], ids: npt.NDArray[np.int64],
          members: list[tuple[int, npt.NDArray[np.intp]]]) -> None:
    """Add each list's vectors in one call, in their original order. FAISS's own ``add``
    appends one entry at a time and leaves each list with the spare capacity of its
    growth; a list written once is allocated at its size (a million 384-dim vectors: the
    pair kept 1,898 MB built by ``add``, 1,706 MB built here, and built in 16.6 s, not
    24.7 s: ``python -m bench.ivf_memory``, docs/benchmarks.md)."""
    lists, size = index.invlists, index.code_size
    for lst, rows in members:  # every array a named local: a pointer does not keep it alive
        block, listed = np.ascontiguousarray(vectors[rows]), np.ascontiguousarray(ids[rows])
        coded = np.empty((len(rows), size), dtype=np.uint8)
        list_nos = np.full(len(rows), lst, dtype=np.int64)
        index.encode_vectors(len(rows), faiss.swig_ptr(block), faiss.swig_ptr(list_nos),
                             faiss.swig_ptr(coded), False)
        lists.add_entries(lst, len(rows), faiss.swig_ptr(listed), faiss.swig_ptr(coded))
    index.ntotal = len(ids)
