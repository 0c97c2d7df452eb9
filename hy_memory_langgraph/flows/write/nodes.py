"""Nodes and edges that validate a write and choose its scene.

Routing (``docs/design.md#write-routing``):

* ``scene="chat"`` → tool traces stripped → chat pipeline, no judge.
* a productivity ``scene`` with a tool trace → that pipeline, no judge; without one →
  chat pipeline (fallback, logged).
* ``scene=None`` without tools → chat, zero LLM calls; with tools → one judge call on a
  bounded summary; failure or garbage → chat; judged chat → tools stripped. Lite mode
  has no judge: chat.
* ``MEMORY_CODING_ENABLED=false`` → everything goes to chat.

``route_write`` records the decision it can make without a model in ``route`` and
``route_reason``; ``judge_scene`` completes it when a judge is needed. The write arrives
prepared (:mod:`.prepare`, run by the client before the graph).
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.runtime import Runtime

from hy_memory_langgraph.flows.families import family_of
from hy_memory_langgraph.flows.write.state import WriteState
from hy_memory_langgraph.messages.language import detect_language
from hy_memory_langgraph.messages.render import judge_summary
from hy_memory_langgraph.messages.turns import has_tool_trace, strip_tool_trace
from hy_memory_langgraph.messages.types import Msg
from hy_memory_langgraph.pipeline_log.meter import note_fallback
from hy_memory_langgraph.prompts import scene_definitions
from hy_memory_langgraph.prompts.replies import SceneJudge
from hy_memory_langgraph.scenes import DEFAULT_SCENE, SCENES
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.llm import ask

logger = logging.getLogger(__name__)

#: ``route`` value while the scene judge still has to decide.
JUDGE = "judge"


def _route(scene: str | None, msgs: list[Msg], ctx: MemoryContext) -> tuple[str, str]:
    """``(route, reason)`` decided without a model; ``route == JUDGE`` when one must decide."""
    tools = has_tool_trace(msgs)
    if not ctx.config.coding.enabled:
        return DEFAULT_SCENE, "productivity_disabled"
    if scene is not None:
        if scene == DEFAULT_SCENE or tools:
            return scene, "explicit"
        logger.info("scene=%s without a tool trace: falling back to the chat pipeline", scene)
        return DEFAULT_SCENE, "explicit_without_tools"
    if not tools:
        return DEFAULT_SCENE, "no_tools"
    if ctx.llm is None:
        return DEFAULT_SCENE, "no_judge_model"
    return JUDGE, "judge_pending"


def route_write(state: WriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Record the route of a prepared write decided without a model (``route ==
    "judge"`` when the scene judge must decide) and why (``route_reason``)."""
    route, reason = _route(state.get("scene"), state["msgs"], runtime.context)
    return {"route": route, "route_reason": reason}


def route_after_route(state: WriteState, runtime: Runtime[MemoryContext]) -> str:
    """The next node: the judge, the tool stripper, or a scene pipeline."""
    route = state["route"]
    if route == JUDGE:
        return "judge_scene"
    family = family_of(route)
    if family is not None:
        return family.write_node
    return "strip_tools" if has_tool_trace(state["msgs"]) else route_to_chat(state, runtime)


def route_to_chat(state: WriteState, runtime: Runtime[MemoryContext]) -> str:
    """The chat pipeline of the mode: the pro subgraph, or lite's single node."""
    return "chat" if runtime.context.mode == "pro" else "store_turns"


def judge_scene(state: WriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """One classification call on a bounded summary; any failure means chat."""
    ctx = runtime.context
    msgs = state["msgs"]
    lang = detect_language(msgs)
    reply = ask(ctx.llm, "scene_judge", "scene_judge", lang, SceneJudge, summary=judge_summary(msgs),
                scene_definitions=scene_definitions("write", lang, SCENES))
    if reply is None:
        note_fallback("scene judge unusable: routed to chat")
        return {"route": DEFAULT_SCENE, "route_reason": "judge_failed"}
    return {"route": reply.scene, "route_reason": "judge"}


def route_after_judge(state: WriteState) -> str:
    family = family_of(state.get("route"))
    return "strip_tools" if family is None else family.write_node


def strip_tools(state: WriteState) -> dict[str, Any]:
    """Drop tool messages and tool calls; assistant text is kept."""
    return {"msgs": strip_tool_trace(state["msgs"]), "route": DEFAULT_SCENE}
