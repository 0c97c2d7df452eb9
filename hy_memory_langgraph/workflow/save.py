"""Nodes: decide each candidate's dimension, then dedupe/merge and save under the lock."""

from __future__ import annotations

import json
import time
from typing import Any

from langgraph.runtime import Runtime

from hy_memory_langgraph.workflow.entries import Entry
from hy_memory_langgraph.workflow.merge import merge_entry
from hy_memory_langgraph.workflow.routing import route_candidates
from hy_memory_langgraph.workflow.state import (
    WorkflowContext,
    WorkflowExtractState,
)


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
        "elapsed_ms": round((time.perf_counter() - state.get("started", time.perf_counter())) * 1000, 3),
    }
    return {"result": result}
