"""In-memory mirror of the indexed part of one scope: FAISS + namespace map.

A store keeps one mirror per scope it has searched (see :mod:`.scoped`). The mirror knows, for every live item that has vectors, its encoded namespace
and vector count, plus a sorted list of namespaces. That is enough to turn a
namespace prefix into the exact set of allowed vector ids in
``O(candidates + log namespaces)`` without touching SQL, and to detect when a
prefix covers everything (then FAISS scans unrestricted).

Example:
    >>> import numpy as np
    >>> m = Mirror(2)
    >>> m.apply({1: ("a.b", np.ones((2, 2), "float32")), 2: ("c", np.ones((1, 2), "float32"))})
    >>> m.allowed_for_prefix("a").tolist() == [1 << 20, (1 << 20) + 1]
    True
    >>> m.allowed_for_prefix("") is None
    True
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt

from hy_memory_langgraph.store.namespaces import prefix_range
from hy_memory_langgraph.store.vector.approximate import IvfPair
from hy_memory_langgraph.store.vector.index import IdArray, VectorIndex
from hy_memory_langgraph.store.vector.settings import ID_BYTES, POS_BITS, ApproximateSearch

# Estimated sizes: dict/set entries per item.
_ITEM_BYTES = 240
_BASE_BYTES = 4096

# (encoded namespace, raw vectors [n, dims]) or None when the item is gone.
ItemVectors = tuple[str, npt.NDArray[np.float32]] | None


class Mirror:
    """FAISS index plus item/namespace bookkeeping of one scope.

    Args:
        dims: Vector size.
        search_threads: OpenMP threads per FAISS search.
        metric: How vectors are compared (see :data:`.index.METRICS`).
        approximate: When the scope's index becomes approximate (``None``: never).
    """

    def __init__(self, dims: int, *, search_threads: int | None = 1, metric: str = "cosine",
                 approximate: ApproximateSearch | None = None) -> None:
        self.dims = dims
        self.search_threads = search_threads
        self.metric = metric
        self.approximate = approximate
        self.index = VectorIndex(dims, search_threads=search_threads, metric=metric, approximate=approximate)
        self._item_ns: dict[int, str] = {}
        self._item_nvec: dict[int, int] = {}
        self._ns_items: dict[str, set[int]] = {}
        self._ns_sorted: list[str] = []

    # ------------------------------------------------------------ bookkeeping

    def reset(self, index: VectorIndex, layout: Iterable[tuple[int, str, int]]) -> None:
        """Replace the index and the item layout ``(item_id, namespace, n_vectors)``."""
        self.index = index
        self._item_ns.clear()
        self._item_nvec.clear()
        self._ns_items.clear()
        for item_id, namespace, count in layout:
            self._remember(item_id, namespace, count, keep_sorted=False)
        self._ns_sorted = sorted(self._ns_items)

    def _remember(self, item_id: int, namespace: str, count: int, keep_sorted: bool = True) -> None:
        self._item_ns[item_id] = namespace
        self._item_nvec[item_id] = count
        members = self._ns_items.get(namespace)
        if members is None:
            self._ns_items[namespace] = members = set()
            if keep_sorted:
                bisect.insort(self._ns_sorted, namespace)
        members.add(item_id)

    def _forget(self, item_id: int) -> int:
        namespace = self._item_ns.pop(item_id, None)
        count = self._item_nvec.pop(item_id, 0)
        if namespace is not None:
            members = self._ns_items[namespace]
            members.discard(item_id)
            if not members:
                del self._ns_items[namespace]
                at = bisect.bisect_left(self._ns_sorted, namespace)
                del self._ns_sorted[at]
        return count

    def nbytes(self) -> int:
        """Estimated memory: vectors and ids in FAISS plus the Python bookkeeping (the
        vectors of a mapped snapshot are the file's pages, not counted)."""
        per_vector = self.dims * 4 + ID_BYTES
        return (self.index.ntotal * per_vector - self.index.mapped_bytes() + len(self._item_ns) * _ITEM_BYTES
                + _BASE_BYTES + self.index.overhead_bytes())

    def adopt_snapshot(self, base: IvfPair, item_ids: list[int], counts: list[int], namespaces: list[str]) -> None:
        """Serve an empty mirror from a mapped snapshot index holding these items
        (``counts[i]`` vectors of ``item_ids[i]``, in ``namespaces[i]``)."""
        if len(self._item_ns):
            raise ValueError("Mirror.adopt_snapshot fills an empty mirror")
        index = VectorIndex(self.dims, search_threads=self.search_threads, metric=self.metric,
                            approximate=self.approximate)
        index.adopt_snapshot(base, np.sort(self._expand(item_ids, counts)))
        self.reset(index, zip(item_ids, namespaces, counts, strict=True))

    def layout(self) -> tuple[list[int], list[int], list[str]]:
        """``(item_ids, vector counts, namespaces)`` of the indexed items."""
        item_ids = list(self._item_ns)
        return item_ids, [self._item_nvec[i] for i in item_ids], [self._item_ns[i] for i in item_ids]

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._item_ns

    def __len__(self) -> int:
        return len(self._item_ns)

    def load(self, item_ids: list[int], namespaces: list[str], vectors: npt.NDArray[np.float32], *,
             owned: bool = False) -> None:
        """Fill an empty mirror with one vector per item (row ``i`` of ``vectors`` is
        ``item_ids[i]``'s): the bulk path of a scope's first load. ``owned``: the caller
        hands ``vectors`` over (normalised in place, not copied)."""
        if len(self._item_ns):
            raise ValueError("Mirror.load fills an empty mirror; use apply() for changes")
        if not item_ids:
            return
        ids = np.asarray(item_ids, dtype=np.int64)
        self.index.add(ids << POS_BITS, vectors, owned=owned)
        self._item_ns = dict(zip(item_ids, namespaces, strict=True))
        self._item_nvec = dict.fromkeys(item_ids, 1)
        distinct = set(namespaces)
        if len(distinct) == 1:  # the usual scope: one namespace
            self._ns_items = {distinct.pop(): set(item_ids)}
        else:
            for item_id, namespace in self._item_ns.items():
                self._ns_items.setdefault(namespace, set()).add(item_id)
        self._ns_sorted = sorted(self._ns_items)

    def apply(self, updates: Mapping[int, ItemVectors]) -> None:
        """Replace the vectors of the given items (``None`` or no rows = remove)."""
        old_ids, old_counts = [], []
        for item_id in updates:
            count = self._forget(item_id)
            if count:
                old_ids.append(item_id)
                old_counts.append(count)
        self.index.remove(self._expand(old_ids, old_counts))
        new_ids, new_counts, blocks = [], [], []
        for item_id, state in updates.items():
            if state is None or len(state[1]) == 0:
                continue
            namespace, vectors = state
            self._remember(item_id, namespace, len(vectors))
            new_ids.append(item_id)
            new_counts.append(len(vectors))
            blocks.append(vectors)
        if blocks:
            self.index.add(self._expand(new_ids, new_counts), np.concatenate(blocks))

    # ------------------------------------------------------------ candidates

    @staticmethod
    def _expand(item_ids: list[int], counts: list[int]) -> IdArray:
        """Packed vector ids of items with ``counts`` vectors each."""
        if not item_ids:
            return np.empty(0, dtype=np.int64)
        ids = np.asarray(item_ids, dtype=np.int64)
        n = np.asarray(counts, dtype=np.int64)
        starts = np.cumsum(n) - n
        pos = np.arange(int(n.sum()), dtype=np.int64) - np.repeat(starts, n)
        return np.repeat(ids << POS_BITS, n) + pos

    def allowed_for_items(self, item_ids: Iterable[int]) -> IdArray:
        """Vector ids of those ``item_ids`` that have vectors."""
        known = [i for i in item_ids if i in self._item_nvec]
        return self._expand(known, [self._item_nvec[i] for i in known])

    def allowed_for_prefix(self, prefix: str) -> IdArray | None:
        """Vector ids under an encoded namespace prefix; ``None`` when that is all of them."""
        if not prefix:
            return None
        low, high = prefix_range(prefix)
        start = bisect.bisect_left(self._ns_sorted, low)
        stop = bisect.bisect_left(self._ns_sorted, high)
        spaces = self._ns_sorted[start:stop]
        if prefix in self._ns_items:
            spaces.append(prefix)
        if sum(len(self._ns_items[ns]) for ns in spaces) == len(self._item_ns):
            return None  # the prefix covers every indexed item: no selector needed
        members = [i for ns in spaces for i in self._ns_items[ns]]
        return self._expand(members, [self._item_nvec[i] for i in members])
