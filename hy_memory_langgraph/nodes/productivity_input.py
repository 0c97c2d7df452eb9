"""Input side of the productivity write: variant, language, prompt windows, records.

Extractor input (seed 1 §3):

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

from typing import Any, Final

from langgraph.runtime import Runtime

from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.messages import (
    Msg,
    compress_for_prompt,
    detect_language,
    files_from_tool_calls,
    render_transcript,
    tool_names,
)
from hy_memory_langgraph.nodes.context import MemoryContext
from hy_memory_langgraph.nodes.state import WriteState
from hy_memory_langgraph.scenes import PRODUCTIVITY_SCENES
from hy_memory_langgraph.timeutil import iso, utcnow
from hy_memory_langgraph.repos.productivity import ACTIVE, Kind, ProductivityRepository, new_id

__all__ = [
    "ASSISTANT_MAX_CHARS", "ASSISTANT_KEEP_CHARS", "resolve_variant", "work_messages",
    "compress", "render_new_messages", "render_history", "prepare_productivity",
    "base_record", "default_subject", "merge_unique", "repo_of",
]

ASSISTANT_MAX_CHARS: Final = 6000
ASSISTANT_KEEP_CHARS: Final = 3000
_NONE: Final = {"en": "(none)", "zh": "（无）"}
_SUBJECT_CHARS: Final = 80


def resolve_variant(route: str | None, scene: str | None) -> str:
    """The judge's route when it chose working/coding, else the explicit scene."""
    for candidate in (route, scene):
        if candidate in PRODUCTIVITY_SCENES:
            return candidate
    raise ValueError(f"no productivity variant in route={route!r} / scene={scene!r}")


def repo_of(state: WriteState, ctx: MemoryContext) -> ProductivityRepository:
    """The repository of the write's variant."""
    return ctx.productivity_repo(state["variant"])


def work_messages(msgs: list[Msg]) -> list[Msg]:
    """The messages that are part of the work (system prompts dropped)."""
    return [m for m in msgs if m.role != "system"]


def compress(msgs: list[Msg], config: MemoryConfig) -> list[Msg]:
    """Prompt compression of seed 1 §3 (tool results by bytes, assistant text by chars)."""
    return compress_for_prompt(
        msgs,
        tool_result_max_bytes=config.coding.tool_result_max_bytes,
        assistant_max_chars=ASSISTANT_MAX_CHARS,
        assistant_keep_chars=ASSISTANT_KEEP_CHARS,
    )


def render_new_messages(msgs: list[Msg], config: MemoryConfig) -> str:
    """``NEW MESSAGES``: all work messages of this call, compressed."""
    return render_transcript(compress(work_messages(msgs), config))


def render_history(ctx: MemoryContext, user_id: str, session_id: str | None, lang: str) -> str:
    """``LAST 5 USER TURNS`` of the same user and session, compressed."""
    turns = ctx.config.coding.prompt_history_turns
    history = ctx.productivity_traces.recent_messages(user_id, session_id, turns=turns)
    text = render_transcript(compress(work_messages(history), ctx.config))
    return text or _NONE.get(lang, _NONE["en"])


def prepare_productivity(state: WriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Fix the variant, the prompt language and the files touched by the trace."""
    msgs = work_messages(state["msgs"])
    return {
        "variant": resolve_variant(state.get("route"), state.get("scene")),
        "lang": detect_language(msgs),
        "touched_files": files_from_tool_calls(msgs),
        "experience_drafts": [], "fact_draft": None, "experience_ops": [],
        "linked_experience_ids": [], "superseded_ids": [], "progress_summary": None,
        "fact_ops": [], "fact_id": None,
    }


def base_record(state: WriteState, kind: Kind) -> dict[str, Any]:
    """Fields every stored experience/fact carries (ids, scope, provenance, times)."""
    now = iso(utcnow())
    at = state["at"]
    return {
        "kind": kind, "memory_id": new_id(kind, state["variant"]),
        "user_id": state["user_id"], "variant": state["variant"],
        "request_id": state["request_id"], "workspace_id": state.get("workspace_id"),
        "branch": state.get("branch"), "session_id": state.get("session_id"),
        "agent_id": state.get("agent_id"), "metadata": dict(state.get("metadata") or {}),
        "memory_at": iso(at), "memory_ts": at.timestamp(), "status": ACTIVE,
        "created_at": now, "updated_at": now,
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
