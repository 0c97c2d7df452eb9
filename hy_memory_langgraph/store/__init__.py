"""HyMemoryStore: a langgraph ``BaseStore`` over SQLite (SQLAlchemy) + FAISS.

Design:

* SQLite (or any SQLAlchemy URL; the SQL is Core and PostgreSQL-ready) is the
  source of truth for items *and* vectors (float32 blobs with text and field).
* FAISS ``IndexIDMap2(IndexFlatIP)`` over normalised vectors is derived, saved
  as ``<db>.faiss`` + manifest atomically, rebuilt when missing/stale/corrupt.
* Every write appends to a change log in the same transaction; each store
  object replays it before vector searches, so several objects or processes can
  share one database. After its own write a store object applies its new vectors
  directly, without reading the log back, when the write's log rows directly follow
  its position (nobody else wrote in between).
* Search is exact and filters first: candidates (namespace prefix, filter, not
  expired) are fixed before ranking; only the top rows are read from SQL.

Behaviour notes (differences from langgraph's ``InMemoryStore``, on purpose):

* ``created_at`` is kept when an item is overwritten (reset after a delete or
  after the old version expired); ``updated_at`` moves.
* An overwrite replaces all of an item's vectors (InMemoryStore keeps vectors of
  fields the new version no longer indexes).
* Search without a query returns newest ``updated_at`` first. With a query,
  items without vectors follow the scored ones (newest first) and
  ``offset``/``limit`` apply to that whole sequence.
* ``list_namespaces`` only lists namespaces that hold live items.
* Filters: see :mod:`.filters` (extra operators, dotted paths, strict types,
  missing field = null for equality-type operators).
* TTL is supported (``supports_ttl = True``); expired items are invisible at
  once and deleted by :meth:`HyMemoryStore.sweep_ttl` or the background sweeper.
* Values must be JSON (no NaN); ``limit``/``offset`` must be non-negative.

Modules, one concern each:

* :mod:`.store`: the :class:`HyMemoryStore` class (batch orchestration, TTL API).
* :mod:`.engine` / :mod:`.schema` / :mod:`.sql`: engine setup, tables, queries.
* :mod:`.filters` / :mod:`.jsonsql`: filter language compiled to bound SQL.
* :mod:`.ops` / :mod:`.writes` / :mod:`.search`: batch planning, writes, search.
* :mod:`.vectors` / :mod:`.mirror` / :mod:`.sync` / :mod:`.persist`: the derived
  FAISS index, its namespace map, change-log replay and atomic persistence.
* :mod:`.namespaces` / :mod:`.ttl`: namespace encoding/matching, TTL sweeper.
* :mod:`.guards`: guarded batches (write only if what was read is unchanged).

Example:
    >>> from hy_memory_langgraph.store import HyMemoryStore
    >>> import tempfile, os
    >>> with HyMemoryStore(os.path.join(tempfile.mkdtemp(), "kv.db")) as store:
    ...     store.put(("prefs",), "theme", {"value": "dark"})
    ...     store.get(("prefs",), "theme").value
    {'value': 'dark'}
"""

from __future__ import annotations

from hy_memory_langgraph.store.filters import FilterError
from hy_memory_langgraph.store.guards import GuardOp
from hy_memory_langgraph.store.store import HyMemoryStore

__all__ = ["FilterError", "GuardOp", "HyMemoryStore"]
