"""The embeddings a client's stores use: inputs held to the model's window, queries cached.

:class:`BoundedEmbeddings` wraps the resolved model (:func:`resolve_embeddings`) for one
client:

* **Input window.** Each text is cut (head and tail) to what the model can read before
  it is sent: :class:`E5Embeddings` does this itself, token-exact; OpenAI embeddings get
  :data:`OPENAI_INPUT_BYTES` UTF-8 bytes (their window is 8,191 tokens and a token covers
  at least one byte, so the API never refuses a text and a megabyte costs a window, not
  a megabyte); a model declaring ``max_input_bytes`` gets that; any other model
  :data:`DEFAULT_INPUT_BYTES` (more than common embedding models read).
* **Query cache.** A bounded LRU of query embeddings (exact text → vector): the second
  identical search makes no embedding call; :meth:`BoundedEmbeddings.embed_queries` fills
  it for several queries in one call, and with a model that embeds queries as documents
  (OpenAI's) the documents of a write are served from it too.

Example:
    >>> from hy_memory_langgraph.testing import HashingEmbeddings
    >>> emb = BoundedEmbeddings(HashingEmbeddings(dims=8), query_cache_size=2)
    >>> emb.embed_query("tea") == emb.embed_query("tea"), emb.cache_hits
    (True, 1)
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from typing import Final

from langchain_core.embeddings import Embeddings

from hy_memory_langgraph.embedding_batch import embed_queries, embeds_queries_as_documents
from hy_memory_langgraph.models.embeddings import E5Embeddings, head_tail_bytes
from hy_memory_langgraph.models.identity import base_embeddings

#: Query embeddings kept per client.
_DEFAULT_QUERY_CACHE_SIZE: Final = 512
#: Bytes of one text sent to OpenAI embeddings (the 8,191-token window, one byte per token
#: at least, less a margin).
OPENAI_INPUT_BYTES: Final = 8000
#: Bytes of one text sent to a model whose window is unknown (8k tokens of English).
DEFAULT_INPUT_BYTES: Final = 32_768


def input_bytes_limit(emb: Embeddings) -> int | None:
    """The byte cap of one input for ``emb``, or ``None`` (it bounds its input itself).

    Example:
        >>> from hy_memory_langgraph.testing import HashingEmbeddings
        >>> input_bytes_limit(HashingEmbeddings()) == DEFAULT_INPUT_BYTES
        True
    """
    emb = base_embeddings(emb)
    if isinstance(emb, E5Embeddings):
        return None
    declared = getattr(emb, "max_input_bytes", None)
    if isinstance(declared, int) and not isinstance(declared, bool) and declared > 0:
        return declared
    openai_module = sys.modules.get("langchain_openai")
    if openai_module is not None and isinstance(emb, openai_module.OpenAIEmbeddings):
        return OPENAI_INPUT_BYTES
    return DEFAULT_INPUT_BYTES


class BoundedEmbeddings(Embeddings):
    """``inner`` with inputs held to its window and a bounded LRU of query vectors.

    Args:
        inner: The embedding model.
        query_cache_size: Query vectors kept (0 disables the cache).
        max_input_bytes: Byte cap of one text (``None``: :func:`input_bytes_limit`; ``0``:
            no cap).

    Example:
        >>> from hy_memory_langgraph.testing import HashingEmbeddings
        >>> BoundedEmbeddings(HashingEmbeddings(dims=8)).embed_documents(["a", "b"])[0][:1] != []
        True
    """

    def __init__(self, inner: Embeddings, *, query_cache_size: int = _DEFAULT_QUERY_CACHE_SIZE,
                 max_input_bytes: int | None = None) -> None:
        self.inner = inner
        self.query_cache_size = max(0, query_cache_size)
        limit = input_bytes_limit(inner) if max_input_bytes is None else max_input_bytes
        self.max_input_bytes = limit or None
        self.cache_hits = 0
        self.cache_misses = 0
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._documents: OrderedDict[str, list[float]] = OrderedDict()  # prefetched, used once
        self._lock = threading.Lock()
        self._symmetric = embeds_queries_as_documents(base_embeddings(inner))

    def _fit(self, text: str) -> str:
        return text if self.max_input_bytes is None else head_tail_bytes(text, self.max_input_bytes)

    def _peek(self, text: str) -> list[float] | None:
        """The cached query vector of ``text`` (no counters moved), or ``None``."""
        with self._lock:
            vector = self._cache.get(text)
            return None if vector is None else list(vector)

    def _cached(self, text: str) -> list[float] | None:
        with self._lock:
            vector = self._cache.get(text)
            if vector is None:
                self.cache_misses += 1
                return None
            self._cache.move_to_end(text)
            self.cache_hits += 1
            return list(vector)

    def _keep(self, text: str, vector: list[float]) -> None:
        if self.query_cache_size == 0:
            return
        with self._lock:
            self._cache[text] = list(vector)
            self._cache.move_to_end(text)
            while len(self._cache) > self.query_cache_size:
                self._cache.popitem(last=False)

    def _known_documents(self, texts: list[str]) -> dict[str, list[float] | None]:
        """The vectors already at hand for ``texts``: a symmetric model's cached queries, an
        asymmetric one's prefetched documents (each served once)."""
        if self._symmetric:
            return {t: self._peek(t) for t in dict.fromkeys(texts)}
        with self._lock:
            return {t: self._documents.pop(t, None) for t in dict.fromkeys(texts)}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents, each held to the input window; texts just embedded as queries
        by a model that embeds queries as documents (OpenAI's), or prefetched, come from
        the cache."""
        found = self._known_documents(texts)
        missing = [t for t, v in found.items() if v is None]
        if missing:
            vectors = self.inner.embed_documents([self._fit(t) for t in missing])
            found.update({t: list(v) for t, v in zip(missing, vectors, strict=True)})
        return [list(found[t] or []) for t in texts]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        found = self._known_documents(texts)
        missing = [t for t, v in found.items() if v is None]
        if missing:
            vectors = await self.inner.aembed_documents([self._fit(t) for t in missing])
            found.update({t: list(v) for t, v in zip(missing, vectors, strict=True)})
        return [list(found[t] or []) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query: from the cache when the same text was embedded lately."""
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Several queries: the ones not cached embedded in one call (when the model can,
        see :func:`~hy_memory_langgraph.embedding_batch.embed_queries`), then cached."""
        wanted = list(texts)
        found = {t: self._cached(t) for t in dict.fromkeys(wanted)}
        missing = [t for t, v in found.items() if v is None]
        if missing:
            vectors = embed_queries(self.inner, [self._fit(t) for t in missing])
            for text, vector in zip(missing, vectors, strict=True):
                found[text] = list(vector)
                self._keep(text, found[text])
        return [list(found[t] or []) for t in wanted]

    def prefetch(self, queries: list[str], documents: list[str]) -> None:
        """Embed what a write is about to search for and store, in one call when it can.

        ``queries`` are embedded (and cached) as :meth:`embed_queries` does. When the model
        embeds a query exactly as a document (OpenAI's), ``documents`` join that call, so
        the store's later ``embed_documents`` of them is served from the cache: one call in
        all. Otherwise ``documents`` get one ``embed_documents`` call of their own, kept
        until the store asks for them (each once; at most ``query_cache_size`` held): two
        calls in all instead of one per store write.
        """
        if not self.query_cache_size:
            return
        if self._symmetric:
            texts = list(queries) + list(documents)
            if texts:
                self.embed_queries(texts)
            return
        if queries:
            self.embed_queries(list(queries))
        wanted = [t for t in dict.fromkeys(documents) if t not in self._documents]
        if wanted:
            vectors = self.inner.embed_documents([self._fit(t) for t in wanted])
            with self._lock:
                for text, vector in zip(wanted, vectors, strict=True):
                    self._documents[text] = list(vector)
                while len(self._documents) > self.query_cache_size:
                    self._documents.popitem(last=False)

    async def aembed_query(self, text: str) -> list[float]:
        cached = self._cached(text)
        if cached is not None:
            return cached
        vector = list(await self.inner.aembed_query(self._fit(text)))
        self._keep(text, vector)
        return vector
