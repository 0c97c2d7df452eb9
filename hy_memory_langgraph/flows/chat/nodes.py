"""Nodes of the chat write subgraph (``docs/design.md#chat-memory``).

pro:  extract_facts → gather_candidates → reconcile → apply_decisions → finish_chat
lite: store_turns                          (zero LLM calls; a node of the write graph)

Any unusable model output degrades: no extraction → the raw turns are stored as in
lite mode; no reconcile → every new fact is added. A write is never lost.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langgraph.runtime import Runtime

from hy_memory_langgraph.embedding_batch import embed_queries
from hy_memory_langgraph.errors import ConflictError
from hy_memory_langgraph.flows.chat.state import ChatWriteState
from hy_memory_langgraph.flows.contracts import PreparedWrite, ops_summary
from hy_memory_langgraph.ids import random_id
from hy_memory_langgraph.messages.compression import compress_for_prompt, truncate_chars_head_tail
from hy_memory_langgraph.messages.language import detect_language
from hy_memory_langgraph.messages.render import transcript_rows
from hy_memory_langgraph.messages.redaction import redact_after
from hy_memory_langgraph.pipeline_log.meter import note_fallback
from hy_memory_langgraph.prompts.replies import CHAT_OPS, OWNERS, ChatExtract, ChatReconcile
from hy_memory_langgraph.repos.chat import ChatRepository
from hy_memory_langgraph.repos.records import ACTIVE, ChatMemory
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.services.hybrid_search import hybrid_search
from hy_memory_langgraph.services.journal import Journal
from hy_memory_langgraph.services.llm import ask
from hy_memory_langgraph.services.turns import plan_turns, turn_hashes
from hy_memory_langgraph.timeutil import elapsed_ms, iso, prompt_time

_CANDIDATES_PER_FACT = 5
_MAX_CANDIDATES = 12
#: What one extraction may write, whatever the model answers (a garbled or manipulated
#: answer must not turn one add into thousands of searches and memories): facts kept in
#: order, each fact's text and subject cut around a marker.
MAX_FACTS = 64
_FACT_CHARS = 2000
_SUBJECT_CHARS = 200


def _fields(state: PreparedWrite) -> dict[str, Any]:
    return {"agent_id": state.get("agent_id"), "session_id": state.get("session_id"),
            "metadata": dict(state.get("metadata") or {})}


def store_turns(state: PreparedWrite, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Lite mode (and the extraction fallback): each user/assistant turn with signal is a
    memory (:mod:`hy_memory_langgraph.services.turns` decides which); returns the result.

    One read batch (the session's recent window and the turn index) and one write batch
    (the new memories, their index entries and history events, the revision bump and the
    trace), so all texts of the write are embedded in one call. The session's window is
    held (within the process) from the read to the write.
    """
    ctx = runtime.context
    repo, traces = ctx.chat_repo, ctx.chat_traces
    journal = Journal.of(repo.store, state, "store_turns")
    done = journal.replay()
    if done is not None:
        return done
    user_id, session_id = state["user_id"], state.get("session_id")
    keys = turn_hashes(state["msgs"], session_id)
    with traces.session_lock(user_id, session_id):
        window_item, *key_items = repo.store.batch(
            [traces.window_op(user_id, session_id), *repo.turn_ops(user_id, keys)])
        window = traces.window_messages(window_item)
        msgs = redact_after(window, state["msgs"])  # "What's the PIN?" last write, "4821" now
        plan = plan_turns(msgs, history=window, session_id=session_id,
                          stored=repo.stored_turns(keys, key_items))
        change = repo.begin(state["request_id"])
        for index, turn in enumerate(plan):
            if turn.op == "ADD":
                assert turn.memory_id is not None
                repo.stage_turn(change, ChatMemory(
                    memory_id=turn.memory_id, user_id=user_id, content=turn.text,
                    memory_at=iso(state["at"]), memory_ts=state["at"].timestamp(),
                    owner=turn.role, role=turn.role, source="turn", context=turn.context,
                    carried=turn.carried, turn_hash=turn.key, turn_index=index,
                    question=False,  # question-only turns are never stored (services.turns)
                    **_fields(state)))
        change.ops.extend(traces.append_ops(user_id, session_id, msgs, scene="chat", window=window))
        ops = [{"op": t.op, "memory_id": t.memory_id, "content": t.text,
                **({"reason": t.reason} if t.reason else {})} for t in plan]
        update = {"ops": ops, "result": _chat_result(state, ops)}
        change.ops.extend(journal.ops(update))
        repo.commit(change)
    return update


def extract_facts(state: ChatWriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """One extraction call: self-contained facts with subject and owner."""
    ctx = runtime.context
    history = ctx.chat_traces.recent_messages(state["user_id"], state.get("session_id"),
                                              turns=ctx.config.coding.extract_history_turns)
    limits = {"tool_result_max_bytes": ctx.config.coding.tool_result_max_bytes}
    reply = ask(
        ctx.llm, "chat_extract", "chat_extract", detect_language(state["msgs"]), ChatExtract,
        memory_at=prompt_time(state["at"]), user_id=state["user_id"],
        history=transcript_rows(compress_for_prompt(history, **limits)),
        new_messages=transcript_rows(compress_for_prompt(state["msgs"], **limits)),
    )
    if reply is None:
        note_fallback("extraction unusable: the raw turns are stored")
        return {"facts": [], "fallback": "extract_failed"}
    facts = [{"content": truncate_chars_head_tail(f.content, _FACT_CHARS, _FACT_CHARS // 2 - 40),
              "subject": f.subject[:_SUBJECT_CHARS], "owner": f.owner} for f in reply.facts]
    if len(facts) > MAX_FACTS:
        note_fallback(f"extraction gave {len(facts)} facts: the first {MAX_FACTS} are kept")
        facts = facts[:MAX_FACTS]
    return {"facts": facts, "fallback": None}


def route_after_extract(state: ChatWriteState) -> str:
    if state.get("fallback") == "extract_failed":
        return "store_turns"
    return "gather_candidates" if state.get("facts") else "finish_chat"


def gather_candidates(state: ChatWriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Existing memories of the same user that each new fact might touch."""
    ctx = runtime.context
    seen: dict[str, ChatMemory] = {}
    embed_queries(ctx.stores.embeddings, [fact["content"] for fact in state["facts"]])  # one call, then cached
    for fact in state["facts"]:
        for memory in hybrid_search(ctx, state["user_id"], fact["content"], _CANDIDATES_PER_FACT,
                                    now=state["at"]):
            seen.setdefault(memory.memory_id, memory)
    return {"candidates": list(seen.values())[:_MAX_CANDIDATES]}


def route_after_candidates(state: ChatWriteState) -> str:
    return "reconcile" if state.get("candidates") else "apply_decisions"


def _fact_row(i: int, fact: dict[str, Any], at: str) -> dict[str, Any]:
    return {"id": f"n{i}", "subject": fact["subject"] or "-", "owner": fact["owner"], "at": at,
            "text": fact["content"]}


def _candidate_row(i: int, m: ChatMemory) -> dict[str, Any]:
    return {"id": f"c{i}", "subject": m.subject or "-", "owner": m.owner, "at": m.memory_at,
            "text": m.content}


def reconcile(state: ChatWriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """One reconcile call; decisions are checked against the hard rules."""
    facts, candidates = state["facts"], state["candidates"]
    at = iso(state["at"])
    reply = ask(
        runtime.context.llm, "chat_reconcile", "chat_reconcile", detect_language(state["msgs"]), ChatReconcile,
        new_facts=[_fact_row(i, f, at) for i, f in enumerate(facts)],
        candidates=[_candidate_row(i, m) for i, m in enumerate(candidates)],
    )
    if reply is None:
        note_fallback("reconcile unusable: every fact is added")
    decided: dict[int, dict[str, Any]] = {}
    for decision in reply.operations if reply else []:
        index = _index(decision.fact, "n", len(facts))
        if index is None or index in decided:
            continue
        target = _index(decision.target, "c", len(candidates))
        decided[index] = _checked(decision.op, facts[index],
                                  candidates[target] if target is not None else None, state["at"],
                                  decision.content)
    return {"decisions": [decided.get(i) or {"op": "ADD"} for i in range(len(facts))]}


def _index(text: str, prefix: str, size: int) -> int | None:
    text = text.lower().removeprefix(prefix)
    return int(text) if text.isdigit() and int(text) < size else None


def _same_owner_and_subject(fact: dict[str, Any], target: ChatMemory) -> bool:
    """Same owner and the same, known subject (an unknown subject never matches)."""
    if fact["owner"] != target.owner:
        return False
    a, b = fact["subject"].strip().casefold(), (target.subject or "").strip().casefold()
    return bool(a) and a == b


def _checked(op: str, fact: dict[str, Any], target: ChatMemory | None, at: datetime,
             content: str) -> dict[str, Any]:
    """Enforce the rules the model may break: targets, subjects/owners, time order."""
    if op == "ADD" or target is None:
        return {"op": "ADD"}
    if op == "SKIP":
        return {"op": "SKIP", "target": target.memory_id}
    if not _same_owner_and_subject(fact, target):
        return {"op": "ADD"}
    if at.timestamp() < target.memory_ts:
        return {"op": "ADD"}
    if op == "UPDATE":
        merged = content.strip() or f"{target.content} {fact['content']}"
        return {"op": "UPDATE", "target": target.memory_id, "content": merged}
    return {"op": "SUPERSEDE", "target": target.memory_id}


def apply_decisions(state: ChatWriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Write the decided operations; one op per fact in the result.

    The plain ``ADD`` s are written together (one store batch, one embedding call), each
    ``UPDATE`` / ``SUPERSEDE`` in a store batch of its own. A decision whose target is
    gone, retired or already changed by this write, or that meets a concurrent change of
    its target, is carried out as ``ADD``: the fact is never lost. In a background run each
    batch carries its journal entry (:mod:`~hy_memory_langgraph.services.journal`), so a
    resumed run applies nothing twice.
    """
    repo = runtime.context.chat_repo
    journal = Journal.of(repo.store, state, "apply_decisions")
    decisions = state.get("decisions") or [{"op": "ADD"} for _ in state["facts"]]
    ops: list[dict[str, Any]] = []
    added: list[tuple[int, dict[str, Any]]] = []  # (position in ops, fact)
    changed: set[str] = set()
    for index, (fact, decision) in enumerate(zip(state["facts"], decisions)):
        op, target = decision["op"], decision.get("target")
        applied = journal.replay(f"fact{index}") if op in ("UPDATE", "SUPERSEDE") else None
        if applied is not None:
            changed.add(str(target))
            ops.append(applied)
            continue
        current = repo.get(target) if target and op != "ADD" else None
        stale = current is None or current.status != ACTIVE or target in changed
        if op in ("UPDATE", "SUPERSEDE") and stale:
            op = "ADD"  # one change per memory per write; later claims are kept as new facts
        if op in ("UPDATE", "SUPERSEDE"):
            changed.add(target)
        if op == "SKIP":
            ops.append({"op": "SKIP", "memory_id": target, "content": fact["content"]})
        elif op == "ADD":
            added.append((len(ops), fact))
            ops.append({})
        else:
            ops.append(_apply(repo, state, fact, op, target, decision.get("content"),
                              journal, f"fact{index}"))
    if added:
        for position, op_done in _add_all(repo, state, added, journal).items():
            ops[position] = op_done
    return {"ops": ops}


def _add_all(repo: ChatRepository, state: ChatWriteState, added: list[tuple[int, dict[str, Any]]],
             journal: Journal) -> dict[int, dict[str, Any]]:
    """The plain ``ADD`` s in one batch: their op by position in the result."""
    done = journal.replay("adds")
    if done is not None:
        return {int(position): op for position, op in done["ops"].items()}
    ids = [random_id() for _ in added]
    facts = [{"content": f["content"], "subject": f["subject"], "owner": f["owner"]} for _, f in added]
    ops = {position: {"op": "ADD", "memory_id": memory_id, "content": fact["content"]}
           for (position, _), memory_id, fact in zip(added, ids, facts, strict=True)}
    repo.add_all(state["user_id"], facts, ids=ids, request_id=state["request_id"], memory_at=state["at"],
                 extra=journal.ops({"ops": {str(p): op for p, op in ops.items()}}, "adds"), **_fields(state))
    return ops


def _apply(repo: ChatRepository, state: ChatWriteState, fact: dict[str, Any], op: str,
           target: str | None, content: str | None, journal: Journal, part: str) -> dict[str, Any]:
    rid = state["request_id"]
    if op == "UPDATE" and target:
        text = content or fact["content"]
        done = {"op": "UPDATE", "memory_id": target, "content": text}
        updated = repo.update(target, text, request_id=rid, memory_at=state["at"],
                              extra=journal.ops(done, part))
        if updated is not None:
            return done
        note_fallback("update target deleted concurrently: the fact is added")
        op = "ADD"
    supersedes = [target] if op == "SUPERSEDE" and target else None
    try:
        return _create(repo, state, fact, op, supersedes, journal, part)
    except ConflictError:
        note_fallback("supersede target changed concurrently: the fact is added")
        return _create(repo, state, fact, "ADD", None, journal, part)


def _create(repo: ChatRepository, state: ChatWriteState, fact: dict[str, Any], op: str,
            supersedes: list[str] | None, journal: Journal, part: str) -> dict[str, Any]:
    memory_id = random_id()
    done = {"op": op, "memory_id": memory_id, "content": fact["content"],
            **({"superseded": supersedes[0]} if supersedes else {})}
    repo.create(state["user_id"], fact["content"], request_id=state["request_id"], memory_at=state["at"],
                subject=fact["subject"], owner=fact["owner"], supersedes=supersedes, memory_id=memory_id,
                extra=journal.ops(done, part), **_fields(state))
    return done


def finish_chat(state: ChatWriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Record the trace and build the result (``store_turns`` does both itself)."""
    traces = runtime.context.chat_traces
    journal = Journal.of(traces.store, state, "finish_chat")
    done = journal.replay()
    if done is not None:
        return done
    update = {"result": _chat_result(state, state.get("ops") or [])}
    traces.append(state["user_id"], state.get("session_id"), state["msgs"], scene="chat",
                  extra=journal.ops(update))
    return update


def _chat_result(state: PreparedWrite, ops: list[dict[str, Any]]) -> dict[str, Any]:
    """The result of a chat write (``docs/design.md#return-shapes``)."""
    if not ops and not any(m.content.strip() for m in state["msgs"] if m.role in OWNERS):
        ops = [{"op": "SKIP", "memory_id": None,
                "reason": "no user or assistant text left once tool traces were removed"}]
    ids = [op["memory_id"] for op in ops if op["op"] in ("ADD", "UPDATE", "SUPERSEDE")]
    return {"success": True, "scene": "chat", "request_id": state["request_id"],
            "memory_ids": ids, "ops": ops, "ops_summary": ops_summary(ops, CHAT_OPS),
            "elapsed_ms": elapsed_ms(state["started"])}
