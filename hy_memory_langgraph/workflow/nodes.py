"""The nodes of the workflow-memory extraction graph: validate the ``memory_extract``
arguments (refusing credentials), extract candidate memories by one LLM call (pro) or by
rules (lite), decide each candidate's dimension, then dedupe, merge and save under the
user's lock."""

from __future__ import annotations

import json
from typing import Any

from langgraph.runtime import Runtime

from hy_memory_langgraph.messages.language import detect_text_language
from hy_memory_langgraph.pipeline_log.meter import note_fallback
from hy_memory_langgraph.prompts.replies import WorkflowExtract
from hy_memory_langgraph.services.llm import ask
from hy_memory_langgraph.timeutil import elapsed_ms
from hy_memory_langgraph.workflow.entries import Entry
from hy_memory_langgraph.workflow.files import dimension_of
from hy_memory_langgraph.workflow.lite import lite_candidates
from hy_memory_langgraph.workflow.merge import merge_entry
from hy_memory_langgraph.workflow.render import prompt_rows
from hy_memory_langgraph.workflow.routing import context_workflow_id, route_candidates
from hy_memory_langgraph.workflow.state import WorkflowContext, WorkflowExtractState
from hy_memory_langgraph.workflow.validation import ExtractRequest, validate_extract

_STAGE = "workflow_extract"
#: Entries one extraction may save, whatever the model answers (the rest are dropped).
MAX_ENTRIES = 32


def validate_input(state: WorkflowExtractState) -> dict[str, Any]:
    """Validate the arguments; raises :class:`~hy_memory_langgraph.errors.InvalidInputError`
    on bad input (credentials among them)."""
    return {"request": validate_extract(**state["args"])}


def route_by_mode(state: WorkflowExtractState, runtime: Runtime[WorkflowContext]) -> str:
    ctx = runtime.context
    return "extract_llm" if ctx.mode == "pro" and ctx.llm is not None else "extract_lite"


def _existing(ctx: WorkflowContext, request: ExtractRequest) -> list[str]:
    dims = ["user", "global"]
    for wid in (request.workflow_id, context_workflow_id(request.dynamic_context)):
        if wid and dimension_of(wid) not in dims:
            dims.append(dimension_of(wid))
    return prompt_rows({d: ctx.files.read(request.user_id, d, request.memory_app_id) for d in dims})


def _valid_entries(reply: WorkflowExtract | None) -> list[dict[str, Any]] | None:
    """The usable entries of a reply, or ``None`` when the reply is garbage (no reply, or
    entries given and none usable)."""
    if reply is None or (reply.given and not reply.entries):
        return None
    if len(reply.entries) > MAX_ENTRIES:
        note_fallback(f"workflow extraction gave {len(reply.entries)} entries: the first {MAX_ENTRIES} are kept")
    return [entry.model_dump() for entry in reply.entries[:MAX_ENTRIES]]


def extract_llm(state: WorkflowExtractState, runtime: Runtime[WorkflowContext]) -> dict[str, Any]:
    """One ``workflow_extract`` call; garbage → the lite rules (``lite_fallback``)."""
    ctx, request = runtime.context, state["request"]
    user_text = "\n".join(m.text for m in request.messages if m.role == "user")
    parsed = ask(
        ctx.llm, _STAGE, "workflow_extract", detect_text_language(user_text), WorkflowExtract,
        messages=[{m.role: m.text} for m in request.messages],
        workflow_id=request.workflow_id or "",
        dynamic_context=request.dynamic_context,
        existing=_existing(ctx, request),
    )
    entries = _valid_entries(parsed)
    if entries is None:
        note_fallback("workflow extraction unusable: the lite rules are applied")
        return {"candidates": lite_candidates(request.messages), "source": "lite_fallback"}
    return {"candidates": entries, "source": "llm"}


def extract_lite(state: WorkflowExtractState) -> dict[str, Any]:
    """Deterministic rules, zero LLM calls."""
    return {"candidates": lite_candidates(state["request"].messages), "source": "lite"}


def route_dimensions(state: WorkflowExtractState) -> dict[str, Any]:
    request = state["request"]
    corpus = "\n".join([*(m.text for m in request.messages), request.workflow_id or "",
                        json.dumps(request.dynamic_context, ensure_ascii=False)])
    routed, skipped = route_candidates(state.get("candidates", []), hint=request.workflow_id,
                                       dynamic_context=request.dynamic_context, corpus=corpus)
    return {"routed": routed, "skipped": skipped}


def _item(dimension: str, entry: Entry, **extra: Any) -> dict[str, Any]:
    item = {"dimension": dimension, "kind": entry.kind, "line": entry.line()}
    if entry.kind == "alias":
        item.update(alias=entry.alias, workflowName=entry.workflow_name, workflowId=entry.target_id)
    item.update(extra)
    return item


def merge_and_save(state: WorkflowExtractState, runtime: Runtime[WorkflowContext]) -> dict[str, Any]:
    """Re-read every touched document inside the user's lock, merge, write atomically.

    Documents are those of the request's memory app id (a storage scope of its own).
    """
    files, request = runtime.context.files, state["request"]
    app_id = request.memory_app_id
    saved: list[dict[str, Any]] = []
    skipped = [{"dimension": s.dimension, "text": s.text, "reason": s.reason}
               for s in state.get("skipped", [])]
    routed = state.get("routed", [])
    if routed:
        with files.locked(request.user_id):
            docs: dict[str, list[Entry]] = {}
            changed: set[str] = set()
            for r in routed:
                doc = docs.setdefault(r.dimension, files.read(request.user_id, r.dimension, app_id))
                outcome = merge_entry(doc, r.entry)
                if outcome.status == "skipped":
                    skipped.append(_item(r.dimension, r.entry, reason=outcome.reason))
                    continue
                changed.add(r.dimension)
                extra: dict[str, Any] = {"status": outcome.status,
                                         "file": files.relative(request.user_id, r.dimension, app_id)}
                if outcome.previous is not None:
                    extra["previous"] = outcome.previous.line()
                saved.append(_item(r.dimension, outcome.entry or r.entry, **extra))
            for dimension in sorted(changed):
                files.write(request.user_id, dimension, docs[dimension], app_id)
    result = {
        "saved": bool(saved),
        "entries": saved,
        "skipped": skipped,
        "source": state.get("source"),
        "mode": runtime.context.mode,
        "workflowId": request.workflow_id,
        "memoryAppId": request.memory_app_id,
        "elapsed_ms": elapsed_ms(state["started"]),
    }
    return {"result": result}
