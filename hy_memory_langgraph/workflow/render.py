"""Render the memory prompt: one markdown section per dimension."""

from __future__ import annotations

from hy_memory_langgraph.workflow.entries import Entry

__all__ = ["SECTION_TITLES", "render_prompt"]

SECTION_TITLES = {
    "user": "## 用户画像 (user.md)",
    "global": "## 长期记忆 (memory.md)",
}
_EMPTY = "- （暂无）"


def _title(dimension: str) -> str:
    return SECTION_TITLES.get(dimension) or f"## 工作流记忆 ({dimension})"


def render_prompt(sections: dict[str, list[Entry]]) -> str:
    """Markdown with a section per dimension, in the given order; ``""`` when all are empty.

    An empty section (while others are not) shows ``- （暂无）`` so the reader knows it
    was read.
    """
    if not any(sections.values()):
        return ""
    blocks = []
    for dimension, entries in sections.items():
        lines = [e.line() for e in entries] or [_EMPTY]
        blocks.append("\n".join([_title(dimension), *lines]))
    return "\n\n".join(blocks) + "\n"
