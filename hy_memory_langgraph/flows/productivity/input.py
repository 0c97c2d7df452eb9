"""Input side of the productivity write: language, prompt windows, new records.

Extractor input (``docs/design.md#extractor-input-windows``):

* ``NEW MESSAGES``: every message of this ``add()`` (system prompts excluded: they
  instruct the agent and are not part of the work), never cut by the history window.
* ``LAST 5 USER TURNS``: earlier writes of the same user and session, read back from
  the trace store (shared by working and coding), at most
  ``min(MEMORY_EXTRACT_HISTORY_TURNS, 5)`` user-turns; context only.
* Both are compressed the same way: tool results (and long tool-call arguments) cut to
  ``MEMORY_CODING_TOOL_RESULT_MAX_BYTES`` keeping head and tail, assistant text over
  6000 characters cut to its first and last 3000.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.flows.productivity.state import ProductivityWriteState
from hy_memory_langgraph.messages.compression import compress_for_prompt
from hy_memory_langgraph.messages.files import files_from_tool_calls
from hy_memory_langgraph.messages.language import detect_language
from hy_memory_langgraph.messages.render import transcript_rows
from hy_memory_langgraph.messages.turns import tool_names
from hy_memory_langgraph.messages.types import Msg
from hy_memory_langgraph.repos.productivity import ProductivityRepository, new_id
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.timeutil import iso

_SUBJECT_CHARS: Final = 80


def repo_of(state: ProductivityWriteState, ctx: MemoryContext) -> ProductivityRepository:
    """The repository of the write's scene."""
    return ctx.productivity_repo(state["route"])


def work_messages(msgs: list[Msg]) -> list[Msg]:
    """The messages that are part of the work (system prompts dropped)."""
    return [m for m in msgs if m.role != "system"]


def _compress(msgs: list[Msg], config: MemoryConfig) -> list[Msg]:
    """Prompt compression: tool results by bytes, assistant text by characters."""
    return compress_for_prompt(msgs, tool_result_max_bytes=config.coding.tool_result_max_bytes)


def new_message_rows(msgs: list[Msg], config: MemoryConfig) -> list[dict[str, Any]]:
    """``NEW MESSAGES``: all work messages of this call, compressed, as transcript rows."""
    return transcript_rows(_compress(work_messages(msgs), config))


def history_rows(ctx: MemoryContext, user_id: str, session_id: str | None) -> list[dict[str, Any]]:
    """``LAST 5 USER TURNS`` of the same user and session, compressed, as transcript rows."""
    turns = ctx.config.coding.prompt_history_turns
    history = ctx.productivity_traces.recent_messages(user_id, session_id, turns=turns)
    return transcript_rows(_compress(work_messages(history), ctx.config))


def prepare_productivity(state: ProductivityWriteState) -> dict[str, Any]:
    """Fix the prompt language and the files touched by the trace."""
    msgs = work_messages(state["msgs"])
    return {
        "lang": detect_language(msgs),
        "touched_files": files_from_tool_calls(msgs),
        "experience_drafts": [], "fact_draft": None, "experience_ops": [],
        "linked_experience_ids": [], "superseded_ids": [], "progress_summary": None,
        "fact_ops": [], "fact_id": None,
    }


def record_fields(state: ProductivityWriteState, kind: Literal["fact", "experience"]) -> dict[str, Any]:
    """Fields every new experience/fact of this write carries (id, scope, provenance, time)."""
    at = state["at"]
    return {
        "memory_id": new_id(kind, state["route"]), "user_id": state["user_id"],
        "variant": state["route"], "request_id": state["request_id"],
        "workspace_id": state.get("workspace_id"), "branch": state.get("branch"),
        "session_id": state.get("session_id"), "agent_id": state.get("agent_id"),
        "metadata": dict(state.get("metadata") or {}),
        "memory_at": iso(at), "memory_ts": at.timestamp(),
    }


def default_subject(msgs: list[Msg], files: list[str]) -> str:
    """Deterministic subject: the first file touched, else the first line of the first
    user message (at most 80 characters), else the last tool called."""
    if files:
        return files[0]
    for m in msgs:
        if m.role == "user" and m.content.strip():
            line = " ".join(m.content.strip().splitlines()[0].split())
            return line if len(line) <= _SUBJECT_CHARS else line[: _SUBJECT_CHARS - 1] + "…"
    names = tool_names(msgs)
    return names[-1] if names else ""


def merge_unique(*groups: list[str]) -> list[str]:
    """Concatenate string lists (files, keys, envs): first-seen order, blanks dropped."""
    seen: dict[str, None] = {}
    for group in groups:
        for path in group:
            if path and path.strip():
                seen.setdefault(path.strip(), None)
    return list(seen)
