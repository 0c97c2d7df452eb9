"""Recalled facts → chain threads → the ``chain_block`` text. Zero LLM.

Linking (:func:`link_facts`): a fact maps to the threads of its owner
(``"fact.user_id|fact.workspace_id"``, equal to the search's owner whenever the search
names a workspace) on the search branch (or the fact's branch when the search has
none) or on no branch, that either hold a round written by the fact's own write
(``fact_id``), or whose file is one of the fact's files (its ``files`` and the path
part of its subject). When the fact's subject / statement names some of a file's
symbols, only those threads (and the file-level ``<file>`` thread) are kept.

Block (:func:`render_block`)::

    Code version chain (oldest → newest per thread; the last version is current):
    ## src/search.py · fetch (branch fix/search-timeout)
    v1 (2024-05-01, asked: "Raise the timeout"):
      - timeout = 10
      + timeout = 30
    v2 (2024-05-03, asked: "Go back to 10 s"), reverts v1, current:
      - timeout = 30
      + timeout = 10

Threads come in the order of their best fact. Over the character budget the oldest
rounds are cut first (never the current one), and the block says so
(``(v1–v2 omitted: budget)``); threads that still do not fit are left out, last-ranked
first (``(2 more threads omitted: budget)``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from hy_memory_langgraph.chain.store import (
    ChainStore,
    Round,
    Thread,
    owner_of,
    same_file,
)
from hy_memory_langgraph.chain.symbols import FILE_SYMBOL

__all__ = ["DEFAULT_BUDGET", "LinkedThread", "chain_context", "link_facts", "render_block"]

#: Default character budget of ``chain_block``.
DEFAULT_BUDGET: Final = 4000
TITLE: Final = "Code version chain (oldest → newest per thread; the last version is current):"
_ASKED_CHARS: Final = 160
_LINE_CHARS: Final = 200
_LINES_PER_SIDE: Final = 12
_IDENT: Final = re.compile(r"[A-Za-z_$][\w$]*")
_PATH_HEAD: Final = re.compile(r"^\s*([^\s:#]*[/.][^\s:#]*)(?:[:#]|\s|$)")


@dataclass
class LinkedThread:
    thread: Thread
    facts: list[int] = field(default_factory=list)


def _fact_files(fact: dict[str, Any]) -> list[str]:
    files = [f for f in fact.get("files") or [] if isinstance(f, str) and f.strip()]
    match = _PATH_HEAD.match(str(fact.get("subject") or ""))
    if match:
        files.append(match.group(1))
    return list(dict.fromkeys(files))


def _mentions(fact: dict[str, Any]) -> set[str]:
    text = f"{fact.get('subject') or ''} {fact.get('statement') or ''}"
    return set(_IDENT.findall(text))


def link_facts(store: ChainStore, facts: Sequence[dict[str, Any]], *,
               workspace_id: str | None, branch: str | None) -> list[LinkedThread]:
    """The threads the recalled ``facts`` map to, in order of their best fact."""
    linked: dict[int, LinkedThread] = {}
    for index, fact in enumerate(facts):
        user = fact.get("user_id")
        if not user:
            continue
        owner = owner_of(str(user), fact.get("workspace_id") or workspace_id)
        on_branch = branch if (branch and workspace_id) else fact.get("branch")
        files = _fact_files(fact)
        fact_id = fact.get("memory_id")
        threads = store.threads_for(owner, on_branch, files=files,
                                    fact_ids=[fact_id] if fact_id else [])
        named = _mentions(fact)
        for thread in threads:
            own = any(r.fact_id == fact_id for r in thread.rounds) if fact_id else False
            if not own and not _symbol_ok(thread, threads, named, files):
                continue
            if thread.rounds:
                linked.setdefault(thread.id, LinkedThread(thread)).facts.append(index)
    return list(linked.values())


def _symbol_ok(thread: Thread, threads: list[Thread], named: set[str], files: list[str]) -> bool:
    """File-matched thread: kept unless the fact names other symbols of that file."""
    if thread.symbol == FILE_SYMBOL or thread.symbol in named:
        return True
    same = [t for t in threads if any(same_file(t.file, f) for f in files)
            and same_file(t.file, thread.file)]
    return not any(t.symbol in named for t in same if t.symbol != FILE_SYMBOL)


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def _side(mark: str, lines: list[str]) -> list[str]:
    shown = [f"  {mark} {_cut(line, _LINE_CHARS)}" if line.strip() else f"  {mark}"
             for line in lines[:_LINES_PER_SIDE]]
    if len(lines) > _LINES_PER_SIDE:
        shown.append(f"  {mark} … {len(lines) - _LINES_PER_SIDE} more lines")
    return shown


def _round_text(r: Round, current: bool) -> str:
    day = r.at[:10]
    head = f"v{r.number} ({day}"
    if r.asked:
        head += f', asked: "{_cut(r.asked, _ASKED_CHARS)}"'
    head += ")"
    marks = []
    if "write" in r.source.split(",") and not r.removed:
        marks.append("whole file written")
    if r.reverts:
        marks.append("reverts " + ", ".join(f"v{n}" for n in r.reverts))
    if current:
        marks.append("current")
    if marks:
        head += ", " + ", ".join(marks)
    return "\n".join([head + ":", *_side("-", r.removed), *_side("+", r.added)])


def _thread_text(thread: Thread, first_kept: int) -> str:
    where = f"## {thread.file}"
    if thread.symbol != FILE_SYMBOL:
        where += f" · {thread.symbol}"
    if thread.branch:
        where += f" (branch {thread.branch})"
    parts = [where]
    rounds = thread.rounds
    if first_kept > 0:
        lo, hi = rounds[0].number, rounds[first_kept - 1].number
        span = f"v{lo}" if lo == hi else f"v{lo}–v{hi}"
        parts.append(f"({span} omitted: budget)")
    last = len(rounds) - 1
    parts.extend(_round_text(r, i == last) for i, r in enumerate(rounds) if i >= first_kept)
    return "\n".join(parts)


def render_block(linked: Sequence[LinkedThread], budget: int = DEFAULT_BUDGET) -> tuple[str, list[int]]:
    """``(chain_block, chain_used)`` within ``budget`` characters."""
    items = [lt for lt in linked if lt.thread.rounds]
    if not items:
        return "", []
    first = [0] * len(items)
    keep = [True] * len(items)

    def text() -> str:
        parts = [_thread_text(lt.thread, first[i]) for i, lt in enumerate(items) if keep[i]]
        if not parts:
            return ""
        dropped = keep.count(False)
        if dropped:
            parts.append(f"({dropped} more thread{'s' if dropped > 1 else ''} omitted: budget)")
        return "\n\n".join([TITLE, *parts])

    while len(text()) > budget:
        # the oldest round still shown that is not its thread's current one
        best: tuple[str, int, int] | None = None
        for i, lt in enumerate(items):
            if keep[i] and first[i] < len(lt.thread.rounds) - 1:
                r = lt.thread.rounds[first[i]]
                if best is None or (r.at, r.number, i) < best:
                    best = (r.at, r.number, i)
        if best is not None:
            first[best[2]] += 1
            continue
        keep[max(i for i in range(len(items)) if keep[i])] = False  # the last-ranked thread
        if not any(keep):
            return "", []
    used = sorted({f for i, lt in enumerate(items) if keep[i] for f in lt.facts})
    return text(), used


def chain_context(store: ChainStore, facts: Sequence[dict[str, Any]], *,
                  workspace_id: str | None, branch: str | None,
                  budget: int = DEFAULT_BUDGET) -> tuple[str, list[int]]:
    """``(chain_block, chain_used)`` of recalled ``facts``."""
    return render_block(link_facts(store, facts, workspace_id=workspace_id, branch=branch), budget)
