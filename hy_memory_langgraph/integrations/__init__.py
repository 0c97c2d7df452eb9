"""Integrations with LangChain and LangGraph applications.

* :func:`create_recall_node` / :func:`create_remember_node` and :class:`MemoryState`:
  memory nodes for any ``StateGraph`` over ``MessagesState``;
* :func:`create_memory_tools`: ``search_memory``, ``save_memory``, ``forget_memory``;
* :class:`HyMemoryRetriever`: a standard LangChain retriever;
* :class:`HyMemoryKVStore` and :class:`CachedEmbeddings`: a LangChain byte store on
  :class:`~hy_memory_langgraph.store.HyMemoryStore`, and embeddings cached in it;
* :class:`HyMemoryMiddleware`: ``langchain.agents.create_agent`` middleware (needs the
  optional ``langchain`` package, imported on first use).
"""

from __future__ import annotations

from hy_memory_langgraph.integrations.nodes import (
    MemoryState,
    create_recall_node,
    create_remember_node,
)
from hy_memory_langgraph.integrations.render import render_memory_block
from hy_memory_langgraph.integrations.retriever import HyMemoryRetriever
from hy_memory_langgraph.integrations.scope import MemoryScope, resolve_scope
from hy_memory_langgraph.integrations.tools import create_memory_tools
from hy_memory_langgraph.models import CachedEmbeddings
from hy_memory_langgraph.store import HyMemoryKVStore

__all__ = [
    "CachedEmbeddings",
    "HyMemoryKVStore",
    "HyMemoryMiddleware",
    "HyMemoryRetriever",
    "MemoryScope",
    "MemoryState",
    "create_memory_tools",
    "create_recall_node",
    "create_remember_node",
    "render_memory_block",
    "resolve_scope",
]


def __getattr__(name: str) -> object:
    # The middleware needs the optional ``langchain`` package; import it on first use.
    if name == "HyMemoryMiddleware":
        from hy_memory_langgraph.integrations.middleware import HyMemoryMiddleware

        return HyMemoryMiddleware
    raise AttributeError(name)
