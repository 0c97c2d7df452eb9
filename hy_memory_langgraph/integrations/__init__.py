"""Integrations with LangChain and LangGraph applications."""

from __future__ import annotations

from hy_memory_langgraph.integrations.retriever import HyMemoryRetriever

__all__ = ["HyMemoryMiddleware", "HyMemoryRetriever"]


def __getattr__(name: str) -> object:
    # The middleware needs the optional ``langchain`` package; import it on first use.
    if name == "HyMemoryMiddleware":
        from hy_memory_langgraph.integrations.middleware import HyMemoryMiddleware

        return HyMemoryMiddleware
    raise AttributeError(name)
