"""The memory block shown to a model: one search result as plain text.

* chat: ``- (date) content`` per memory;
* working / coding: facts (``- (date) subject: statement [files]``, one line each),
  experiences (``- task → solution``) and, for coding, the version ``chain_block`` as it
  is (it carries its own heading).

An empty result renders as ``""`` (no block is added).

Example:
    >>> render_memory_block({"scene": "chat", "memories": [
    ...     {"memory_at": "2024-05-01T09:00:00+00:00", "content": "Has a cat called Miso"}]})
    'Relevant long-term memories about this user (may be outdated):\\n- (2024-05-01) Has a cat called Miso'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["render_memories", "render_memory_block"]

CHAT_HEADER = "Relevant long-term memories about this user (may be outdated):"
FACTS_HEADER = "What happened in earlier work on this (may be outdated):"
EXPERIENCES_HEADER = "Reusable experience from earlier tasks:"


def _date(record: dict[str, Any]) -> str:
    return str(record.get("memory_at") or "")[:10]


def render_memories(memories: Sequence[dict[str, Any]]) -> str:
    """The block of chat memories (``""`` when there are none)."""
    if not memories:
        return ""
    lines = [f"- ({_date(m)}) {m['content']}" for m in memories]
    return CHAT_HEADER + "\n" + "\n".join(lines)


def _fact_line(fact: dict[str, Any]) -> str:
    subject = str(fact.get("subject") or "").strip()
    statement = "; ".join(line.strip() for line in str(fact.get("statement") or "").splitlines() if line.strip())
    text = f"{subject}: {statement}" if subject else statement
    files = [str(f) for f in fact.get("files") or []][:5]
    return f"- ({_date(fact)}) {text}" + (f" [{', '.join(files)}]" if files else "")


def _experience_line(exp: dict[str, Any]) -> str:
    task = str(exp.get("task") or "").strip()
    solution = " ".join(str(exp.get("solution") or "").split())
    return f"- {task} → {solution}" if solution else f"- {task}"


def render_memory_block(result: dict[str, Any]) -> str:
    """The block for one ``client.search`` result of any scene (``""`` when empty)."""
    if result.get("scene") == "chat":
        return render_memories(result.get("memories") or [])
    sections = []
    if result.get("facts"):
        sections.append(FACTS_HEADER + "\n" + "\n".join(_fact_line(f) for f in result["facts"]))
    if result.get("experiences"):
        sections.append(EXPERIENCES_HEADER + "\n"
                        + "\n".join(_experience_line(e) for e in result["experiences"]))
    if result.get("chain_block"):
        sections.append(str(result["chain_block"]).strip())
    return "\n\n".join(sections)
