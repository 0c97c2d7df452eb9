"""What a store offers beyond LangGraph's ``BaseStore``, as typed protocols.

The repositories work on any ``BaseStore``. A store may declare more
(:class:`CapabilityFlags`) and answer ranked-key searches over its own indexes
(:class:`IndexedStore`); :class:`~hy_memory_langgraph.store.HyMemoryStore` does both.
Callers check a store with ``isinstance`` against these runtime-checkable protocols
once, then call the extensions with their types, instead of probing names one by one.

Example:
    >>> from langgraph.store.memory import InMemoryStore
    >>> isinstance(InMemoryStore(), IndexedStore), isinstance(InMemoryStore(), CapabilityFlags)
    (False, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from hy_memory_langgraph.store.postings.ops import KeyHit, LexicalStatus
from hy_memory_langgraph.store.postings.read import TimeRange


@runtime_checkable
class CapabilityFlags(Protocol):
    """Behaviour a store declares beyond the ``BaseStore`` contract."""

    #: Search filters may hold a top-level ``$or``.
    supports_or_filters: bool
    #: Re-putting an item replaces all its vectors; ``index=False`` drops them.
    replaces_vectors_on_put: bool
    #: Batches may hold ``GuardOp`` checks, made in the write transaction.
    supports_guards: bool
    #: A search without a query lists items most recently updated first.
    lists_newest_first: bool
    #: Batches may hold ``LexicalOp`` s; the :class:`IndexedStore` searches answer.
    supports_lexical_index: bool


@runtime_checkable
class IndexedStore(Protocol):
    """Searches that rank keys from the store's own vector and lexical indexes.

    No value is read and (except :meth:`vector_search_keys`) no embedding is made.
    """

    def lexical_status(self, namespace: tuple[str, ...]) -> LexicalStatus:
        """What the lexical index holds for ``namespace``."""
        ...

    def lexical_search(self, namespace: tuple[str, ...], terms: Mapping[str, float], *, limit: int,
                       k1: float, b: float, ts_range: TimeRange | None = None) -> list[KeyHit]:
        """BM25 over the lexical documents of exactly ``namespace``, best first."""
        ...

    def vector_search_keys(self, namespace: tuple[str, ...], query: str, *, limit: int,
                           ts_range: TimeRange | None = None) -> list[KeyHit]:
        """The ``limit`` keys of exactly ``namespace`` nearest to ``query``."""
        ...
