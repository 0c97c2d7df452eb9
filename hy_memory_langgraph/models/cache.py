"""CachedEmbeddings: never embed the same text twice, across runs and processes.

A small wrapper around any LangChain ``Embeddings`` that keeps every vector in a
LangChain byte store (``BaseStore[str, bytes]``), e.g. a
:class:`~hy_memory_langgraph.store.kv.HyMemoryKVStore` on a SQLite file. It does what
LangChain's ``CacheBackedEmbeddings`` (``langchain_classic.embeddings``) does, which
the ``langchain`` v1 package no longer ships, with three differences that matter here:

* queries are cached too, in their own key space (e5-style models embed a query and
  a passage of the same text differently);
* keys are SHA-256 of the model identity and the text, so two models never share a
  vector, and one cache file may serve several models;
* vectors are stored exactly: float32 bytes when every value is a float32 (e5, most
  servers), float64 otherwise, so cached and fresh vectors are bit-identical.

``hits`` / ``misses`` count texts served from the cache / sent to the model (repeated
texts within one call are embedded once). The async methods are LangChain's: the sync
ones in a worker thread, which sees the caller's context (and so its owners, below).

**Erasure.** A cached row is the hash of a text and its vector, enough to confirm a guess
of the text. Inside ``with embedding_owners([user_id])`` (the client wraps every add and
search in it) each key used is also referenced under that user, so
:meth:`CachedEmbeddings.forget_owner` erases every row a user's texts and queries made
(a row another user shares is embedded again when next needed), and
:meth:`CachedEmbeddings.forget_texts` the rows of given texts.

Example:
    >>> from langchain_core.stores import InMemoryByteStore
    >>> from hy_memory_langgraph.models import resolve_embeddings
    >>> base = resolve_embeddings(lambda texts: [[float(len(t)), 1.0] for t in texts])
    >>> cached = CachedEmbeddings(base, InMemoryByteStore())
    >>> cached.embed_documents(["a", "bb", "a"]); cached.embed_documents(["bb"])
    [[1.0, 1.0], [2.0, 1.0], [1.0, 1.0]]
    [[2.0, 1.0]]
    >>> cached.misses, cached.hits
    (2, 1)
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.stores import BaseStore

from hy_memory_langgraph.embedding_batch import EMBEDDING_OWNERS, embed_queries
from hy_memory_langgraph.errors import InvalidInputError, ReadOnlyStoreError
from hy_memory_langgraph.models.embeddings import embedding_dims
from hy_memory_langgraph.models.identity import model_identity

_F32, _F64 = b"f", b"d"
#: Reference rows remembered as written, per process (forgotten past this many).
_MAX_REFERENCED = 200_000
log = logging.getLogger(__name__)


@contextmanager
def embedding_owners(user_ids: Iterable[str]) -> Iterator[None]:
    """Embeddings cached inside the block are referenced under ``user_ids`` (for erasure)."""
    token = EMBEDDING_OWNERS.set(tuple(dict.fromkeys(user_ids)))
    try:
        yield
    finally:
        EMBEDDING_OWNERS.reset(token)


def _pack(vector: Sequence[float]) -> bytes:
    import numpy as np  # here, not at the top: reading memories loads no NumPy

    as64 = np.asarray(vector, dtype=np.float64)
    as32 = as64.astype(np.float32)
    if np.array_equal(as32.astype(np.float64), as64):
        return _F32 + as32.tobytes()
    return _F64 + as64.tobytes()


def _unpack(blob: bytes) -> list[float]:
    import numpy as np

    dtype = np.float32 if blob[:1] == _F32 else np.float64
    return np.frombuffer(blob[1:], dtype=dtype).astype(np.float64).tolist()


class CachedEmbeddings(Embeddings):
    """Embeddings whose vectors are kept in a byte store and reused.

    Args:
        embeddings: The model that computes missing vectors.
        store: Any LangChain ``BaseStore[str, bytes]`` (``HyMemoryKVStore``,
            ``InMemoryByteStore``, ``LocalFileStore``, ...).
        namespace: Names the model in the keys; default :func:`model_identity`. Change
            it when the same class may load different weights.
        cache_queries: Cache ``embed_query`` too (default ``True``).

    Example:
        >>> from langchain_core.stores import InMemoryByteStore
        >>> from hy_memory_langgraph.testing import HashingEmbeddings  # doctest: +SKIP
        >>> cached = CachedEmbeddings(HashingEmbeddings(), InMemoryByteStore())  # doctest: +SKIP
        >>> cached.embed_query("hello") == cached.embed_query("hello")  # doctest: +SKIP
        True
    """

    def __init__(self, embeddings: Embeddings, store: BaseStore[str, bytes], *,
                 namespace: str | None = None, cache_queries: bool = True) -> None:
        if not isinstance(embeddings, Embeddings):
            raise InvalidInputError(
                f"embeddings={embeddings!r} is invalid: CachedEmbeddings wraps a LangChain Embeddings")
        if not isinstance(store, BaseStore):
            raise InvalidInputError(
                f"store={store!r} is invalid: pass a LangChain BaseStore[str, bytes], "
                "e.g. HyMemoryKVStore(path)")
        self.embeddings = embeddings
        self.store = store
        self.namespace = namespace or model_identity(embeddings)
        self.cache_queries = cache_queries
        self._prefix = hashlib.sha256(self.namespace.encode("utf-8")).hexdigest()[:16]
        self._lock = threading.Lock()
        self._dims: int | None = None
        self._referenced: set[str] = set()
        self.hits = 0
        self.misses = 0

    @property
    def inner(self) -> Embeddings:
        """The wrapped model (what :func:`~hy_memory_langgraph.models.base_embeddings` follows)."""
        return self.embeddings

    @property
    def dims(self) -> int:
        """The vector size of the wrapped model (read once)."""
        if self._dims is None:
            self._dims = embedding_dims(self.embeddings)
        return self._dims

    def key(self, text: str, *, query: bool = False) -> str:
        """The cache key of ``text`` (``q`` keys for queries, ``d`` for documents)."""
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        return f"{self._prefix}:{'q' if query else 'd'}:{digest}"

    def _owner_prefix(self, owner: str) -> str:
        return f"{self._prefix}:u:{hashlib.sha256(owner.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}:"

    def _refs(self, keys: Iterable[str]) -> list[tuple[str, bytes]]:
        """Reference rows of ``keys`` under the current owners not written yet by this
        process (none outside a block)."""
        owners = EMBEDDING_OWNERS.get()
        rows = [(self._owner_prefix(o) + k, b"") for o in owners for k in dict.fromkeys(keys)]
        with self._lock:
            rows = [r for r in rows if r[0] not in self._referenced]
            if len(self._referenced) > _MAX_REFERENCED:
                self._referenced.clear()
            self._referenced.update(r[0] for r in rows)
        return rows

    def _keep(self, rows: list[tuple[str, bytes]]) -> None:
        """Write cache rows; a store that cannot be written (read-only data dir) leaves
        the vectors uncached instead of failing the embedding."""
        if not rows:
            return
        try:
            self.store.mset(rows)
        except ReadOnlyStoreError:
            log.info("embedding cache is read-only here: %d rows not kept", len(rows))

    def forget_owner(self, owner: str) -> int:
        """Erase every cached row referenced under ``owner``, and the references; returns
        the rows erased."""
        prefix = self._owner_prefix(owner)
        with self._lock:
            self._referenced = {r for r in self._referenced if not r.startswith(prefix)}
        refs = list(self.store.yield_keys(prefix=prefix))
        keys = [ref[len(prefix):] for ref in refs]
        if refs:
            self.store.mdelete(keys + refs)
        return len(keys)

    def forget_texts(self, texts: Iterable[str]) -> None:
        """Erase the cached rows of ``texts`` (as documents and as queries)."""
        keys = [self.key(t, query=q) for t in texts if t for q in (False, True)]
        if keys:
            self.store.mdelete(keys)

    def _count(self, hits: int, misses: int) -> None:
        with self._lock:
            self.hits += hits
            self.misses += misses

    @staticmethod
    def _missing(texts: list[str], found: list[bytes | None]) -> list[str]:
        return list(dict.fromkeys(t for t, blob in zip(texts, found) if blob is None))

    def _merge(self, texts: list[str], found: list[bytes | None], missing: list[str],
               vectors: list[list[float]], *, query: bool = False) -> tuple[list[list[float]],
                                                                           list[tuple[str, bytes]]]:
        if len(vectors) != len(missing):
            raise InvalidInputError(
                f"{type(self.embeddings).__name__} returned {len(vectors)} vectors for "
                f"{len(missing)} texts; it must return one vector per text")
        fresh = {t: [float(x) for x in v] for t, v in zip(missing, vectors)}
        out = [fresh[t] if blob is None else _unpack(blob) for t, blob in zip(texts, found)]
        self._count(len(texts) - sum(1 for b in found if b is None), len(missing))
        return out, [(self.key(t, query=query), _pack(v)) for t, v in fresh.items()]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors of ``texts``; only texts never seen by this model are embedded."""
        texts = list(texts)
        if not texts:
            return []
        keys = [self.key(t) for t in texts]
        found = self.store.mget(keys)
        missing = self._missing(texts, found)
        vectors = self.embeddings.embed_documents(missing) if missing else []
        out, new = self._merge(texts, found, missing, vectors)
        self._keep(new + self._refs(keys))
        return out

    def embed_query(self, text: str) -> list[float]:
        """The query vector of ``text`` (cached unless ``cache_queries=False``)."""
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Query vectors of ``texts``; the uncached ones embedded in one model call."""
        texts = list(texts)
        if not self.cache_queries or not texts:
            return embed_queries(self.embeddings, texts)
        keys = [self.key(t, query=True) for t in texts]
        found = self.store.mget(keys)
        missing = self._missing(texts, found)
        vectors = embed_queries(self.embeddings, missing) if missing else []
        out, new = self._merge(texts, found, missing, vectors, query=True)
        self._keep(new + self._refs(keys))
        return out

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes this wrapper lacks: read them from the model.
        if name.startswith("_") or name in {"embeddings", "store"}:
            raise AttributeError(name)
        return getattr(self.embeddings, name)
