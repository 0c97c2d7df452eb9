"""Several search queries embedded in one model call (a foundation module: the store and the
models both use it).

LangChain's ``Embeddings`` embeds queries one at a time (``embed_query``); a write that
looks up the neighbours of each of its new facts would call the model once per fact.
:func:`embed_queries` embeds them in one call when the model can:

* a model with ``embed_queries(texts)`` (:class:`BatchQueryEmbeddings`: the embedded e5,
  the package's caches and the test embedding) does it itself;
* a model whose queries are embedded like documents (OpenAI's embeddings) gets one
  ``embed_documents`` call (:func:`embeds_queries_as_documents`);
* any other model is called once per query, as before.

Example:
    >>> from hy_memory_langgraph.testing import HashingEmbeddings
    >>> emb = HashingEmbeddings(dims=8)
    >>> embed_queries(emb, ["tea", "coffee"]) == [emb.embed_query("tea"), emb.embed_query("coffee")]
    True
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Protocol, cast, runtime_checkable

from langchain_core.embeddings import Embeddings

#: The users the embeddings made now belong to (set by the client around each call, read
#: by the embedding cache for erasure; the store runs calls made with owners on their own).
EMBEDDING_OWNERS: ContextVar[tuple[str, ...]] = ContextVar("hy_memory_embedding_owners", default=())


@runtime_checkable
class BatchQueryEmbeddings(Protocol):
    """An embedding model that embeds several queries in one call."""

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """The query vectors of ``texts``, in order."""
        ...


def embeds_queries_as_documents(emb: Embeddings) -> bool:
    """Whether ``emb`` embeds a query exactly as a one-text document (OpenAI's models).

    Example:
        >>> from hy_memory_langgraph.testing import HashingEmbeddings
        >>> embeds_queries_as_documents(HashingEmbeddings())
        False
    """
    openai_module = sys.modules.get("langchain_openai")
    if openai_module is None or not isinstance(emb, openai_module.OpenAIEmbeddings):
        return False
    return type(emb).embed_query is openai_module.OpenAIEmbeddings.embed_query


def _batches_its_own_queries(emb: Embeddings) -> bool:
    """``emb`` has ``embed_queries`` and no subclass changed ``embed_query`` below it (a
    subclass that adds a prefix or counts calls in ``embed_query`` must keep being called)."""
    if not isinstance(emb, BatchQueryEmbeddings):
        return False
    mro = type(emb).__mro__
    batch_owner = next(c for c in mro if "embed_queries" in vars(c))
    query_owner = next((c for c in mro if "embed_query" in vars(c)), batch_owner)
    return issubclass(batch_owner, query_owner)


def embed_queries(emb: Embeddings, texts: Sequence[str]) -> list[list[float]]:
    """The query vectors of ``texts``, in as few model calls as ``emb`` allows."""
    texts = list(texts)
    if not texts:
        return []
    if _batches_its_own_queries(emb):
        return cast(BatchQueryEmbeddings, emb).embed_queries(texts)
    if embeds_queries_as_documents(emb):
        return emb.embed_documents(texts)
    return [emb.embed_query(t) for t in texts]


def prefetch(emb: Embeddings, queries: Sequence[str], documents: Sequence[str] = ()) -> None:
    """Embed a write's queries and the documents it will store ahead of its store writes,
    in as few calls as ``emb`` allows. :class:`~hy_memory_langgraph.models.BoundedEmbeddings`
    (which every client wraps its model in) keeps them for the writes; a model without a
    ``prefetch`` method is left alone (the writes embed as before)."""
    warm = getattr(emb, "prefetch", None)
    if callable(warm):
        warm([t for t in queries if t], [t for t in documents if t])
