"""Decide the final dimension of each candidate (the ``workflow_id`` argument is a hint).

Rules, in order:

1. An alias → workflow mapping (``alias`` + ``workflow_name`` given, or an alias fact
   sentence in ``text``) goes to ``global``, whatever dimension was proposed and
   whatever ``workflow_id`` was passed. Its target id must appear in the exchange
   (messages, hint or dynamic context); an id seen nowhere is never trusted and
   becomes ``（待确认）``.
2. ``workflow`` needs the id of its workflow: the candidate's, else the hint, else
   ``dynamicContext.workflowId``; none → skipped (``no_workflow_id``).
3. ``user`` → ``user.md`` (``pref``); ``global`` → ``memory.md`` (``fact``).
4. Anything carrying a credential is dropped (``credentials``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hy_memory_langgraph.workflow.credentials import find_credential
from hy_memory_langgraph.workflow.entries import (
    PENDING_ID,
    Entry,
    normalize_target_id,
    one_line,
)
from hy_memory_langgraph.workflow.files import dimension_of
from hy_memory_langgraph.workflow.lite import parse_alias_sentence

__all__ = ["Routed", "Skipped", "context_workflow_id", "route_candidates"]

_CONTEXT_ID_KEYS = ("workflowId", "workflow_id", "workflowID", "wfId")


@dataclass(frozen=True)
class Routed:
    dimension: str          # "user" | "global" | "workflow:{id}"
    entry: Entry


@dataclass(frozen=True)
class Skipped:
    text: str
    reason: str
    dimension: str | None = None


def context_workflow_id(dynamic_context: dict[str, Any]) -> str | None:
    for key in _CONTEXT_ID_KEYS:
        value = dynamic_context.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    return None


def _alias_entry(alias: str, name: str, target: Any, corpus: str) -> Entry:
    tid = normalize_target_id(target)
    if tid != PENDING_ID and tid not in corpus:
        tid = PENDING_ID  # never trust an id that the exchange does not show
    return Entry.make_alias(alias, name, tid)


def _route_one(c: dict[str, Any], hint: str | None, ctx_id: str | None, corpus: str) -> Routed | Skipped:
    text = one_line(c.get("text"))
    alias, name = one_line(c.get("alias")), one_line(c.get("workflow_name"))
    if alias and name:
        return Routed("global", _alias_entry(alias, name, c.get("workflow_id"), corpus))
    parsed = parse_alias_sentence(text) if text else []
    if parsed:
        a = parsed[0]
        return Routed("global", _alias_entry(a["alias"], a["workflow_name"], a["workflow_id"], corpus))
    if not text:
        return Skipped(text, "empty")
    dimension = str(c.get("dimension") or "").strip().lower()
    key = c.get("key") if isinstance(c.get("key"), str) else None
    if dimension == "workflow":
        wid = normalize_target_id(c.get("workflow_id"))
        wid = wid if wid != PENDING_ID else (hint or ctx_id)
        if not wid:
            return Skipped(text, "no_workflow_id", "workflow")
        return Routed(dimension_of(wid), Entry.make("rule", text, key))
    if dimension == "user":
        return Routed("user", Entry.make("pref", text, key))
    if dimension == "global":
        return Routed("global", Entry.make("fact", text, key))
    return Skipped(text, "invalid_dimension", dimension or None)


def route_candidates(candidates: list[dict[str, Any]], *, hint: str | None,
                     dynamic_context: dict[str, Any], corpus: str) -> tuple[list[Routed], list[Skipped]]:
    """Split candidates into routed entries and skipped ones (with the reason)."""
    routed: list[Routed] = []
    skipped: list[Skipped] = []
    ctx_id = context_workflow_id(dynamic_context)
    for c in candidates:
        if not isinstance(c, dict):
            skipped.append(Skipped(one_line(c), "invalid_entry"))
            continue
        blob = " ".join(one_line(c.get(k)) for k in ("text", "alias", "workflow_name", "workflow_id"))
        if find_credential(blob):
            skipped.append(Skipped(one_line(c.get("text")), "credentials"))
            continue
        outcome = _route_one(c, hint, ctx_id, corpus)
        if isinstance(outcome, Routed):
            routed.append(outcome)
        else:
            skipped.append(outcome)
    return routed, skipped
