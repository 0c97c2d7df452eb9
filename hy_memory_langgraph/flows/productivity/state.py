"""States of the productivity subgraphs (working and coding share them)."""

from __future__ import annotations

from typing import Any

from hy_memory_langgraph.flows.contracts import PreparedSearch, PreparedWrite
from hy_memory_langgraph.repos.records import Experience, Fact, Record


class ProductivityWriteState(PreparedWrite, total=False):
    """Input: :class:`PreparedWrite` (``route`` names the scene); output: ``result``.

    Attributes:
        lang: Prompt language (``en``/``zh``) of the new user messages.
        touched_files: Files the trace touched (tool arguments, patch headers).
        experience_drafts: Experiences the extraction proposed.
        fact_draft: The fact the extraction (or lite mode) proposed.
        fallback: ``"extract_failed"`` when extraction gave nothing usable.
        experience_candidates: Stored experiences offered per draft.
        experience_decisions: The model's decision per draft, checked.
        experience_ops: Experience operations applied (the result's ``ops``).
        linked_experience_ids: Experiences this write added, updated or confirmed.
        fact_candidates: Older facts the new fact may supersede.
        superseded_ids: Those it supersedes (the model's checked answer).
        progress_summary: The progress summary over the superseded chain.
        fact_ops: Fact operations applied.
        fact_id: The new fact's id.
        chain_rounds: Hunks the version chain recorded (coding).
    """

    lang: str
    touched_files: list[str]
    experience_drafts: list[dict[str, Any]]
    fact_draft: dict[str, Any] | None
    fallback: str | None
    experience_candidates: list[list[Experience]]
    experience_decisions: list[dict[str, Any]]
    experience_ops: list[dict[str, Any]]
    linked_experience_ids: list[str]
    fact_candidates: list[Fact]
    superseded_ids: list[str]
    progress_summary: str | None
    fact_ops: list[dict[str, Any]]
    fact_id: str | None
    chain_rounds: int
    result: dict[str, Any]


class ProductivitySearchState(PreparedSearch, total=False):
    """Input: :class:`PreparedSearch` (``route`` names the scene); output: ``result``.

    Attributes:
        fact_hits: Returned facts (public dicts), best first.
        experience_pool: Nearest experiences with their cosine, before gating.
        experience_hits: Returned experiences (public dicts).
        chain_block: The rendered version chain (coding, opt-in).
        chain_used: Indices of the facts the chain block covers.
    """

    fact_hits: list[dict[str, Any]]
    experience_pool: list[tuple[Record, float]]
    experience_hits: list[dict[str, Any]]
    chain_block: str
    chain_used: list[int]
    result: dict[str, Any]
