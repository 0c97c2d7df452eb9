"""Workflow memory (seed 2): user / global / per-workflow dimensions as markdown files.

One concern per module:

* :mod:`.validation`, :mod:`.credentials`: inputs (and refusing credentials);
* :mod:`.lite`: deterministic extraction rules; :mod:`.routing`: final dimension;
* :mod:`.entries`: the bullet-line format; :mod:`.merge`: dedupe / pending-id completion;
* :mod:`.files`, :mod:`.locking`: atomic, locked markdown files;
* :mod:`.render`, :mod:`.oa_context`: ``memory_prompt`` output;
* :mod:`.service`: :class:`WorkflowMemoryService`; :mod:`.cli_ops`: the CLI mirror.

The extraction graph itself lives in :mod:`hy_memory_langgraph.pipelines.workflow`.
"""

from hy_memory_langgraph.workflow.entries import PENDING_ID, Entry
from hy_memory_langgraph.workflow.errors import (
    CredentialsRefusedError,
    MemoryNotSupportedError,
    WorkflowStorageError,
)
from hy_memory_langgraph.workflow.oa_context import (
    OAContextProvider,
    StaticOAContextProvider,
    smart_grouping,
)
from hy_memory_langgraph.workflow.service import WorkflowMemoryService

__all__ = [
    "PENDING_ID",
    "CredentialsRefusedError",
    "Entry",
    "MemoryNotSupportedError",
    "OAContextProvider",
    "StaticOAContextProvider",
    "WorkflowMemoryService",
    "WorkflowStorageError",
    "smart_grouping",
]
