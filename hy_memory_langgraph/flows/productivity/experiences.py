"""Experience layer of a productivity write: candidates, one reconcile call, apply.

Candidates of a draft are the user's active experiences in the same scope (any
session) whose task/keys are close to the draft's task (vector, max-pooled per
experience; calibrated similarity at least :data:`CANDIDATE_MIN_SCORE`, see
:mod:`hy_memory_langgraph.models.calibration`). The reconcile call happens only when some draft has candidates; it
answers ADD / UPDATE / DELETE / SKIP per draft, and the rules the model may break are
enforced here:

* a target must be one of the candidates offered for THAT draft, else ADD;
* a draft the reply does not handle is ADDed; failure or garbage → ADD all;
* one candidate is changed at most once per write (a second claim becomes ADD);
* UPDATE without a usable merged experience merges deterministically;
* DELETE retires the target (status ``deleted``, out of the index, kept for history)
  and adds the draft as it is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from langgraph.runtime import Runtime

from hy_memory_langgraph.embedding_batch import prefetch
from hy_memory_langgraph.errors import ConflictError
from hy_memory_langgraph.flows.productivity.extract import MAX_SEARCH_KEYS
from hy_memory_langgraph.flows.productivity.facts import embed_text
from hy_memory_langgraph.flows.productivity.input import (
    merge_unique,
    record_fields,
    repo_of,
)
from hy_memory_langgraph.flows.productivity.state import ProductivityWriteState
from hy_memory_langgraph.pipeline_log.meter import note_fallback
from hy_memory_langgraph.prompts.replies import ExperienceMerge, ExperienceReconcile
from hy_memory_langgraph.repos.filters import scope_filter
from hy_memory_langgraph.repos.productivity import ProductivityRepository
from hy_memory_langgraph.repos.records import ACTIVE, DELETED, Experience
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.journal import Journal
from hy_memory_langgraph.services.llm import ask
from hy_memory_langgraph.timeutil import iso

#: Stored experiences offered per draft (best cosine first).
_CANDIDATES_PER_DRAFT: Final = 3
#: Calibrated similarity (:mod:`hy_memory_langgraph.models.calibration`) below which a
#: stored experience is not offered as a candidate.
CANDIDATE_MIN_SCORE: Final = 0.5
_SOLUTION_CHARS: Final = 800


def gather_experience_candidates(state: ProductivityWriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """For each draft, close active experiences of the same user and scope."""
    repo = repo_of(state, runtime.context)
    where = {"status": ACTIVE, **scope_filter(state.get("workspace_id"), state.get("branch"))}
    drafts = state["experience_drafts"]
    tasks = [d["task"] for d in drafts]
    requests = [(state["user_id"], task) for task in tasks]
    prefetch(runtime.context.stores.embeddings, tasks, tasks + _stored_texts(state))
    found = repo.search_many("experience", requests, where=where, limit=_CANDIDATES_PER_DRAFT)
    calibration = runtime.context.stores.calibration()
    return {"experience_candidates": [
        [record for record, score in hits
         if calibration.for_text(draft["task"]).similarity(score) >= CANDIDATE_MIN_SCORE]
        for draft, hits in zip(drafts, found, strict=True)
    ]}


def _stored_texts(state: ProductivityWriteState) -> list[str]:
    """The other texts this write will embed: the drafts' search keys and the fact."""
    texts = [k for d in state["experience_drafts"] for k in d.get("search_keys") or []]
    fact = state.get("fact_draft")
    if fact:
        texts.append(embed_text(fact["subject"], fact["statement"]))
    return texts


def route_after_experience_candidates(state: ProductivityWriteState) -> str:
    if any(state.get("experience_candidates") or []):
        return "reconcile_experiences"
    return "apply_experiences"


def _row(task: str, keys: list[str], solution: str, envs: list[str]) -> dict[str, Any]:
    solution = " ".join(solution.split())
    if len(solution) > _SOLUTION_CHARS:
        solution = solution[:_SOLUTION_CHARS] + " …"
    return {"task": task, "keys": keys, "solution": solution, "envs": envs}


def render_drafts(drafts: list[dict[str, Any]],
                  candidates: list[list[Experience]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The ``drafts`` prompt rows (each draft that has candidates, then its candidates)
    and alias → memory id."""
    aliases: dict[str, str] = {}
    by_id: dict[str, str] = {}
    rows: list[dict[str, Any]] = []
    for i, (draft, cands) in enumerate(zip(drafts, candidates)):
        if not cands:
            continue
        rows.append({"draft": f"d{i}", **_row(draft["task"], draft.get("search_keys") or [],
                                              draft["solution"], draft.get("boundary_envs") or [])})
        for cand in cands:
            alias = by_id.setdefault(cand.memory_id, f"e_{len(by_id)}")
            aliases[alias] = cand.memory_id
            rows.append({"candidate": alias, "of": f"d{i}",
                         **_row(cand.task, cand.search_keys, cand.solution, cand.boundary_envs)})
    return rows, aliases


def reconcile_experiences(state: ProductivityWriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """One call deciding an operation per draft (checked against the offered candidates)."""
    drafts, candidates = state["experience_drafts"], state["experience_candidates"]
    block, aliases = render_drafts(drafts, candidates)
    reply = ask(runtime.context.llm, "experience_reconcile", "experience_reconcile",
                state["lang"], ExperienceReconcile, drafts=block)
    if reply is None:
        note_fallback("experience reconcile unusable: every draft is added")
    decided: dict[int, dict[str, Any]] = {}
    for decision in reply.operations if reply else []:
        index = _draft_index(decision.draft, len(drafts))
        if index is None or index in decided:
            continue
        offered = {c.memory_id for c in candidates[index]}
        target = aliases.get(decision.target)
        if decision.op == "ADD" or target not in offered:
            decided[index] = {"op": "ADD"}
        else:
            merged = decision.merged.model_dump() if decision.merged else None  # state holds plain data
            decided[index] = {"op": decision.op, "target": target, "merged": merged}
    return {"experience_decisions": [decided.get(i, {"op": "ADD"}) for i in range(len(drafts))]}


def _draft_index(text: str, size: int) -> int | None:
    text = text.lower().removeprefix("d")
    return int(text) if text.isdigit() and int(text) < size else None


def _merge(target: Experience, draft: dict[str, Any],
           merged: dict[str, Any] | None) -> dict[str, Any]:
    """UPDATE content: the model's merge when usable, else a deterministic union."""
    m = ExperienceMerge.model_validate(merged or {})
    task, solution = m.task, m.solution
    if not task or not solution:
        task = target.task
        solution = draft["solution"] if target.solution in draft["solution"] else (
            f"{draft['solution']}\n{target.solution}")
    keys = m.search_keys or merge_unique(target.search_keys, draft["search_keys"])
    envs = merge_unique(m.boundary_envs or target.boundary_envs, draft["boundary_envs"])
    confidence = max(target.confidence, draft["confidence"]) if m.confidence is None else m.confidence
    return {"task": task, "search_keys": [k for k in keys if k != task][:MAX_SEARCH_KEYS],
            "solution": solution, "boundary_envs": envs, "confidence": confidence,
            "files": merge_unique(target.files, draft["files"])}


def _revise(target: Experience, state: ProductivityWriteState, op: str,
            **changes: Any) -> Experience:
    """The next version of ``target`` (its history events keep the earlier versions)."""
    at = state["at"]
    later = at.timestamp() >= target.memory_ts
    return replace(target, **changes, version=target.version + 1, last_op=op,
                   request_id=state["request_id"],
                   memory_at=iso(at) if later else target.memory_at,
                   memory_ts=at.timestamp() if later else target.memory_ts)


def _store(repo: ProductivityRepository, request_id: str, changed: list[Experience],
           new: list[Experience], extra: list[Any]) -> None:
    """One change: the revised experiences, the new ones and ``extra`` puts (a journal entry)."""
    change = repo.begin(request_id)
    for revised in changed:
        change.save(revised, revised.last_op)
    for record in new:
        change.add(record, "ADD")
    change.ops.extend(extra)
    repo.commit(change)


def _all_added(state: ProductivityWriteState) -> tuple[list[Experience], list[dict[str, Any]], list[str]]:
    """Every draft as a new experience: records, ops and linked ids."""
    new = [Experience(**record_fields(state, "experience"), **d) for d in state["experience_drafts"]]
    ops = [{"op": "ADD", "memory_id": e.memory_id, "task": e.task} for e in new]
    return new, ops, [e.memory_id for e in new]


def apply_experiences(state: ProductivityWriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Write the decided operations in one change; one op per draft in the result."""
    repo = repo_of(state, runtime.context)
    journal = Journal.of(repo.store, state, "apply_experiences")
    done = journal.replay()
    if done is not None:
        return done
    drafts = state["experience_drafts"]
    decisions = state.get("experience_decisions") or [{"op": "ADD"} for _ in drafts]
    targets = {c.memory_id: c for cands in state.get("experience_candidates") or [] for c in cands}
    new: list[Experience] = []
    changed: dict[str, Experience] = {}
    ops: list[dict[str, Any]] = []
    linked: list[str] = []
    for draft, decision in zip(drafts, decisions):
        target_id: str = decision.get("target") or ""
        target = targets.get(target_id)
        op = decision["op"] if target is not None and target_id not in changed else "ADD"
        if op == "SKIP" and target is not None:
            ops.append({"op": "SKIP", "memory_id": target_id, "task": draft["task"]})
            linked.append(target_id)
            continue
        if op == "UPDATE" and target is not None:
            changed[target_id] = _revise(target, state, "UPDATE",
                                         **_merge(target, draft, decision.get("merged")))
            ops.append({"op": "UPDATE", "memory_id": target_id, "task": changed[target_id].task})
            linked.append(target_id)
            continue
        record = Experience(**record_fields(state, "experience"), **draft)
        new.append(record)
        entry = {"op": op, "memory_id": record.memory_id, "task": draft["task"]}
        if op == "DELETE" and target is not None:
            changed[target_id] = _revise(target, state, "DELETE", status=DELETED)
            entry["deleted_id"] = target_id
        ops.append(entry)
        linked.append(record.memory_id)
    update = {"experience_ops": ops, "linked_experience_ids": list(dict.fromkeys(linked))}
    try:
        _store(repo, state["request_id"], list(changed.values()), new, journal.ops(update))
    except ConflictError:  # a target changed meanwhile: keep every draft as a new experience
        note_fallback("reconciled experiences changed concurrently: every draft is added")
        new, ops, linked = _all_added(state)
        update = {"experience_ops": ops, "linked_experience_ids": list(dict.fromkeys(linked))}
        _store(repo, state["request_id"], [], new, journal.ops(update))
    return update
