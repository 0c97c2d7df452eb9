"""State and run-time context of the workflow-memory extraction graph."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from hy_memory_langgraph.models import LLMGateway
from hy_memory_langgraph.pipeline_log.recorder import PipelineRecorder
from hy_memory_langgraph.workflow.files import WorkflowDocuments
from hy_memory_langgraph.workflow.routing import Routed, Skipped
from hy_memory_langgraph.workflow.validation import ExtractRequest


@dataclass
class WorkflowContext:
    """``runtime.context`` of the graph: where documents live, the mode, the model."""

    files: WorkflowDocuments
    mode: str = "lite"
    llm: LLMGateway | None = None
    recorder: PipelineRecorder | None = None


class WorkflowExtractState(TypedDict, total=False):
    # input (the raw arguments of memory_extract)
    args: dict[str, Any]
    started: float
    request_id: str
    # derived
    request: ExtractRequest
    candidates: list[dict[str, Any]]
    source: str               # "llm" | "lite" | "lite_fallback"
    routed: list[Routed]
    skipped: list[Skipped]
    result: dict[str, Any]
