"""Decide the final dimension of each candidate (the ``workflow_id`` argument is a hint).

Rules, in order:

1. An alias → workflow mapping (``alias`` given, or an alias fact sentence in
   ``text``) goes to ``global``, whatever dimension was proposed and whatever
   ``workflow_id`` was passed. A name in display form ``名称(ID)`` is split. A missing
   id (not an explicit ``（待确认）``) is taken from the hint, else
   ``dynamicContext.workflowId`` — only when exactly one alias of the call lacks one.
   The id must appear in the exchange (messages, hint or dynamic context); an id
   seen nowhere is never trusted and becomes ``（待确认）``. An alias with neither a
   name nor an id is skipped (``unresolved``).
2. ``workflow`` needs the id of its workflow: the candidate's, else the hint, else
   ``dynamicContext.workflowId``. Without one, a text that names its workflow
   (``在国内差旅费用报销流程里…``) is a ``global`` fact; any other is skipped
   (``no_workflow_id``) — a clarification of "this workflow" never lands in global.
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
from hy_memory_langgraph.workflow.lite.aliases import parse_alias_sentence
from hy_memory_langgraph.workflow.lite.patterns import names_workflow
from hy_memory_langgraph.workflow.lite.patterns import split_display

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


@dataclass(frozen=True)
class _Ids:
    """The ids a candidate may borrow: the hint, the dynamic context's, and the corpus."""

    hint: str | None
    context: str | None
    corpus: str
    fill_alias: bool  # exactly one alias of the call lacks an id


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _alias_entry(alias: str, name: Any, target: Any, ids: _Ids) -> Entry | None:
    name, display_id = split_display(one_line(name))
    if _missing(target):
        target = display_id or ((ids.hint or ids.context) if ids.fill_alias else None)
    tid = normalize_target_id(target)
    if tid != PENDING_ID and tid not in ids.corpus:
        tid = PENDING_ID  # never trust an id that the exchange does not show
    entry = Entry.make_alias(alias, name, tid)
    return None if entry.pending and entry.name_pending else entry


def _alias_fields(c: dict[str, Any], text: str) -> tuple[str, Any, Any] | None:
    alias = one_line(c.get("alias"))
    if alias:
        return alias, c.get("workflow_name"), c.get("workflow_id")
    parsed = parse_alias_sentence(text) if text else []
    if parsed:
        return parsed[0]["alias"], parsed[0]["workflow_name"], parsed[0]["workflow_id"]
    return None


def _route_workflow(c: dict[str, Any], text: str, key: str | None, ids: _Ids) -> Routed | Skipped:
    wid = normalize_target_id(c.get("workflow_id"))
    wid = wid if wid != PENDING_ID else (ids.hint or ids.context)
    if wid:
        return Routed(dimension_of(wid), Entry.make("rule", text, key))
    if names_workflow(text):
        return Routed("global", Entry.make("fact", text, key))
    return Skipped(text, "no_workflow_id", "workflow")


def _route_one(c: dict[str, Any], ids: _Ids) -> Routed | Skipped:
    text = one_line(c.get("text"))
    fields = _alias_fields(c, text)
    if fields is not None:
        entry = _alias_entry(*fields, ids)
        return Routed("global", entry) if entry else Skipped(text, "unresolved", "global")
    if not text:
        return Skipped(text, "empty")
    dimension = str(c.get("dimension") or "").strip().lower()
    key = c.get("key") if isinstance(c.get("key"), str) else None
    if dimension == "workflow":
        return _route_workflow(c, text, key, ids)
    if dimension == "user":
        return Routed("user", Entry.make("pref", text, key))
    if dimension == "global":
        return Routed("global", Entry.make("fact", text, key))
    return Skipped(text, "invalid_dimension", dimension or None)


def _lacks_alias_id(c: Any) -> bool:
    if not isinstance(c, dict):
        return False
    text = one_line(c.get("text"))
    fields = _alias_fields(c, text)
    return fields is not None and _missing(fields[2]) and split_display(one_line(fields[1]))[1] is None


def route_candidates(candidates: list[dict[str, Any]], *, hint: str | None,
                     dynamic_context: dict[str, Any], corpus: str) -> tuple[list[Routed], list[Skipped]]:
    """Split candidates into routed entries and skipped ones (with the reason)."""
    routed: list[Routed] = []
    skipped: list[Skipped] = []
    ids = _Ids(hint=hint, context=context_workflow_id(dynamic_context), corpus=corpus,
               fill_alias=sum(_lacks_alias_id(c) for c in candidates) == 1)
    for c in candidates:
        if not isinstance(c, dict):
            skipped.append(Skipped(one_line(c), "invalid_entry"))
            continue
        blob = " ".join(one_line(c.get(k)) for k in ("text", "alias", "workflow_name", "workflow_id"))
        if find_credential(blob):
            skipped.append(Skipped(one_line(c.get("text")), "credentials"))
            continue
        outcome = _route_one(c, ids)
        if isinstance(outcome, Routed):
            routed.append(outcome)
        else:
            skipped.append(outcome)
    return routed, skipped
