"""WorkflowMemoryService: ``memory_prompt`` and ``memory_extract``
(``docs/design.md#workflow-memory``)."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hy_memory_langgraph.config import MemoryConfig, resolve_object_spec
from hy_memory_langgraph.ids import random_id, require_id
from hy_memory_langgraph.models import LLMGateway
from hy_memory_langgraph.pipeline_log.recorder import PipelineRecorder
from hy_memory_langgraph.workflow.errors import (
    MemoryNotSupportedError,
    WorkflowStorageError,
)
from hy_memory_langgraph.workflow.files import (
    WorkflowDocuments,
    dimension_of,
    workflow_documents,
)
from hy_memory_langgraph.workflow.graph import build_workflow_extract_graph
from hy_memory_langgraph.workflow.oa_context import (
    FileOAContextProvider,
    OAContextFunction,
    OAContextProvider,
    as_oa_context_provider,
    build_oa_context,
)
from hy_memory_langgraph.workflow.render import render_prompt
from hy_memory_langgraph.workflow.state import WorkflowContext
from hy_memory_langgraph.workflow.validation import validate_extract, workflow_scope_id

_OA_FAILED = ("OA_CONTEXT_FAILED", 502, "oaContext")

logger = logging.getLogger(__name__)


def _diagnosis(code: str, status: int, fail: str, data_empty: bool | None, message: str) -> dict[str, Any]:
    return {"code": code, "status": status, "fail": fail, "dataEmpty": data_empty, "message": message}


def oa_context_provider_from_config(config: MemoryConfig) -> OAContextProvider | None:
    """The OA context provider the configuration names, or ``None``.

    ``MEMORY_OA_CONTEXT_PROVIDER`` (``package.module:callable``) is imported and used as
    a provider (an object with ``get_oa_context``) or called with the user id;
    ``MEMORY_OA_CONTEXT_FILE`` becomes a :class:`FileOAContextProvider`.

    Raises:
        ConfigError: The spec no longer resolves (it was validated with the config).

    Example:
        >>> oa_context_provider_from_config(MemoryConfig.from_env({})) is None
        True
    """
    if config.oa_context_provider_spec is not None:
        target = resolve_object_spec("MEMORY_OA_CONTEXT_PROVIDER", config.oa_context_provider_spec)
        return as_oa_context_provider(target)
    if config.oa_context_file is not None:
        return FileOAContextProvider(config.oa_context_file)
    return None


class WorkflowMemoryService:
    """Workflow memory of every user, as markdown files under ``root``.

    Args:
        root: The directory (usually ``MemoryConfig.workflow_dir``), or a
            :class:`~hy_memory_langgraph.workflow.files.WorkflowDocuments` store.
        mode: ``"lite"`` (rules, zero LLM) or ``"pro"`` (one ``workflow_extract`` call).
        llm: The gateway used in pro mode (ignored in lite mode).
        oa_context_provider: Supplies ``oaContext`` (see :mod:`.oa_context`): an object
            with ``get_oa_context(user_id)`` or a function of the user id; ``None``
            → ``oaContext: null`` + ``oaContextMissing: true``.
        memory_supported: ``False`` → every call answers ``memoryNotSupported: true``.

    Example:
        >>> service = WorkflowMemoryService("/tmp/hy-doc-wf")  # doctest: +SKIP
        >>> service.memory_extract("u1", msg_list=[{"msgRole": "user",
        ...     "msgValue": '业务别名"报销"= 工作流"差旅报销"，workflowId=42'}])["saved"]  # doctest: +SKIP
        True
    """

    def __init__(self, root: str | Path | WorkflowDocuments, *, mode: str = "lite",
                 llm: LLMGateway | None = None,
                 oa_context_provider: OAContextProvider | OAContextFunction | None = None,
                 memory_supported: bool = True,
                 recorder: PipelineRecorder | None = None) -> None:
        self.files = workflow_documents(root)
        self.recorder = recorder
        self.mode = mode
        self.oa_context_provider = (None if oa_context_provider is None
                                    else as_oa_context_provider(oa_context_provider))
        self.memory_supported = memory_supported
        self.context = WorkflowContext(files=self.files, mode=mode, llm=llm if mode == "pro" else None,
                                       recorder=recorder)
        self.graph = build_workflow_extract_graph()

    # -- read ---------------------------------------------------------------------------
    def memory_prompt(self, user_id: str, workflow_id: str | None = None,
                      memory_app_id: str | None = None) -> dict[str, Any]:
        """The memory prompt of ``user_id`` (+ one workflow) and the OA context.

        Returns ``available``, ``memoryPrompt`` (markdown: profile, global, and the
        workflow section only when ``workflow_id`` is given; ``""`` when every section
        is empty), ``workflowId``, ``memoryAppId``, ``oaContext`` (``version``,
        ``smartGrouping``, ``user{position, department, subcompany, employeeId}``) or
        ``None`` with ``oaContextMissing: true``, ``memoryNotSupported``, ``dataEmpty``
        (no entry in any section read), ``counts`` (entries per section) and
        ``diagnosis`` (``None``, or ``{code, status, fail, dataEmpty, message}``).

        ``memory_app_id`` selects the storage scope: only what was saved under the same
        app id (or, when omitted, under none) is read.

        Never raises for run-time failures. A failing OA context provider leaves the
        memory body intact (``available: true``, ``oaContext: null``,
        ``oaContextMissing: true``) and is reported in ``diagnosis``
        (``OA_CONTEXT_FAILED``); unreadable files give ``available: false``. Bad
        arguments raise :class:`InvalidInputError`.

        Example:
            >>> service = WorkflowMemoryService("/tmp/hy-doc-wf")  # doctest: +SKIP
            >>> service.memory_prompt("u1", memory_app_id="crm")["available"]  # doctest: +SKIP
            True
        """
        user_id = require_id(user_id, "user_id")
        workflow_id = workflow_scope_id(workflow_id, "workflow_id (workflowId)")
        app_id = workflow_scope_id(memory_app_id, "memory_app_id (memoryAppId)")
        result: dict[str, Any] = {
            "available": False, "memoryPrompt": "", "workflowId": workflow_id, "memoryAppId": app_id,
            "oaContext": None, "oaContextMissing": True, "memoryNotSupported": False,
            "dataEmpty": None, "counts": {}, "diagnosis": None,
        }
        if not self.memory_supported:
            return self._unsupported(result)
        dims = ["user", "global"] + ([dimension_of(workflow_id)] if workflow_id else [])
        try:
            sections = {d: self.files.read(user_id, d, app_id) for d in dims}
        except WorkflowStorageError as exc:
            logger.warning("workflow memory unreadable: %s", exc)
            result["diagnosis"] = _diagnosis("STORAGE_UNREADABLE", 500, "storage", None, str(exc))
            return result
        data_empty = not any(sections.values())
        result.update(dataEmpty=data_empty, counts={d: len(e) for d, e in sections.items()})
        try:
            oa_context = self._oa_context(user_id)
        except MemoryNotSupportedError:
            return self._unsupported(result)
        except Exception as exc:  # noqa: BLE001 - a provider failure is reported, never raised
            logger.warning("OA context provider failed: %s", exc)
            oa_context = None
            result["diagnosis"] = _diagnosis(*_OA_FAILED, data_empty, f"{type(exc).__name__}: {exc}")
        result.update(available=True, memoryPrompt=render_prompt(sections),
                      oaContext=oa_context, oaContextMissing=oa_context is None)
        return result

    def _oa_context(self, user_id: str) -> dict[str, Any] | None:
        """The public ``oaContext`` (or ``None``); raises what the provider raises."""
        if self.oa_context_provider is None:
            return None
        raw = self.oa_context_provider.get_oa_context(user_id)
        if raw is None:
            return None
        if not isinstance(raw, Mapping):
            raise TypeError(f"the OA context provider returned {type(raw).__name__}; "
                            "expected a mapping or None")
        if raw.get("memorySupported") is False:
            raise MemoryNotSupportedError("the OA context says memory is not supported")
        return build_oa_context(raw)

    @staticmethod
    def _unsupported(result: dict[str, Any]) -> dict[str, Any]:
        result.update(memoryNotSupported=True,
                      diagnosis=_diagnosis("MEMORY_NOT_SUPPORTED", 501, "environment",
                                           result.get("dataEmpty"), "memory is not supported here"))
        return result

    def delete_user(self, user_id: str) -> int:
        """Erase every workflow-memory document of ``user_id`` (all app scopes) and the
        pipeline-log records of the user's requests."""
        removed = self.files.delete_user(require_id(user_id, "user_id"))
        if self.recorder is not None:
            self.recorder.forget_user(user_id)
        return removed

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
        ``memoryAppId`` and ``elapsed_ms``.

        ``memory_app_id`` selects the storage scope: entries are saved (and compared for
        duplicates) only among those of the same app id, or of none when omitted.

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
        validate_extract(**args)  # refused credentials raise before a callback or tracer sees them
        request_id = random_id()
        try:
            state = self.graph.invoke({"args": args, "started": time.perf_counter(),
                                       "request_id": request_id}, context=self.context)
        finally:
            if self.recorder is not None:
                self.recorder.flush(request_id, [user_id])
        return {**state["result"], "request_id": request_id}
