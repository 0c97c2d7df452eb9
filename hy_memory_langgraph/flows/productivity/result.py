"""Last node of a productivity write: record the trace, build the result
(``docs/design.md#return-shapes``)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from hy_memory_langgraph.flows.contracts import ops_summary
from hy_memory_langgraph.flows.productivity.facts import FACT_OPS
from hy_memory_langgraph.flows.productivity.input import work_messages
from hy_memory_langgraph.flows.productivity.state import ProductivityWriteState
from hy_memory_langgraph.prompts.replies import EXPERIENCE_OPS
from hy_memory_langgraph.scenes import get_scene
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.journal import Journal
from hy_memory_langgraph.timeutil import elapsed_ms


def finish_productivity(state: ProductivityWriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Append this call's messages to the shared trace store and return the result."""
    traces = runtime.context.productivity_traces
    journal = Journal.of(traces.store, state, "finish")
    done = journal.replay()
    if done is not None:
        return done
    ops = list(state.get("experience_ops") or [])
    fact_ops = list(state.get("fact_ops") or [])
    fact_id = state.get("fact_id")
    result: dict[str, Any] = {
        "success": True,
        "scene": "productivity",
        "request_id": state["request_id"],
        "ops": ops,
        "ops_summary": ops_summary(ops, EXPERIENCE_OPS),
        "experience_ids": [op["memory_id"] for op in ops if op["op"] != "SKIP"],
        "fact_ops": fact_ops,
        "fact_ops_summary": ops_summary(fact_ops, FACT_OPS),
        "fact_ids": [fact_id] if fact_id else [],
        "memory_id": fact_id,
        "elapsed_ms": elapsed_ms(state["started"]),
    }
    if state.get("fallback"):  # extraction failed: the stored fact is a fallback one
        result["fallback"] = state["fallback"]
    result.update(get_scene(state["route"]).extras("write", state))
    traces.append(state["user_id"], state.get("session_id"), work_messages(state["msgs"]),
                  scene=state["route"], extra=journal.ops({"result": result}))
    return {"result": result}
