"""Record layouts over a LangGraph ``BaseStore``: where each kind of memory lives."""

from __future__ import annotations

from hy_memory_langgraph.repos.chat import ChatMemory, ChatRepository
from hy_memory_langgraph.repos.namespaces import encode_label

__all__ = ["ChatMemory", "ChatRepository", "encode_label"]
