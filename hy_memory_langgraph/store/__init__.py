"""HyMemoryStore: a langgraph ``BaseStore`` over SQLite (SQLAlchemy) + FAISS.

Modules, one concern each:

* :mod:`.store`: the :class:`HyMemoryStore` class (batch orchestration, TTL API).
* :mod:`.engine` / :mod:`.schema` / :mod:`.sql`: engine setup, tables, queries.
* :mod:`.filters` / :mod:`.jsonsql`: filter language compiled to bound SQL.
* :mod:`.ops` / :mod:`.writes` / :mod:`.search`: batch planning, writes, search.
* :mod:`.vectors` / :mod:`.mirror` / :mod:`.sync` / :mod:`.persist`: the derived
  FAISS index, its namespace map, change-log replay and atomic persistence.
* :mod:`.namespaces` / :mod:`.ttl`: namespace encoding/matching, TTL sweeper.

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
from hy_memory_langgraph.store.store import HyMemoryStore

__all__ = ["HyMemoryStore", "FilterError"]
