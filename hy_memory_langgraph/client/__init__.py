"""The client layer: the entry points that run the pipelines.

* :class:`HyMemoryClient`: ``add`` / ``search`` / ``get`` / ``update`` / ``delete`` /
  ``delete_all`` / ``history`` and workflow memory, with ``a*`` async twins.
* :class:`MemoryReader`: what reads a data dir without any model (``get``,
  ``list_memories``, ``history``, ``stats``, ``export_memories``, ``pipeline_log``); the
  client is one, and the command line's reading commands use it alone.
* :class:`WorkflowMemoryService`: ``memory_prompt`` / ``memory_extract`` on their own
  (what the client and the CLI use for workflow memory).

The names are imported when first used (as at the package root), so a reader, or any
module of this folder, loads no graph: the write, search and workflow graphs load with
:class:`HyMemoryClient`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from hy_memory_langgraph.lazy import lazy_names

if TYPE_CHECKING:
    from hy_memory_langgraph.client.memory import HyMemoryClient
    from hy_memory_langgraph.client.reader import MemoryReader
    from hy_memory_langgraph.client.workflow import WorkflowMemoryService, oa_context_provider_from_config

#: Where each public name lives.
_HOMES: Final = {
    "HyMemoryClient": "hy_memory_langgraph.client.memory",
    "MemoryReader": "hy_memory_langgraph.client.reader",
    "WorkflowMemoryService": "hy_memory_langgraph.client.workflow",
    "oa_context_provider_from_config": "hy_memory_langgraph.client.workflow",
}


__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals())
