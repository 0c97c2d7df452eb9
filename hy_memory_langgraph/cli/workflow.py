"""``hy-memory workflow run OP``: the workflow-memory operations, JSON in, JSON out.

Operations: ``workflow.memoryPrompt`` (input ``{"workflowId"?, "memoryAppId"?}``) and
``workflow.memoryExtract`` (input ``{"msgList"? | "userMessage"+"assistantMessage",
"workflowId"?, "dynamicContext"?, "memoryAppId"?, "async"?}``). Success prints
``{"ok": true, "data": {...}}`` (exit 0); bad input prints
``{"ok": false, "error": {"code", "message"}}`` (exit 2; exit 1 for internal errors).
``memoryPrompt`` only reads: a data dir that does not exist is refused.

The OA context comes from ``MEMORY_OA_CONTEXT_PROVIDER`` or ``MEMORY_OA_CONTEXT_FILE``
(see :mod:`hy_memory_langgraph.config`); an invalid value is a ``CONFIG_ERROR``. The
arguments are in :mod:`~hy_memory_langgraph.cli.parsers`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hy_memory_langgraph.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    CliError,
    dump_json,
    existing_data_dir,
    user_id_of,
)
from hy_memory_langgraph.cli.session import checked_json
from hy_memory_langgraph.client.stores import workflow_documents_for
from hy_memory_langgraph.client.workflow import WorkflowMemoryService, oa_context_provider_from_config
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import ConfigError, InvalidInputError
from hy_memory_langgraph.models import LLMGateway, resolve_chat_model, resolve_mode
from hy_memory_langgraph.workflow.errors import CredentialsRefusedError

_PROMPT_KEYS = ("workflowId", "memoryAppId")
_EXTRACT_KEYS = ("msgList", "userMessage", "assistantMessage", "workflowId", "dynamicContext",
                 "memoryAppId", "async")


def _check_keys(payload: dict[str, Any], allowed: tuple[str, ...], op: str) -> None:
    unknown = sorted(set(payload) - set(allowed))
    if unknown:
        raise CliError("INVALID_INPUT", f"{op}: unknown input field(s) {', '.join(unknown)}; "
                                        f"allowed: {', '.join(allowed)}")


def _memory_prompt(service: WorkflowMemoryService, user_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    _check_keys(payload, _PROMPT_KEYS, "workflow.memoryPrompt")
    return service.memory_prompt(user_id, payload.get("workflowId"), payload.get("memoryAppId"))


def _memory_extract(service: WorkflowMemoryService, user_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    _check_keys(payload, _EXTRACT_KEYS, "workflow.memoryExtract")
    if "async" in payload and not isinstance(payload["async"], bool):
        raise CliError("INVALID_INPUT", "async must be a boolean (the call is always synchronous)")
    return service.memory_extract(
        user_id, msg_list=payload.get("msgList"), user_message=payload.get("userMessage"),
        assistant_message=payload.get("assistantMessage"), workflow_id=payload.get("workflowId"),
        dynamic_context=payload.get("dynamicContext"), memory_app_id=payload.get("memoryAppId"),
    )


#: Operations that only read (their data dir must exist).
_READ_ONLY = frozenset({"workflow.memoryPrompt"})

_OPERATIONS: dict[str, Callable[[WorkflowMemoryService, str, dict[str, Any]], dict[str, Any]]] = {
    "workflow.memoryPrompt": _memory_prompt,
    "workflow.memoryExtract": _memory_extract,
}


def _service_from_env(mode: str | None = None, data_dir: str | Path | None = None) -> WorkflowMemoryService:
    """A service on the workflow dir of ``data_dir`` (default ``MEMORY_DATA_DIR``).

    ``mode=None``: pro when a chat model is configured (``OPENAI_API_KEY``), else lite.
    The OA context provider is the configured one (``MEMORY_OA_CONTEXT_PROVIDER`` /
    ``MEMORY_OA_CONTEXT_FILE``), if any.
    """
    config = MemoryConfig.from_env()
    chat_model = None if mode == "lite" else resolve_chat_model(None)
    resolved = resolve_mode(mode, chat_model)
    gateway = LLMGateway(chat_model) if resolved == "pro" and chat_model is not None else None
    config = MemoryConfig.from_env(data_dir=None if data_dir is None else Path(data_dir).expanduser())
    return WorkflowMemoryService(workflow_documents_for(config), mode=resolved, llm=gateway,
                                 oa_context_provider=oa_context_provider_from_config(config))


def _load_input(input_json: str | None, input_file: str | None) -> dict[str, Any]:
    """The operation input from ``--input-json`` or ``--input FILE`` (``-`` = stdin)."""
    if input_json is not None and input_file is not None:
        raise CliError("INVALID_INPUT", "pass either --input-json or --input, not both")
    if input_file is not None:
        try:
            text = sys.stdin.read() if input_file == "-" else Path(input_file).read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise CliError("INVALID_INPUT", f"cannot read --input {input_file}: {exc}") from exc
        source = f"--input {input_file}"
    else:
        text, source = (input_json if input_json is not None else "{}"), "--input-json"
    try:
        payload = json.loads(checked_json(text, source))
    except json.JSONDecodeError as exc:
        raise CliError("INVALID_JSON", f"{source} is not valid JSON: {exc}") from exc
    except InvalidInputError as exc:
        raise CliError("INVALID_INPUT", str(exc)) from exc
    if not isinstance(payload, dict):
        raise CliError("INVALID_JSON", f"{source} must be a JSON object, got {type(payload).__name__}")
    return payload


def _run_operation(op: str, payload: dict[str, Any], *, user_id: str,
                  service_factory: Callable[[], WorkflowMemoryService]) -> tuple[dict[str, Any], int]:
    """Run one operation; returns ``(envelope, exit code)`` and never raises."""
    try:
        handler = _OPERATIONS.get(op)
        if handler is None:
            raise CliError("UNKNOWN_OPERATION", f"unknown operation {op!r}; known: {', '.join(_OPERATIONS)}")
        return {"ok": True, "data": handler(service_factory(), user_id, payload)}, EXIT_OK
    except CliError as exc:
        return {"ok": False, "error": {"code": exc.code, "message": exc.message}}, exc.exit_code
    except CredentialsRefusedError as exc:
        return {"ok": False, "error": {"code": "CREDENTIALS_REFUSED", "message": str(exc)}}, EXIT_BAD_INPUT
    except InvalidInputError as exc:
        return {"ok": False, "error": {"code": "INVALID_INPUT", "message": str(exc)}}, EXIT_BAD_INPUT
    except ConfigError as exc:
        return {"ok": False, "error": {"code": "CONFIG_ERROR", "message": str(exc)}}, EXIT_BAD_INPUT
    except Exception as exc:  # noqa: BLE001 - the CLI reports every failure as an envelope
        return ({"ok": False, "error": {"code": "INTERNAL_ERROR", "message": f"{type(exc).__name__}: {exc}"}},
                EXIT_INTERNAL)


def run(args: argparse.Namespace) -> int:
    """``workflow run OP``: always prints one JSON envelope and returns its exit code."""
    try:
        payload = _load_input(args.input_json, args.input_file)
        user_id = user_id_of(args)
        data_dir = existing_data_dir(args) if args.op in _READ_ONLY else getattr(args, "data_dir", None)
    except CliError as exc:
        envelope, code = {"ok": False, "error": {"code": exc.code, "message": exc.message}}, exc.exit_code
    else:
        envelope, code = _run_operation(
            args.op, payload, user_id=user_id,
            service_factory=lambda: _service_from_env(args.mode, data_dir))
    print(dump_json(envelope, compact=bool(args.json)))
    return code
