"""Nodes and edges that validate a write and choose its scene.

Routing (``docs/design.md#write-routing``):

* ``scene="chat"`` → tool traces stripped → chat pipeline, no judge.
* a productivity ``scene`` with a tool trace → that pipeline, no judge; without one →
  chat pipeline (fallback, logged).
* ``scene=None`` without tools → chat, zero LLM calls; with tools → one judge call on a
  bounded summary; failure or garbage → chat; judged chat → tools stripped. Lite mode
  has no judge: chat.
* ``MEMORY_CODING_ENABLED=false`` → everything goes to chat.

``prepare_write`` records the decision it can make without a model in ``route`` and
``route_reason``; ``judge_scene`` completes it when a judge is needed.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from langgraph.runtime import Runtime

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.flows.families import family_of
from hy_memory_langgraph.flows.write.state import WriteArgs, WriteState
from hy_memory_langgraph.ids import optional_id, random_id, require_id, scope_id
from hy_memory_langgraph.messages import (
    Msg,
    cap_message_bytes,
    detect_language,
    has_tool_trace,
    judge_summary,
    normalize_messages,
    redact_messages,
    strip_tool_trace,
)
from hy_memory_langgraph.models.parsing import as_choice
from hy_memory_langgraph.prompts import scene_definitions
from hy_memory_langgraph.redact import redact_text, redact_value
from hy_memory_langgraph.runlog.meter import note_fallback
from hy_memory_langgraph.scenes import (
    DEFAULT_SCENE,
    SCENES,
    validate_scene,
)
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.llm import ask_json
from hy_memory_langgraph.timeutil import coerce_datetime, utcnow
from hy_memory_langgraph.values import json_object

__all__ = ["judge_scene", "prepare_write", "redacted_write_args", "route_after_judge",
           "route_after_prepare", "route_to_chat", "strip_tools"]

logger = logging.getLogger(__name__)

#: ``route`` value while the scene judge still has to decide.
JUDGE = "judge"


def _as_list(messages: Any) -> Any:
    """A bare string is one user message."""
    return [messages] if isinstance(messages, str) else messages


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


def redacted_write_args(args: WriteArgs) -> WriteArgs:
    """``args`` with the secrets of its messages, metadata and scope ids replaced, what
    ``prepare_write`` would store: the client hands a graph these, so the callbacks and
    tracers of the run (LangSmith's, when a deployment traces) never see a secret.

    Messages and metadata are checked first (bad ones raise the errors ``prepare_write``
    raises); scope ids of another type than ``str`` are left to ``prepare_write``.

    Example:
        >>> args = redacted_write_args({"messages": "token: ghp_" + "a1B2c3D4e5" * 4, "user_id": "u"})
        >>> args["messages"][0].content
        'token: [REDACTED:github_token]'
    """
    out = dict(args)
    out["messages"] = redact_messages(normalize_messages(_as_list(args.get("messages"))))
    out["metadata"] = redact_value(json_object(args.get("metadata"), "metadata"))
    for field in ("workspace_id", "branch"):
        if isinstance(args.get(field), str):
            out[field] = redact_text(args[field])
    return out  # type: ignore[return-value]


def prepare_write(state: WriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Validate the arguments, normalise the messages and route what needs no model.

    Secrets are redacted first, then every message is held to ``MEMORY_MAX_MESSAGE_BYTES``
    (head and tail kept around a ``…[cut N bytes]…`` marker), so a cut never splits a
    secret into an unrecognisable fragment.
    """
    scene = validate_scene(state.get("scene"))
    metadata = json_object(state.get("metadata"), "metadata")
    msgs = normalize_messages(_as_list(state.get("messages")))
    config = runtime.context.config
    if config.redact_secrets:  # before anything is stored, embedded or sent (and cut)
        msgs, metadata = redact_messages(msgs), redact_value(metadata)
    msgs = cap_message_bytes(msgs, config.max_message_bytes)
    if not any(m.content.strip() or m.tool_calls for m in msgs):
        raise InvalidInputError(
            "messages holds nothing to remember (no text and no tool calls); pass at least one "
            "message with content, e.g. [{'role': 'user', 'content': 'I like green tea'}]")
    route, reason = _route(scene, msgs, runtime.context)
    return {
        "request_id": state.get("request_id") or random_id(),
        "started": state.get("started") or time.perf_counter(),
        "user_id": require_id(state.get("user_id"), "user_id"),
        "agent_id": optional_id(state.get("agent_id"), "agent_id"),
        "session_id": optional_id(state.get("session_id"), "session_id"),
        "workspace_id": scope_id(state.get("workspace_id"), "workspace_id", config.redact_secrets),
        "branch": scope_id(state.get("branch"), "branch", config.redact_secrets),
        "metadata": metadata,
        "at": coerce_datetime(state.get("memory_at"), "memory_at") or utcnow(),
        "msgs": msgs, "route": route, "route_reason": reason,
    }


def route_after_prepare(state: WriteState, runtime: Runtime[MemoryContext]) -> str:
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
    reply = ask_json(ctx.llm, "scene_judge", "scene_judge", lang, summary=judge_summary(msgs),
                     scene_definitions=scene_definitions("write", lang, SCENES))
    if reply is None:
        note_fallback("scene judge unusable: routed to chat")
    scene = as_choice((reply or {}).get("scene"), SCENES, DEFAULT_SCENE)
    return {"route": scene, "route_reason": "judge" if reply else "judge_failed"}


def route_after_judge(state: WriteState) -> str:
    family = family_of(state.get("route"))
    return "strip_tools" if family is None else family.write_node


def strip_tools(state: WriteState) -> dict[str, Any]:
    """Drop tool messages and tool calls; assistant text is kept."""
    return {"msgs": strip_tool_trace(state["msgs"]), "route": DEFAULT_SCENE}
