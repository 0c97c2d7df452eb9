"""hy_memory_langgraph: long-term memory for LangGraph and LangChain agents.

Example:
    >>> from hy_memory_langgraph import HyMemoryClient  # doctest: +SKIP
    >>> client = HyMemoryClient(data_dir="./memory")  # doctest: +SKIP
"""

from __future__ import annotations

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.config import CodingConfig, MemoryConfig
from hy_memory_langgraph.errors import (
    ConfigError,
    ConflictError,
    HyMemoryError,
    InvalidInputError,
    InvalidSceneError,
    LLMCallError,
    ModelUnavailableError,
    StoreCorruptionError,
    StoreError,
)
from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.threads import configure_threads

__all__ = [
    "CodingConfig",
    "ConfigError",
    "ConflictError",
    "HyMemoryClient",
    "HyMemoryError",
    "HyMemoryStore",
    "InvalidInputError",
    "InvalidSceneError",
    "LLMCallError",
    "MemoryConfig",
    "ModelUnavailableError",
    "StoreCorruptionError",
    "StoreError",
    "configure_threads",
]
__version__ = "0.1.0"
