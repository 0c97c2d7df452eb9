"""hy_memory_langgraph: long-term memory for LangGraph and LangChain agents.

The public names below are imported when first used, so ``import hy_memory_langgraph``
(and the ``hy-memory`` command's start-up) loads nothing heavy; the client, the store and
the models load with the first name that needs them.

Example:
    >>> from hy_memory_langgraph import HyMemoryClient  # doctest: +SKIP
    >>> client = HyMemoryClient(data_dir="./memory")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from hy_memory_langgraph.lazy import lazy_names

if TYPE_CHECKING:
    from hy_memory_langgraph.client import HyMemoryClient
    from hy_memory_langgraph.config import CodingConfig, MemoryConfig
    from hy_memory_langgraph.errors import (
        ConfigError,
        ConflictError,
        ForeignUserError,
        HyMemoryError,
        InvalidInputError,
        InvalidSceneError,
        LLMCallError,
        MissingContextError,
        ModelUnavailableError,
        ReadOnlyStoreError,
        StoreCorruptionError,
        StoreError,
    )
    from hy_memory_langgraph.openmp import configure_threads
    from hy_memory_langgraph.store import AsyncHyMemoryStore, HyMemoryStore

__all__ = [
    "AsyncHyMemoryStore",
    "CodingConfig",
    "ConfigError",
    "ConflictError",
    "ForeignUserError",
    "HyMemoryClient",
    "HyMemoryError",
    "HyMemoryStore",
    "InvalidInputError",
    "InvalidSceneError",
    "LLMCallError",
    "MemoryConfig",
    "MissingContextError",
    "ModelUnavailableError",
    "ReadOnlyStoreError",
    "StoreCorruptionError",
    "StoreError",
    "configure_threads",
]
__version__ = "0.1.0"

_ERRORS: Final = "hy_memory_langgraph.errors"
#: Where each public name lives.
_HOMES: Final = {
    "HyMemoryClient": "hy_memory_langgraph.client",
    "CodingConfig": "hy_memory_langgraph.config",
    "MemoryConfig": "hy_memory_langgraph.config",
    "AsyncHyMemoryStore": "hy_memory_langgraph.store",
    "HyMemoryStore": "hy_memory_langgraph.store",
    "configure_threads": "hy_memory_langgraph.openmp",
    **{name: _ERRORS for name in ("ConfigError", "ConflictError", "ForeignUserError", "HyMemoryError",
                                  "InvalidInputError",
                                  "InvalidSceneError", "LLMCallError", "MissingContextError",
                                  "ModelUnavailableError", "ReadOnlyStoreError", "StoreCorruptionError",
                                  "StoreError")},
}


__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals())
