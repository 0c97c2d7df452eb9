"""hy_memory_langgraph: long-term memory for LangGraph and LangChain agents.

Example:
    >>> from hy_memory_langgraph import HyMemoryClient  # doctest: +SKIP
    >>> client = HyMemoryClient(data_dir="./memory")  # doctest: +SKIP
"""

from __future__ import annotations

import os

# FAISS and the embedded e5 engine both use OpenMP. With the default (spinning) wait
# policy their idle worker threads busy-wait against each other, and on a loaded
# 2-core machine a single 30 ms embedding was measured at 2.5 s. Passive waiting
# removes that; it must be set before either runtime starts. A value set by the
# user wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from hy_memory_langgraph.client import HyMemoryClient  # noqa: E402
from hy_memory_langgraph.config import CodingConfig, MemoryConfig  # noqa: E402
from hy_memory_langgraph.errors import (  # noqa: E402
    ConfigError,
    HyMemoryError,
    InvalidInputError,
    InvalidSceneError,
    LLMCallError,
    ModelUnavailableError,
    StoreCorruptionError,
    StoreError,
)
from hy_memory_langgraph.store import HyMemoryStore  # noqa: E402

__all__ = [
    "CodingConfig",
    "ConfigError",
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
]
__version__ = "0.1.0"
