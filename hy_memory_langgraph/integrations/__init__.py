"""Integrations with LangChain and LangGraph applications."""

from __future__ import annotations

from hy_memory_langgraph.integrations.retriever import HyMemoryRetriever

__all__ = ["HyMemoryRetriever"]
