"""Record layouts over a LangGraph ``BaseStore``: where each kind of memory lives.

* :mod:`.records`: the record dataclasses; :mod:`.base`: the mechanics every repository
  shares (id index, history, guarded one-batch changes, deletes);
* :mod:`.chat`, :mod:`.productivity`, :mod:`.trace`: the repositories;
* :mod:`.filters`: store filters over record fields; :mod:`.namespaces`: safe labels.
"""

from __future__ import annotations

from hy_memory_langgraph.repos.chat import ChatRepository
from hy_memory_langgraph.repos.namespaces import encode_label
from hy_memory_langgraph.repos.productivity import ProductivityRepository
from hy_memory_langgraph.repos.records import ChatMemory, Experience, Fact, Record

__all__ = ["ChatMemory", "ChatRepository", "Experience", "Fact", "ProductivityRepository",
           "Record", "encode_label"]
