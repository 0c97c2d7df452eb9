"""State of the chat write subgraph."""

from __future__ import annotations

from typing import Any

from hy_memory_langgraph.flows.contracts import PreparedWrite
from hy_memory_langgraph.repos.records import ChatMemory


class ChatWriteState(PreparedWrite, total=False):
    """Input: :class:`PreparedWrite`; output: ``result``.

    Attributes:
        facts: What extraction found (``content``, ``subject``, ``owner``).
        fallback: ``"extract_failed"`` when extraction gave nothing usable.
        candidates: Stored memories the facts might touch.
        decisions: One decision per fact, the model's answer checked against the rules.
        ops: The operations applied, one per fact or turn.
    """

    facts: list[dict[str, Any]]
    fallback: str | None
    candidates: list[ChatMemory]
    decisions: list[dict[str, Any]]
    ops: list[dict[str, Any]]
    result: dict[str, Any]
