"""The one extraction call of a productivity write, and its output parsing.

The scene registry names the instructions (``productivity_extract_working`` or
``productivity_extract_coding``), the NEW user messages pick the language. The reply
gives experiences (reusable how-to) and one fact (this write's episodic record).

Files: the files the trace touched (tool-call arguments, patch/diff headers) are merged
into the fact's files, and into each experience whose text names them (by path or by
file name), so the LLM cannot drop them and experiences do not collect unrelated ones.

When the model validly yields no fact (``"fact": null``) and
``MEMORY_CODING_VERBATIM_FALLBACK_ENABLED`` is on, the fact becomes the raw user text
with the compressed trace as details; when it is off, no fact is stored.

When the extraction itself failed (the call raised, the reply held no JSON object, or
the object has neither ``experiences`` nor ``fact``, or a ``fact`` that is not a valid
fact), the write is never lost: the fact is the verbatim one when that fallback is on,
else the deterministic lite fact (:func:`deterministic_fact`), and the state carries
``fallback="extract_failed"`` so the result reports it.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any, Final

from langgraph.runtime import Runtime

from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.flows.productivity.input import (
    default_subject,
    history_rows,
    merge_unique,
    new_message_rows,
    work_messages,
)
from hy_memory_langgraph.flows.productivity.lite import deterministic_fact
from hy_memory_langgraph.flows.productivity.state import ProductivityWriteState
from hy_memory_langgraph.messages.compression import truncate_chars_head_tail
from hy_memory_langgraph.messages.turns import user_text
from hy_memory_langgraph.messages.types import Msg
from hy_memory_langgraph.pipeline_log.meter import note_fallback
from hy_memory_langgraph.prompts.replies import ExperienceDraft, FactDraft, ProductivityExtract
from hy_memory_langgraph.scenes import get_scene
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.llm import ask
from hy_memory_langgraph.timeutil import prompt_time

MAX_SEARCH_KEYS: Final = 5
_MAX_EXPERIENCES: Final = 8
_MAX_DETAILS_CHARS: Final = 4000
_MAX_VERBATIM_STATEMENT: Final = 6000
_MAX_VERBATIM_DETAILS: Final = 20000
_DEFAULT_CONFIDENCE: Final = 0.5
#: ``fallback`` marker of a write whose extraction call failed or gave unusable output.
_EXTRACT_FAILED: Final = "extract_failed"


def extract_productivity(state: ProductivityWriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """One LLM call: experience drafts and the fact draft of this write."""
    ctx = runtime.context
    lang = state["lang"]
    reply = ask(
        ctx.llm, f"{state['route']}_extract", get_scene(state["route"]).extract_prompt or "", lang,
        ProductivityExtract, memory_at=prompt_time(state["at"]), workspace=state.get("workspace_id") or "",
        branch=state.get("branch") or "",
        history=history_rows(ctx, state["user_id"], state.get("session_id")),
        new_messages=new_message_rows(state["msgs"], ctx.config),
    )
    drafts, fact = parse_extraction(reply, state["touched_files"])
    failed = _extraction_failed(reply, fact)
    if fact is None and (failed or ctx.config.coding.verbatim_fallback_enabled):
        if ctx.config.coding.verbatim_fallback_enabled:
            fact = _verbatim_fact(state["msgs"], state["touched_files"], ctx.config)
        if fact is None and failed:
            fact = deterministic_fact(state["msgs"], state["touched_files"], lang)
    if failed:
        note_fallback(f"extraction unusable: the {fact['source'] if fact else 'no'} fact is stored")
    return {"experience_drafts": drafts, "fact_draft": fact,
            "fallback": _EXTRACT_FAILED if failed else None}


def _extraction_failed(reply: ProductivityExtract | None, fact: dict[str, Any] | None) -> bool:
    """Whether the extraction failed, as opposed to validly returning no fact.

    Failed: no reply (call raised, no JSON object), an object with neither
    ``experiences`` nor ``fact``, or a non-empty ``fact`` that does not parse.
    """
    if reply is None or not reply.answered:
        return True
    return fact is None and reply.fact is not None and reply.fact != {}


def parse_extraction(reply: ProductivityExtract | None,
                     touched: list[str]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Experience drafts and the fact draft of a reply, with the files the trace touched.

    Experiences need a task and a solution (the first of a task is kept); a fact needs a
    statement. Anything else is dropped, never raised on.
    """
    if reply is None:
        return [], None
    drafts: list[dict[str, Any]] = []
    for raw in reply.experiences:
        draft = _experience(raw, touched)
        if draft is not None and all(d["task"] != draft["task"] for d in drafts):
            drafts.append(draft)
        if len(drafts) >= _MAX_EXPERIENCES:
            break
    return drafts, _fact(reply.fact_draft, touched)


def _experience(raw: ExperienceDraft, touched: list[str]) -> dict[str, Any] | None:
    if not raw.task or not raw.solution:
        return None
    draft: dict[str, Any] = {
        "task": raw.task,
        "search_keys": [k for k in raw.search_keys if k != raw.task][:MAX_SEARCH_KEYS],
        "solution": raw.solution,
        "boundary_envs": raw.boundary_envs,
        "confidence": _DEFAULT_CONFIDENCE if raw.confidence is None else raw.confidence,
        "files": raw.files,
    }
    text = " ".join([raw.task, raw.solution, *draft["search_keys"], *draft["boundary_envs"]])
    draft["files"] = merge_unique(draft["files"], [f for f in touched if _named_in(f, text)])
    return draft


def _named_in(path: str, text: str) -> bool:
    base = posixpath.basename(path.rstrip("/"))
    return path in text or (len(base) >= 3 and base in text)


def _fact(raw: FactDraft | None, touched: list[str]) -> dict[str, Any] | None:
    if raw is None or not raw.statement:
        return None
    files = merge_unique(raw.files, touched)
    return {
        "subject": raw.subject or (files[0] if files else ""),
        "statement": raw.statement,
        "files": files,
        "details": truncate_chars_head_tail(raw.details, _MAX_DETAILS_CHARS, _MAX_DETAILS_CHARS // 2),
        "source": "extract",
    }


def _transcript_text(msgs: list[Msg], config: MemoryConfig) -> str:
    """The compressed work messages as text: one JSON object per message."""
    return "\n".join(json.dumps(row, ensure_ascii=False) for row in new_message_rows(msgs, config))


def _verbatim_fact(msgs: list[Msg], touched: list[str], config: MemoryConfig) -> dict[str, Any] | None:
    """The fallback fact: raw user text as statement, compressed trace as details."""
    work = work_messages(msgs)
    statement = user_text(work).strip()
    if not statement:
        return None
    half = _MAX_VERBATIM_STATEMENT // 2
    return {
        "subject": default_subject(work, touched),
        "statement": truncate_chars_head_tail(statement, _MAX_VERBATIM_STATEMENT, half),
        "files": list(touched),
        "details": truncate_chars_head_tail(_transcript_text(work, config),
                                            _MAX_VERBATIM_DETAILS, _MAX_VERBATIM_DETAILS // 2),
        "source": "verbatim",
    }
