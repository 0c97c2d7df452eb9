"""Nodes: extract candidate memories, by one LLM call (pro) or by rules (lite)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from hy_memory_langgraph.messages.language import detect_text_language
from hy_memory_langgraph.pipeline_log.meter import note_fallback
from hy_memory_langgraph.prompts.replies import WorkflowExtract
from hy_memory_langgraph.services.llm import ask
from hy_memory_langgraph.workflow.files import dimension_of
from hy_memory_langgraph.workflow.lite import lite_candidates
from hy_memory_langgraph.workflow.render import prompt_rows
from hy_memory_langgraph.workflow.routing import context_workflow_id
from hy_memory_langgraph.workflow.state import (
    WorkflowContext,
    WorkflowExtractState,
)
from hy_memory_langgraph.workflow.validation import ExtractRequest

_STAGE = "workflow_extract"
#: Entries one extraction may save, whatever the model answers (the rest are dropped).
MAX_ENTRIES = 32


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
