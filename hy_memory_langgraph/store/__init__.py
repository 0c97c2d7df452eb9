"""HyMemoryStore: a langgraph ``BaseStore`` over SQLite or PostgreSQL + FAISS.

Design:

* The database (a SQLite file, or one schema of a PostgreSQL database) is the
  source of truth for items *and* vectors (float32 blobs with text and field).
  Tables are versioned and migrated on open (:mod:`.db.migrations`; one initial
  schema, version 1). Every statement runs through SQLAlchemy's ``Connection``
  (statements built once at module level, served by its compiled cache; rows written
  with ``executemany`` / ``insertmanyvalues``).
* Exact FAISS ``IndexIDMap2(IndexFlatIP)`` indexes over normalised vectors are
  derived per scope (a namespace's first two labels), loaded lazily and kept in
  a byte-bounded LRU cache (``MEMORY_INDEX_CACHE_MB``). A scope of at least
  :class:`ApproximateSearch` ``min_vectors`` vectors gets an IVF index instead
  (:mod:`.vector.approximate`).
* Every write appends to a change log in the same transaction; each store
  object replays it (deltas, cached scopes only) before vector searches, so
  several objects or processes can share one database.
* Search filters first (and is exact below the approximate threshold): candidates
  (namespace prefix, filter, not expired) are fixed before ranking; only the top
  rows are read from SQL.
* A persistent lexical index (BM25 postings per namespace, pre-tokenised by the
  caller, written in the same batch as the items) answers keyword searches by
  reading only the query terms' postings (``supports_lexical_index``).

Behaviour notes (differences from langgraph's ``InMemoryStore``, on purpose):

* ``created_at`` is kept when an item is overwritten (reset after a delete or
  after the old version expired); ``updated_at`` moves.
* An overwrite replaces all of an item's vectors (InMemoryStore keeps vectors of
  fields the new version no longer indexes).
* Search without a query returns newest ``updated_at`` first. With a query,
  items without vectors follow the scored ones (newest first) and
  ``offset``/``limit`` apply to that whole sequence.
* ``list_namespaces`` only lists namespaces that hold live items.
* Filters: see :mod:`.sql.filters` (extra operators, dotted paths, strict types,
  missing field = null for equality-type operators).
* TTL is supported (``supports_ttl = True``); expired items are invisible at
  once and deleted by :meth:`HyMemoryStore.sweep_ttl` or the background sweeper.
* Values must be JSON (no NaN); ``limit``/``offset`` must be non-negative.

Layout, one concern per module:

* :mod:`.store`: the :class:`HyMemoryStore` class (batch orchestration, TTL API);
  :mod:`.extensions`: the typed protocol of what it offers beyond ``BaseStore``.
* :mod:`.db`: database plumbing every store of the package shares (engines and
  transactions, PostgreSQL writer locks, migrations and opening a database migrated,
  WAL upkeep, faults).
* :mod:`.schema`: the tables and their migration history.
* :mod:`.sql`: statements, the filter language and JSON field access, bound SQL only.
* :mod:`.batch`: planning, guards, the write transaction and exact search of a batch.
* :mod:`.vector`: the FAISS index of a scope, its namespace map, lazy loading and
  change-log replay per store, the shared LRU budget.
* :mod:`.postings`: the lexical (BM25) postings index's operations, its upkeep inside a batch, its searches.
* :mod:`.namespaces` / :mod:`.ttl`: namespace encoding/matching, TTL sweeper.
* :mod:`.kv`: :class:`HyMemoryKVStore`, a LangChain ``BaseStore[str, bytes]`` in one
  namespace of any LangGraph store (e.g. the byte store of an embedding cache).

Example:
    >>> from hy_memory_langgraph.store import HyMemoryStore
    >>> import tempfile, os
    >>> with HyMemoryStore(os.path.join(tempfile.mkdtemp(), "kv.db")) as store:
    ...     store.put(("prefs",), "theme", {"value": "dark"})
    ...     store.get(("prefs",), "theme").value
    {'value': 'dark'}
"""

from __future__ import annotations

from hy_memory_langgraph.store.aio import AsyncHyMemoryStore
from hy_memory_langgraph.store.batch.guards import GuardOp
from hy_memory_langgraph.store.extensions import CapabilityFlags, IndexedStore
from hy_memory_langgraph.store.kv import HyMemoryKVStore
from hy_memory_langgraph.store.postings.ops import (
           KeyHit,
           LexicalOp,
           LexicalStatus,
)
from hy_memory_langgraph.store.sealed import SealedStore
from hy_memory_langgraph.store.sql.filters import FilterError
from hy_memory_langgraph.store.store import HyMemoryStore
from hy_memory_langgraph.store.vector.cache import IndexCache, shared_index_cache
from hy_memory_langgraph.store.vector.settings import ApproximateSearch

__all__ = ["ApproximateSearch", "AsyncHyMemoryStore", "CapabilityFlags", "FilterError", "GuardOp",
           "HyMemoryKVStore", "HyMemoryStore", "IndexCache", "IndexedStore", "KeyHit", "LexicalOp",
           "LexicalStatus", "SealedStore", "shared_index_cache"]
