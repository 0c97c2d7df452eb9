"""The shapes of what the client returns, as ``TypedDict`` s (``docs/design.md#return-shapes``
describes each key; a test checks results, these types and the document agree).

Writes: :class:`ChatWriteResult` or :class:`ProductivityWriteResult` (working / coding),
or :class:`QueuedWriteResult` for a background write;
searches: :class:`ChatSearchResult` or :class:`ProductivitySearchResult`; one memory:
:class:`ChatMemoryDict`, :class:`ExperienceDict` or :class:`FactDict`; its history:
:class:`HistoryEvent` s; a page of :meth:`HyMemoryClient.list_memories`:
:class:`MemoryPage`; an import: :class:`ImportReport`; workflow memory:
:class:`MemoryPromptResult` and :class:`MemoryExtractResult`.

Example:
    >>> sorted(ChatWriteResult.__required_keys__)[:3]
    ['elapsed_ms', 'memory_ids', 'ops']
"""

# No ``from __future__ import annotations``: TypedDict reads ``NotRequired`` from the
# evaluated annotations.
from typing import Any, Literal, NotRequired, TypedDict


class ChatOp(TypedDict):
    """One op of a chat write: ``ADD``, ``UPDATE``, ``SUPERSEDE`` or ``SKIP``."""

    op: str
    memory_id: str | None
    content: NotRequired[str]
    superseded: NotRequired[list[str]]
    reason: NotRequired[str]


class ChatWriteResult(TypedDict):
    """What a chat ``add`` returns."""

    success: bool
    scene: Literal["chat"]
    request_id: str
    memory_ids: list[str]
    ops: list[ChatOp]
    ops_summary: dict[str, int]
    elapsed_ms: float


class _RecordDict(TypedDict):
    """Fields every stored memory has (the caller-facing dict of a record)."""

    memory_id: str
    user_id: str
    memory_at: str
    memory_ts: float
    status: str
    version: int
    supersedes: list[str]
    superseded_by: str | None
    agent_id: str | None
    session_id: str | None
    request_id: str | None
    metadata: dict[str, Any]
    created_at: str
    updated_at: str
    kind: str
    score: float | None


class ChatMemoryDict(_RecordDict):
    """One chat memory (``pending``: a search hit that is a turn of a queued write)."""

    content: str
    subject: str
    owner: str
    role: str | None
    source: str
    context: str
    carried: str
    pending: NotRequired[bool]


class _ProductivityDict(_RecordDict):
    variant: str
    workspace_id: str | None
    branch: str | None
    files: list[str]


class ExperienceDict(_ProductivityDict):
    """One working / coding experience (a search hit adds the ``NotRequired`` keys)."""

    task: str
    solution: str
    search_keys: list[str]
    boundary_envs: list[str]
    confidence: float
    last_op: str
    calibrated_similarity: NotRequired[float]
    via: NotRequired[str]
    linked_fact_id: NotRequired[str]


class FactDict(_ProductivityDict):
    """One working / coding fact (a search hit adds the ``NotRequired`` keys)."""

    subject: str
    statement: str
    details: str
    source: str
    summary: str | None
    experience_ids: list[str]
    similarity: NotRequired[float]
    calibrated_similarity: NotRequired[float]


MemoryDict = ChatMemoryDict | ExperienceDict | FactDict


class ChatSearchResult(TypedDict):
    """What a chat ``search`` returns."""

    request_id: str
    scene: Literal["chat"]
    memories: list[ChatMemoryDict]
    rewrite: str | None
    elapsed_ms: float


class ExperienceOp(TypedDict):
    op: str
    memory_id: str
    task: NotRequired[str]
    deleted_id: NotRequired[str]


class FactOp(TypedDict):
    op: str
    memory_id: str
    subject: NotRequired[str]
    statement: NotRequired[str]
    superseded_by: NotRequired[str]


class ProductivityWriteResult(TypedDict):
    """What a working / coding ``add`` returns (``chain_rounds``: coding only)."""

    success: bool
    scene: Literal["productivity"]
    request_id: str
    ops: list[ExperienceOp]
    ops_summary: dict[str, int]
    experience_ids: list[str]
    fact_ops: list[FactOp]
    fact_ops_summary: dict[str, int]
    fact_ids: list[str]
    memory_id: str | None
    elapsed_ms: float
    chain_rounds: NotRequired[int]
    fallback: NotRequired[str]


class ProductivitySearchResult(TypedDict):
    """What a working / coding ``search`` returns (``chain_block``, ``chain_used``: coding)."""

    request_id: str
    scene: Literal["productivity"]
    facts: list[FactDict]
    experiences: list[ExperienceDict]
    elapsed_ms: float
    chain_block: NotRequired[str]
    chain_used: NotRequired[list[int]]


class QueuedWriteResult(TypedDict):
    """What ``add(..., background=True)`` returns in pro mode: the write is queued."""

    success: bool
    status: Literal["queued"]
    request_id: str


WriteResult = ChatWriteResult | ProductivityWriteResult
SearchResult = ChatSearchResult | ProductivitySearchResult


class HistoryEvent(TypedDict):
    """One event of a memory's history (after a delete only the content-free ``DELETE``)."""

    memory_id: str
    user_id: str
    kind: str
    op: str
    at: str
    seq: int
    request_id: str | None
    status: NotRequired[str]
    version: NotRequired[int]
    content: NotRequired[str]
    previous_content: NotRequired[str | None]
    supersedes: NotRequired[list[str]]
    superseded_by: NotRequired[str | None]
    related_id: NotRequired[str | None]
    memory_at: NotRequired[str]
    subject: NotRequired[str]
    summary: NotRequired[str | None]
    task: NotRequired[str]
    solution: NotRequired[str]
    search_keys: NotRequired[list[str]]


class MemoryPage(TypedDict):
    """A page of :meth:`HyMemoryClient.list_memories`, newest first."""

    user_id: str
    memories: list[dict[str, Any]]
    limit: int
    offset: int
    has_more: bool


class RefusedRow(TypedDict):
    memory_id: str
    user_id: str
    reason: str


class ImportReport(TypedDict):
    """What :meth:`HyMemoryClient.import_memories` wrote."""

    memory: int
    event: int
    trace: int
    chain_thread: int
    workflow_file: int
    rows: int
    complete: bool
    refused: list[RefusedRow]
    refused_users: dict[str, int]


class MemoryPromptResult(TypedDict):
    """``workflow.memoryPrompt``."""

    available: bool
    memoryPrompt: str
    oaContext: dict[str, Any] | None
    oaContextMissing: bool
    counts: NotRequired[dict[str, int]]
    workflowId: NotRequired[str | None]
    memoryAppId: NotRequired[str | None]
    dataEmpty: NotRequired[bool]
    diagnosis: NotRequired[dict[str, Any]]
    memoryNotSupported: NotRequired[bool]


class MemoryExtractResult(TypedDict):
    """``workflow.memoryExtract``."""

    saved: bool
    entries: list[dict[str, Any]]
    skipped: list[dict[str, Any]]
    source: str
    mode: str
    workflowId: str | None
    memoryAppId: str | None
    elapsed_ms: float
    request_id: str
