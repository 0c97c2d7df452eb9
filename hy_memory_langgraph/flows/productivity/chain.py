"""Coding version-evolution chain nodes (zero LLM, zero embedding).

* :func:`record_chain` (coding writes, lite and pro, after the fact is stored): the
  edits of the trace (:func:`~hy_memory_langgraph.chain.edits.extract_edits`) plus,
  when ``MEMORY_CODING_CHAIN_REPO_ROOT`` is set, the work-tree changes of the touched
  files (:class:`~hy_memory_langgraph.chain.git.GitWorkTree`) become rounds of the
  owner's threads. ``chain_rounds`` = hunks recorded. Best effort: any failure is
  logged and gives ``0``; the write itself never fails. Working writes record nothing.
* :func:`chain_block` (coding search): when ``config.coding.chain_block_active``,
  renders ``chain_block`` / ``chain_used`` for the recalled facts; otherwise (and on any
  failure) ``""`` / ``[]``.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from langgraph.runtime import Runtime

from hy_memory_langgraph.chain.edits import extract_edits
from hy_memory_langgraph.chain.git import GitWorkTree
from hy_memory_langgraph.chain.render import chain_context
from hy_memory_langgraph.chain.store import owner_of
from hy_memory_langgraph.flows.productivity.input import work_messages
from hy_memory_langgraph.flows.productivity.state import (
    ProductivitySearchState,
    ProductivityWriteState,
)
from hy_memory_langgraph.messages.files import files_from_tool_calls
from hy_memory_langgraph.messages.types import Msg
from hy_memory_langgraph.pipeline_log.meter import note_fallback
from hy_memory_langgraph.redact import redact_text
from hy_memory_langgraph.scenes import get_scene
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.timeutil import iso

log = logging.getLogger(__name__)


def record_chain(state: ProductivityWriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Record the write's edits in the chain; never raises."""
    if not get_scene(state["route"]).version_chain:
        return {}
    try:
        return {"chain_rounds": _record_write(state, runtime.context)}
    except Exception:  # best effort: the dual-layer write is already stored
        note_fallback("chain record failed: the write is kept with 0 rounds")
        log.warning("coding chain: recording failed for request %s; write kept",
                    state.get("request_id"), exc_info=True)
        return {"chain_rounds": 0}


def _asked_by_file(msgs: list[Msg], git: GitWorkTree) -> dict[str, str]:
    """Work-tree file → the last user words before the last tool call touching it."""
    asked, out = "", {}
    for m in msgs:
        if m.role == "user" and m.content.strip():
            asked = m.content.strip()
        if m.tool_calls:
            for path in files_from_tool_calls([m]):
                rel = git.relative(path)
                if rel:
                    out[rel] = asked
    return out


def _history_ask(state: ProductivityWriteState, ctx: MemoryContext) -> str:
    """The last user message of the earlier writes (for a write without user text)."""
    history = ctx.productivity_traces.recent_messages(state["user_id"], state.get("session_id"),
                                                      turns=1)
    return next((m.content.strip() for m in reversed(history)
                 if m.role == "user" and m.content.strip()), "")


def _record_write(state: ProductivityWriteState, ctx: MemoryContext) -> int:
    """Store the rounds of one coding write; returns the hunks recorded."""
    msgs = work_messages(state["msgs"])
    root = ctx.config.coding.chain_repo_root
    git = GitWorkTree(root, redact=redact_text if ctx.config.redact_secrets else None) if root else None
    owner = owner_of(state["user_id"], state.get("workspace_id"))
    branch = state.get("branch") or None

    def read(name: str) -> list[str] | None:
        rel = git.relative(name) if git else None
        return git.read_lines(rel) if git and rel else None

    edits = extract_edits(msgs, read=read if git else None, root=str(root) if root else None)
    if git is not None:
        touched = [*(state.get("touched_files") or files_from_tool_calls(msgs)),
                   *(e.file for e in edits)]
        skip = {rel for rel in (git.relative(e.file) for e in edits) if rel}
        edits += git.edits(ctx.chain_store, owner, branch, touched, skip=skip,
                           asked=_asked_by_file(msgs, git), position=len(msgs))
    if not edits:
        return 0
    if any(not e.asked for e in edits):
        fallback = _history_ask(state, ctx)
        edits = [e if e.asked else replace(e, asked=fallback) for e in edits]
    if ctx.config.redact_secrets:  # work-tree diffs never went through the message redaction
        edits = [replace(e, removed=tuple(map(redact_text, e.removed)),
                         added=tuple(map(redact_text, e.added)), asked=redact_text(e.asked))
                 for e in edits]
    recorded = ctx.chain_store.record(owner, branch, edits, request_id=state.get("request_id"),
                            fact_id=state.get("fact_id"), at=iso(state["at"]))
    return recorded.hunks


def chain_block(state: ProductivitySearchState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """``chain_block`` / ``chain_used`` of a coding search (``""`` / ``[]`` when off)."""
    if not get_scene(state["route"]).version_chain:
        return {}
    ctx = runtime.context
    facts = list(state.get("fact_hits") or [])
    if not ctx.config.coding.chain_block_active or not facts:
        return {"chain_block": "", "chain_used": []}
    try:
        block, used = chain_context(ctx.chain_store, facts, workspace_id=state.get("workspace_id"),
                                    branch=state.get("branch"))
    except Exception:  # best effort: the search result stands without the block
        note_fallback("chain block failed: the facts are returned without it")
        log.warning("coding chain: rendering failed for request %s", state.get("request_id"),
                    exc_info=True)
        return {"chain_block": "", "chain_used": []}
    return {"chain_block": block, "chain_used": used}
