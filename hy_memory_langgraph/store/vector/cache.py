"""A byte-bounded LRU cache of per-scope vector indexes, shared by stores.

Each entry is one scope's :class:`~.mirror.Mirror` (FAISS index plus its
namespace map), keyed by ``(owner, scope)`` where the owner is one store
object. When the estimated size of all entries exceeds the budget, the least
recently used entries are dropped (never the one just used, so a single scope
larger than the budget still serves its search). Dropping is always safe: the
database holds every vector and the scope is loaded again on its next search.

The budget comes from ``MEMORY_INDEX_CACHE_MB`` (default 1024) for the
process-wide :func:`shared_index_cache`; a client gives its stores a cache of
``MemoryConfig.index_cache_mb``.

Example:
    >>> from hy_memory_langgraph.store.vector.mirror import Mirror
    >>> cache = IndexCache(max_bytes=1)
    >>> cache.put(("s", "a"), Mirror(4)); cache.put(("s", "b"), Mirror(4))
    >>> cache.get(("s", "a")) is None, cache.get(("s", "b")) is not None
    (True, True)
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import TYPE_CHECKING, Final

from hy_memory_langgraph.config import index_cache_mb

if TYPE_CHECKING:  # the vector side (NumPy, FAISS) loads with the first store opened with an index
    from hy_memory_langgraph.store.vector.mirror import Mirror

MB: Final = 1 << 20
_shared: IndexCache | None = None
_shared_lock = threading.Lock()

Key = tuple[Hashable, str]


class IndexCache:
    """Scope indexes of any number of stores under one byte budget.

    Args:
        max_bytes: Budget for the estimated size of every cached index.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max(0, int(max_bytes))
        self._entries: OrderedDict[Key, Mirror] = OrderedDict()
        self._sizes: dict[Key, int] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        self.loads = 0
        self.hits = 0
        self.evictions = 0

    @classmethod
    def from_mb(cls, megabytes: float) -> IndexCache:
        return cls(int(megabytes * MB))

    @property
    def nbytes(self) -> int:
        """Estimated bytes held now."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Key) -> Mirror | None:
        """The cached index (marked most recently used), or ``None``."""
        with self._lock:
            mirror = self._entries.get(key)
            if mirror is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            return mirror

    def peek(self, key: Key) -> Mirror | None:
        """The cached index without touching its recency."""
        return self._entries.get(key)

    def put(self, key: Key, mirror: Mirror) -> None:
        """Add (or replace) an entry, then evict down to the budget."""
        with self._lock:
            self._drop(key)
            self._entries[key] = mirror
            self._sizes[key] = mirror.nbytes()
            self._bytes += self._sizes[key]
            self.loads += 1
            self._evict(keep=key)

    def resize(self, key: Key) -> None:
        """Re-estimate an entry after it changed, then evict down to the budget."""
        with self._lock:
            mirror = self._entries.get(key)
            if mirror is None:
                return
            size = mirror.nbytes()
            self._bytes += size - self._sizes[key]
            self._sizes[key] = size
            self._evict(keep=key)

    def keys_of(self, owner: Hashable) -> list[Key]:
        """The keys of one store's entries."""
        with self._lock:
            return [k for k in self._entries if k[0] == owner]

    def drop_owner(self, owner: Hashable) -> None:
        """Forget every entry of one store (closed, or its position was lost)."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == owner]:
                self._drop(key)

    def stats(self) -> dict[str, int]:
        """Entries, estimated bytes, budget, loads, hits and evictions so far."""
        return {"entries": len(self._entries), "bytes": self._bytes, "max_bytes": self.max_bytes,
                "loads": self.loads, "hits": self.hits, "evictions": self.evictions}

    def _drop(self, key: Key) -> None:
        if key in self._entries:
            del self._entries[key]
            self._bytes -= self._sizes.pop(key)

    def _evict(self, keep: Key) -> None:
        while self._bytes > self.max_bytes and len(self._entries) > 1:
            oldest = next(iter(self._entries))
            if oldest == keep:
                self._entries.move_to_end(oldest)
                oldest = next(iter(self._entries))
            self._drop(oldest)
            self.evictions += 1


def shared_index_cache() -> IndexCache:
    """The process-wide cache, sized by ``MEMORY_INDEX_CACHE_MB`` when first used."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = IndexCache.from_mb(index_cache_mb(os.environ))
        return _shared
