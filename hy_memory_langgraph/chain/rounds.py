"""Edits of one write → one round per thread; revert detection. Pure functions.

Grouping: the edits of one write on the same (file, symbol) form ONE round, in trace
order. Inside the round, a line an earlier edit added and a later edit removed cancel
out (``a → b`` then ``b → c`` is the round ``a → c``). ``asked`` joins the distinct
asking messages of its edits with ``" | "``.

Reverts: round R reverts an earlier round K of the same thread when R removes a
meaningful line (one with a letter or digit) that K added — K being the latest earlier
round that added it — and R either restores something K removed or adds nothing new.
Changing a line again to a third value (``30 → 60`` after ``10 → 30``) is a new
version, not a revert.

Example:
    >>> find_reverts(["t = 30"], ["t = 10"], [(1, ["t = 10"], ["t = 30"])])
    [1]
    >>> find_reverts(["t = 30"], ["t = 60"], [(1, ["t = 10"], ["t = 30"])])
    []
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from hy_memory_langgraph.chain.edits import Edit

_ASKED_CHARS: Final = 2000


@dataclass
class _RoundDraft:
    """One revision of one thread, before it is numbered and stored."""

    file: str
    symbol: str
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    hunks: int = 0

    @property
    def asked_text(self) -> str:
        text = " | ".join(self.asked)
        return text if len(text) <= _ASKED_CHARS else text[:_ASKED_CHARS - 1] + "…"


def group_rounds(edits: Sequence[Edit]) -> list[_RoundDraft]:
    """One :class:`_RoundDraft` per (file, symbol), first-seen order."""
    drafts: dict[tuple[str, str], _RoundDraft] = {}
    for edit in edits:
        draft = drafts.setdefault((edit.file, edit.symbol), _RoundDraft(edit.file, edit.symbol))
        removed = list(edit.removed)
        for line in list(removed):  # cancel against lines this round added earlier
            if line in draft.added:
                draft.added.remove(line)
                removed.remove(line)
        draft.removed.extend(removed)
        draft.added.extend(edit.added)
        if edit.asked and edit.asked not in draft.asked:
            draft.asked.append(edit.asked)
        if edit.source not in draft.sources:
            draft.sources.append(edit.source)
        draft.hunks += 1
    return list(drafts.values())


def meaningful(lines: Sequence[str]) -> set[str]:
    """Stripped lines holding a letter or digit (``}``/``)``/blank lines never count)."""
    return {s for s in (line.strip() for line in lines) if any(ch.isalnum() for ch in s)}


def find_reverts(removed: Sequence[str], added: Sequence[str],
                 earlier: Sequence[tuple[int, Sequence[str], Sequence[str]]]) -> list[int]:
    """Numbers of the earlier rounds ``(number, removed, added)`` this round reverts."""
    gone, new = meaningful(removed), meaningful(added)
    if not gone:
        return []
    latest_adder: dict[str, int] = {}
    by_number: dict[int, tuple[set[str], set[str]]] = {}
    for number, r_removed, r_added in sorted(earlier, key=lambda t: t[0]):
        by_number[number] = (meaningful(r_removed), meaningful(r_added))
        for line in by_number[number][1]:
            latest_adder[line] = number
    hit = sorted({latest_adder[line] for line in gone if line in latest_adder})
    out = []
    for number in hit:
        k_removed, _ = by_number[number]
        if new & k_removed or not (new - k_removed):
            out.append(number)
    return out
