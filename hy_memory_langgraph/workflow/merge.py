"""Merge new entries into a dimension document: dedupe, pending-id completion, slots.

* alias, same alias (normalised): pending → real id: **updated in place**;
  real id → another real id: updated in place (the current system wins, name and all);
  a pending name gets the name of a later save with the same (or a pending) id;
  another known name replaces the line (the alias now means another workflow);
  a save that adds nothing (same id and name, or pending over known): skipped
  (``duplicate``).
* slot (``[pref:pageSize]``): same key, new value → updated in place.
* anything else: skipped when an entry with the same normalised text exists.
"""

from __future__ import annotations

from dataclasses import dataclass

from hy_memory_langgraph.workflow.entries import Entry, normalize_text


@dataclass(frozen=True)
class _MergeOutcome:
    status: str                 # "added" | "updated" | "skipped"
    reason: str | None = None   # for skipped: "duplicate"
    previous: Entry | None = None
    entry: Entry | None = None  # what was written (added / updated)


def _same_text(a: Entry, b: Entry) -> bool:
    return normalize_text(a.text) == normalize_text(b.text)


def _merged_alias(old: Entry, new: Entry) -> Entry:
    """What an alias line becomes when ``new`` is saved over ``old``."""
    if not new.pending and new.target_id != old.target_id and not old.pending:
        return new  # another real id: the current system wins
    if (not new.name_pending and not old.name_pending
            and normalize_text(new.workflow_name or "") != normalize_text(old.workflow_name or "")):
        return new  # the alias now means another workflow
    target = old.target_id if new.pending else new.target_id
    name = old.workflow_name if new.name_pending else new.workflow_name
    return Entry.make_alias(new.alias or old.alias or "", name, target)


def merge_entry(entries: list[Entry], new: Entry) -> _MergeOutcome:
    """Apply ``new`` to ``entries`` (mutated in place) and say what happened."""
    for i, old in enumerate(entries):
        if old.identity == new.identity:
            if new.kind == "alias":
                merged = _merged_alias(old, new)
                if merged.text == old.text:
                    return _MergeOutcome("skipped", "duplicate")
                entries[i] = merged
                return _MergeOutcome("updated", previous=old, entry=merged)
            if _same_text(old, new):
                return _MergeOutcome("skipped", "duplicate")
            entries[i] = new
            return _MergeOutcome("updated", previous=old, entry=new)
    if new.kind != "alias" and any(_same_text(old, new) for old in entries):
        return _MergeOutcome("skipped", "duplicate")
    entries.append(new)
    return _MergeOutcome("added", entry=new)
