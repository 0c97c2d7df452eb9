"""Helpers shared by the workflow tests."""

from __future__ import annotations

from hy_memory_langgraph.fences import read_fences


def prompt_text(prompt: str) -> str:
    """A rendered ``memoryPrompt`` read back: its lines (titles and entries), decoded and
    joined by line breaks; ``""`` for an empty prompt."""
    return "\n".join(row for region in read_fences(prompt) for row in region.rows)
