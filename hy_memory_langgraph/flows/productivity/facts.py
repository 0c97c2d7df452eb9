"""Fact layer of a productivity write: candidates, supersede call, progress summary, insert.

The new fact is always inserted (``docs/design.md#fact-reconcile``). It may SUPERSEDE
older active facts that continue the same task. Candidates (from every session of the user) are
active facts in the same scope with the same :func:`subject_key` (same subject is
necessary), not newer than the new fact, and not on a different named branch; at most
:data:`_FACT_CANDIDATES`: all of them, newest first, when there are that few (no
embedding call), else the nearest by vector. The call happens only when candidates exist;
targets outside the offered list are ignored; failure → insert only.

A superseded fact keeps its record (status ``superseded``, ``superseded_by`` = the new
id) and leaves the vector index. When the new fact superseded something, one more call
writes a cross-session progress summary over its ancestor chain (at most
:data:`_SUMMARY_GENERATIONS` generations, oldest → newest), stored on the new fact.
"""

from __future__ import annotations

from typing import Any, Final

from langgraph.runtime import Runtime

from hy_memory_langgraph.errors import ConflictError
from hy_memory_langgraph.flows.productivity.input import record_fields, repo_of
from hy_memory_langgraph.flows.productivity.state import ProductivityWriteState
from hy_memory_langgraph.pipeline_log.meter import note_fallback
from hy_memory_langgraph.prompts.replies import FactReconcile, ProgressSummary
from hy_memory_langgraph.repos.filters import scope_filter, subject_key
from hy_memory_langgraph.repos.productivity import ProductivityRepository
from hy_memory_langgraph.repos.records import ACTIVE, SUPERSEDED, Fact
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.journal import Journal
from hy_memory_langgraph.services.llm import ask
from hy_memory_langgraph.timeutil import iso

FACT_OPS: Final = ("INSERT", "SUPERSEDE")
#: Older facts offered to the supersede decision.
_FACT_CANDIDATES: Final = 8
#: Generations of ancestors the progress summary reads.
_SUMMARY_GENERATIONS: Final = 8
_STATEMENT_CHARS: Final = 1200


def embed_text(subject: str, statement: str) -> str:
    """The only embedded text of a fact: ``"subject: statement"``."""
    return f"{subject}: {statement}" if subject else statement


def gather_fact_candidates(state: ProductivityWriteState,
                           runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Older active facts of the same user, scope and subject key."""
    fact = state["fact_draft"]
    assert fact is not None
    key = subject_key(fact["subject"])
    if not key:
        return {"fact_candidates": []}
    branch = state.get("branch")
    where = {"status": ACTIVE, "subject_key": key, "memory_ts": {"$lte": state["at"].timestamp()},
             **scope_filter(state.get("workspace_id"), branch)}
    if branch and "$or" not in where:  # no workspace: still never across two named branches
        where["$or"] = [{"branch": branch}, {"branch": None}]
    keep = repo_of(state, runtime.context).few_or_nearest(
        "fact", state["user_id"], embed_text(fact["subject"], fact["statement"]),
        where=where, limit=_FACT_CANDIDATES)
    return {"fact_candidates": [f for f in keep if isinstance(f, Fact)]}


def route_after_fact_candidates(state: ProductivityWriteState) -> str:
    return "reconcile_fact" if state.get("fact_candidates") else "insert_fact"


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _STATEMENT_CHARS else flat[:_STATEMENT_CHARS] + " …"


def _candidate_row(alias: str, fact: Fact) -> dict[str, Any]:
    return {"id": alias, "subject": fact.subject or "-", "branch": fact.branch or "-",
            "at": fact.memory_at, "statement": _cut(fact.statement)}


def _new_fact_row(state: ProductivityWriteState) -> dict[str, Any]:
    fact = state["fact_draft"]
    assert fact is not None
    return {"subject": fact["subject"] or "-", "branch": state.get("branch") or "-",
            "at": iso(state["at"]), "statement": _cut(fact["statement"])}


def reconcile_fact(state: ProductivityWriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """One call: which offered candidates the new fact supersedes."""
    candidates = state["fact_candidates"]
    aliases = {f"f_{i}": c.memory_id for i, c in enumerate(candidates)}
    reply = ask(
        runtime.context.llm, "fact_reconcile", "fact_reconcile", state["lang"], FactReconcile,
        new_fact=_new_fact_row(state),
        candidates=[_candidate_row(a, c) for a, c in zip(aliases, candidates)],
    )
    if reply is None:
        note_fallback("fact reconcile unusable: the fact is inserted, nothing superseded")
    chosen = [aliases[a] for a in (reply.supersede if reply else []) if a in aliases]
    return {"superseded_ids": list(dict.fromkeys(chosen))}


def route_after_fact_reconcile(state: ProductivityWriteState) -> str:
    return "summarize_progress" if state.get("superseded_ids") else "insert_fact"


def summarize_progress(state: ProductivityWriteState,
                       runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """One call: progress of the task over the superseded facts and their ancestors."""
    ctx = runtime.context
    chain = repo_of(state, ctx).ancestors(state["superseded_ids"], _SUMMARY_GENERATIONS)
    rows = [{"at": f.memory_at, "subject": f.subject or "-", "statement": _cut(f.statement)} for f in chain]
    reply = ask(ctx.llm, "progress_summary", "progress_summary", state["lang"], ProgressSummary,
                chain=rows, new_fact=_new_fact_row(state))
    if reply is None:
        note_fallback("progress summary unusable: the fact is stored without one")
    return {"progress_summary": (reply.summary if reply else "") or None}


def _store(repo: ProductivityRepository, request_id: str, fact: Fact, retired: list[Fact],
           journal: Journal) -> dict[str, Any]:
    """One change: the new fact, the retirement of the facts it supersedes and the
    journal entry of the node's update (returned)."""
    change = repo.begin(request_id)
    change.add(fact, "SUPERSEDE" if retired else "INSERT")
    for old in retired:
        old.status, old.superseded_by = SUPERSEDED, fact.memory_id
        change.save(old, "SUPERSEDED", related=fact.memory_id)
    ops = [{"op": "INSERT", "memory_id": fact.memory_id, "subject": fact.subject,
            "statement": fact.statement}]
    ops += [{"op": "SUPERSEDE", "memory_id": old.memory_id, "superseded_by": fact.memory_id}
            for old in retired]
    update = {"fact_ops": ops, "fact_id": fact.memory_id}
    change.ops.extend(journal.ops(update))
    repo.commit(change)
    return update


def insert_fact(state: ProductivityWriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Insert the new fact and retire the facts it supersedes, in one change."""
    draft = state["fact_draft"]
    assert draft is not None
    repo = repo_of(state, runtime.context)
    journal = Journal.of(repo.store, state, "insert_fact")
    done = journal.replay()
    if done is not None:
        return done
    by_id = {c.memory_id: c for c in state.get("fact_candidates") or []}
    retired = [by_id[i] for i in state.get("superseded_ids") or [] if i in by_id]
    fact = Fact(
        **record_fields(state, "fact"), subject=draft["subject"], statement=draft["statement"],
        subject_key=subject_key(draft["subject"]), files=list(draft["files"]),
        details=draft["details"], embed_text=embed_text(draft["subject"], draft["statement"]),
        source=draft["source"], summary=state.get("progress_summary"),
        experience_ids=list(state.get("linked_experience_ids") or []),
        supersedes=[old.memory_id for old in retired],
    )
    try:
        return _store(repo, state["request_id"], fact, retired, journal)
    except ConflictError:  # an older fact changed meanwhile: keep the new one, supersede none
        note_fallback("superseded facts changed concurrently: the fact is inserted alone")
        fact.supersedes = []
        return _store(repo, state["request_id"], fact, [], journal)
