"""Merge new entries into a dimension document: dedupe, pending-id completion, slots.

* alias, same alias (normalised): pending → real id: **updated in place**;
  real id → another real id: updated in place (the current system wins);
  same id, or a pending id over a known one: skipped (``duplicate``).
* slot (``[pref:pageSize]``): same key, new value → updated in place.
* anything else: skipped when an entry with the same normalised text exists.
"""

from __future__ import annotations

from dataclasses import dataclass

from hy_memory_langgraph.workflow.entries import Entry, normalize_text

__all__ = ["MergeOutcome", "merge_entry"]


@dataclass(frozen=True)
class MergeOutcome:
    status: str                 # "added" | "updated" | "skipped"
    reason: str | None = None   # for skipped: "duplicate"
    previous: Entry | None = None


def _same_text(a: Entry, b: Entry) -> bool:
    return normalize_text(a.text) == normalize_text(b.text)


def merge_entry(entries: list[Entry], new: Entry) -> MergeOutcome:
    """Apply ``new`` to ``entries`` (mutated in place) and say what happened."""
    for i, old in enumerate(entries):
        if old.identity == new.identity:
            if new.kind == "alias":
                if new.pending or old.target_id == new.target_id:
                    return MergeOutcome("skipped", "duplicate")
                entries[i] = new
                return MergeOutcome("updated", previous=old)
            if _same_text(old, new):
                return MergeOutcome("skipped", "duplicate")
            entries[i] = new
            return MergeOutcome("updated", previous=old)
    if new.kind != "alias" and any(_same_text(old, new) for old in entries):
        return MergeOutcome("skipped", "duplicate")
    entries.append(new)
    return MergeOutcome("added")
