"""The client layer: the entry points that run the pipelines.

* :class:`HyMemoryClient`: ``add`` / ``search`` / ``get`` / ``update`` / ``delete`` /
  ``delete_all`` / ``history`` and workflow memory, with ``a*`` async twins.
* :class:`WorkflowMemoryService`: ``memory_prompt`` / ``memory_extract`` on their own
  (what the client and the CLI use for workflow memory).
"""

from __future__ import annotations

from hy_memory_langgraph.client.memory import HyMemoryClient
from hy_memory_langgraph.client.workflow import (
    WorkflowMemoryService,
    oa_context_provider_from_config,
)

__all__ = ["HyMemoryClient", "WorkflowMemoryService", "oa_context_provider_from_config"]
