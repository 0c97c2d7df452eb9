"""hy_memory_langgraph: long-term memory for LangGraph and LangChain agents."""

from __future__ import annotations

from hy_memory_langgraph.errors import (
    ConfigError,
    HyMemoryError,
    InvalidInputError,
    InvalidSceneError,
    ModelUnavailableError,
    StoreError,
)

__all__ = [
    "ConfigError",
    "HyMemoryError",
    "InvalidInputError",
    "InvalidSceneError",
    "ModelUnavailableError",
    "StoreError",
]
__version__ = "0.1.0"
