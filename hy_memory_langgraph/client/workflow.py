"""WorkflowMemoryService: ``memory_prompt`` and ``memory_extract``
(``docs/design.md#workflow-memory``)."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from hy_memory_langgraph.ids import require_id
from hy_memory_langgraph.models import LLMGateway
from hy_memory_langgraph.nodes.workflow.state import WorkflowContext
from hy_memory_langgraph.pipelines.workflow import build_workflow_extract_graph
from hy_memory_langgraph.workflow.errors import (
    MemoryNotSupportedError,
    WorkflowStorageError,
)
from hy_memory_langgraph.workflow.files import WorkflowDocuments, dimension_of, workflow_documents
from hy_memory_langgraph.workflow.oa_context import OAContextProvider, build_oa_context
from hy_memory_langgraph.workflow.render import render_prompt
from hy_memory_langgraph.workflow.validation import optional_id

__all__ = ["WorkflowMemoryService"]

logger = logging.getLogger(__name__)


def _diagnosis(code: str, status: int, fail: str, data_empty: bool | None, message: str) -> dict[str, Any]:
    return {"code": code, "status": status, "fail": fail, "dataEmpty": data_empty, "message": message}


class WorkflowMemoryService:
    """Workflow memory of every user, as markdown files under ``root``.

    Args:
        root: The directory (usually ``MemoryConfig.workflow_dir``), or a
            :class:`~hy_memory_langgraph.workflow.files.WorkflowDocuments` store.
        mode: ``"lite"`` (rules, zero LLM) or ``"pro"`` (one ``workflow_extract`` call).
        llm: The gateway used in pro mode (ignored in lite mode).
        oa_context_provider: Supplies ``oaContext`` (see :mod:`.oa_context`); ``None``
            → ``oaContext: null`` + ``oaContextMissing: true``.
        memory_supported: ``False`` → every call answers ``memoryNotSupported: true``.
    """

    def __init__(self, root: str | Path | WorkflowDocuments, *, mode: str = "lite", llm: LLMGateway | None = None,
                 oa_context_provider: OAContextProvider | None = None,
                 memory_supported: bool = True) -> None:
        self.files = workflow_documents(root)
        self.mode = mode
        self.oa_context_provider = oa_context_provider
        self.memory_supported = memory_supported
        self.context = WorkflowContext(files=self.files, mode=mode, llm=llm if mode == "pro" else None)
        self.graph = build_workflow_extract_graph()

    # -- read ---------------------------------------------------------------------------
    def memory_prompt(self, user_id: str, workflow_id: str | None = None) -> dict[str, Any]:
        """The memory prompt of ``user_id`` (+ one workflow) and the OA context.

        Returns ``available``, ``memoryPrompt`` (markdown: profile, global, and the
        workflow section only when ``workflow_id`` is given; ``""`` when every section
        is empty), ``workflowId``, ``oaContext`` (``version``, ``smartGrouping``,
        ``user{position, department, subcompany, employeeId}``) or ``None`` with
        ``oaContextMissing: true``, ``memoryNotSupported``, ``dataEmpty`` (no entry in
        any section read), ``counts`` (entries per section) and ``diagnosis``
        (``None``, or ``{code, status, fail, dataEmpty, message}`` when not available).

        Never raises for run-time failures (provider error, unreadable file): they give
        ``available: false`` and a ``diagnosis``. Bad arguments raise
        :class:`InvalidInputError`.
        """
        user_id = require_id(user_id, "user_id")
        workflow_id = optional_id(workflow_id, "workflow_id (workflowId)")
        result: dict[str, Any] = {
            "available": False, "memoryPrompt": "", "workflowId": workflow_id,
            "oaContext": None, "oaContextMissing": True, "memoryNotSupported": False,
            "dataEmpty": None, "counts": {}, "diagnosis": None,
        }
        if not self.memory_supported:
            return self._unsupported(result)
        dims = ["user", "global"] + ([dimension_of(workflow_id)] if workflow_id else [])
        try:
            sections = {d: self.files.read(user_id, d) for d in dims}
        except WorkflowStorageError as exc:
            logger.warning("workflow memory unreadable: %s", exc)
            result["diagnosis"] = _diagnosis("STORAGE_UNREADABLE", 500, "storage", None, str(exc))
            return result
        data_empty = not any(sections.values())
        result.update(dataEmpty=data_empty, counts={d: len(e) for d, e in sections.items()})
        try:
            raw = self.oa_context_provider.get_oa_context(user_id) if self.oa_context_provider else None
            if raw is not None and raw.get("memorySupported") is False:
                raise MemoryNotSupportedError("the OA context says memory is not supported")
            oa_context = build_oa_context(raw) if raw is not None else None
        except MemoryNotSupportedError:
            return self._unsupported(result)
        except Exception as exc:  # noqa: BLE001 - a provider failure is reported, never raised
            logger.warning("OA context provider failed: %s", exc)
            result["diagnosis"] = _diagnosis("OA_CONTEXT_FAILED", 502, "oaContext", data_empty,
                                             f"{type(exc).__name__}: {exc}")
            return result
        result.update(available=True, memoryPrompt=render_prompt(sections),
                      oaContext=oa_context, oaContextMissing=oa_context is None)
        return result

    @staticmethod
    def _unsupported(result: dict[str, Any]) -> dict[str, Any]:
        result.update(memoryNotSupported=True,
                      diagnosis=_diagnosis("MEMORY_NOT_SUPPORTED", 501, "environment",
                                           result.get("dataEmpty"), "memory is not supported here"))
        return result

    # -- write --------------------------------------------------------------------------
    def memory_extract(self, user_id: str, msg_list: list[dict[str, Any]] | None = None,
                       user_message: list[str] | None = None,
                       assistant_message: list[str] | None = None,
                       workflow_id: str | None = None,
                       dynamic_context: dict[str, Any] | None = None,
                       memory_app_id: str | None = None) -> dict[str, Any]:
        """Extract and save new memories synchronously; returns the real ``saved`` result.

        Returns ``saved`` (something was added or updated), ``entries`` (each with
        ``dimension`` ``user | global | workflow:{id}``, ``kind``, ``line``, ``status``
        ``added | updated``, ``file``, ``previous`` when updated, and ``alias`` /
        ``workflowName`` / ``workflowId`` for aliases), ``skipped`` (with ``reason``:
        ``duplicate``, ``no_workflow_id``, ``credentials``…), ``source`` (``llm``,
        ``lite`` or ``lite_fallback``), ``mode``, ``workflowId`` (the hint),
        ``memoryAppId`` (echoed) and ``elapsed_ms``.

        Raises:
            InvalidInputError: bad arguments (the message names the field and the fix).
            CredentialsRefusedError: the input carries credentials; nothing is saved.
            WorkflowStorageError: the files could not be written.
        """
        args = {"user_id": user_id, "msg_list": msg_list, "user_message": user_message,
                "assistant_message": assistant_message, "workflow_id": workflow_id,
                "dynamic_context": dynamic_context, "memory_app_id": memory_app_id}
        if not self.memory_supported:
            return {"saved": False, "memoryNotSupported": True, "entries": [], "skipped": []}
        state = self.graph.invoke({"args": args, "started": time.perf_counter()}, context=self.context)
        return state["result"]
