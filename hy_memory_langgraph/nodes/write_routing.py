"""Nodes and edges that normalise a write and choose its scene.

Routing (seed 1 §1):

* ``scene="chat"`` → tool traces stripped → chat pipeline, no judge.
* ``scene="working"|"coding"`` with a tool trace → that pipeline, no judge; without
  one → chat pipeline (fallback, logged).
* ``scene=None`` without tools → chat, zero LLM calls; with tools → one judge call
  on a bounded summary; failure or garbage → chat; judged chat → tools stripped.
* ``MEMORY_CODING_ENABLED=false`` → everything goes to chat.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from typing import Any

from langgraph.runtime import Runtime

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.messages import (
    detect_language,
    has_tool_trace,
    judge_summary,
    normalize_messages,
    strip_tool_trace,
)
from hy_memory_langgraph.nodes.context import MemoryContext
from hy_memory_langgraph.nodes.llm import ask_json
from hy_memory_langgraph.nodes.parsing import as_choice
from hy_memory_langgraph.nodes.state import WriteState
from hy_memory_langgraph.prompts import scene_definitions
from hy_memory_langgraph.scenes import DEFAULT_SCENE, SCENES, is_productivity, validate_scene
from hy_memory_langgraph.timeutil import coerce_datetime, utcnow
from hy_memory_langgraph.ids import optional_id, require_id

__all__ = ["prepare_write", "judge_scene", "strip_tools",
           "route_after_prepare", "route_after_judge"]

logger = logging.getLogger("hy_memory_langgraph")


def _as_list(messages: Any) -> Any:
    """A bare string is one user message."""
    return [messages] if isinstance(messages, str) else messages


def prepare_write(state: WriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Validate the arguments and normalise the messages."""
    validate_scene(state.get("scene"))
    metadata = state.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InvalidInputError("metadata must be a dict of JSON-serialisable values or None")
    try:
        json.dumps(metadata, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"metadata must hold only JSON values (str, number, bool, None, list, dict): {exc}; "
            "convert e.g. datetimes with .isoformat()"
        ) from exc
    return {
        "request_id": state.get("request_id") or uuid.uuid4().hex,
        "started": state.get("started") or time.perf_counter(),
        "user_id": require_id(state.get("user_id"), "user_id"),
        "agent_id": optional_id(state.get("agent_id"), "agent_id"),
        "session_id": optional_id(state.get("session_id"), "session_id"),
        "workspace_id": optional_id(state.get("workspace_id"), "workspace_id"),
        "branch": optional_id(state.get("branch"), "branch"),
        "metadata": metadata,
        "at": coerce_datetime(state.get("memory_at"), "memory_at") or utcnow(),
        "msgs": normalize_messages(_as_list(state.get("messages"))),
    }


def route_after_prepare(state: WriteState, runtime: Runtime[MemoryContext]) -> str:
    """Pick the next node from the requested scene and the presence of tools."""
    scene, msgs = state.get("scene"), state["msgs"]
    tools = has_tool_trace(msgs)
    if not runtime.context.config.coding.enabled:
        return "strip_tools" if tools else "chat"
    if scene == "chat":
        return "strip_tools" if tools else "chat"
    if is_productivity(scene):
        if tools:
            return "productivity"
        logger.info("scene=%s without a tool trace: falling back to the chat pipeline", scene)
        return "chat"
    return "judge_scene" if tools else "chat"


def judge_scene(state: WriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """One classification call on a bounded summary; any failure means chat."""
    ctx = runtime.context
    msgs = state["msgs"]
    lang = detect_language(msgs)
    reply = ask_json(ctx.llm, "scene_judge", "scene_judge", lang, summary=judge_summary(msgs),
                     scene_definitions=scene_definitions("write", lang, SCENES))
    scene = as_choice((reply or {}).get("scene"), SCENES, DEFAULT_SCENE)
    reason = "judge" if reply else "judge_failed"
    return {"route": scene, "route_reason": reason}


def route_after_judge(state: WriteState) -> str:
    return "productivity" if is_productivity(state.get("route")) else "strip_tools"


def strip_tools(state: WriteState) -> dict[str, Any]:
    """Drop tool messages and tool calls; assistant text is kept."""
    return {"msgs": strip_tool_trace(state["msgs"]), "route": "chat"}
