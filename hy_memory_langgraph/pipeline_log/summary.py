"""What a stage record keeps of a node's output.

Routing decisions, the operations a model decided (recorded before they are applied),
the operations applied, fallbacks and the sizes of candidate and hit lists. Text that
may hold personal data (memory content, statements, tasks, rewrites, subjects) is left
out unless ``keep_text`` is set (``MEMORY_PIPELINE_LOG_TEXT=true``).

Example:
    >>> summarize({"route": "chat", "route_reason": "no_tools"}, keep_text=False)
    {'decision': {'route': 'chat', 'route_reason': 'no_tools'}}
    >>> summarize({"ops": [{"op": "ADD", "memory_id": "m1", "content": "x"}]}, keep_text=False)
    {'applied': [{'op': 'ADD', 'memory_id': 'm1'}]}
"""

from __future__ import annotations

from typing import Any, Final

_DECISION_KEYS: Final = ("route", "route_reason", "analysis", "time_range", "lang",
                         "chain_rounds", "fact_id", "progress_summary", "rewrite",
                         "run", "coalesced", "attempt")
_DECIDED_KEYS: Final = ("decisions", "experience_decisions")
_APPLIED_KEYS: Final = ("ops", "experience_ops", "fact_ops")
_COUNTED_KEYS: Final = ("facts", "candidates", "experience_drafts", "experience_candidates",
                        "fact_candidates", "fact_hits", "experience_hits", "experience_pool",
                        "touched_files", "msgs")
_TEXT_KEYS: Final = frozenset({"content", "statement", "task", "subject", "merged", "rewrite",
                               "progress_summary", "solution", "summary"})


def _strip(value: Any, keep_text: bool) -> Any:
    if keep_text:
        return value
    if isinstance(value, dict):
        return {k: _strip(v, keep_text) for k, v in value.items() if k not in _TEXT_KEYS}
    if isinstance(value, list):
        return [_strip(v, keep_text) for v in value]
    return value


def summarize(update: dict[str, Any] | None, *, keep_text: bool) -> dict[str, Any]:
    """The loggable part of a node's state update."""
    if not isinstance(update, dict):
        return {}
    out: dict[str, Any] = {}
    decision = {k: update[k] for k in _DECISION_KEYS if update.get(k) not in (None, "", {}, [])}
    if not keep_text:
        for key in ("rewrite", "progress_summary"):
            if key in decision:
                decision[key] = f"<{len(str(decision[key]))} chars>"
    if decision:
        out["decision"] = decision
    decided = [d for k in _DECIDED_KEYS for d in update.get(k) or []]
    decided += [{"op": "SUPERSEDE", "target": i} for i in update.get("superseded_ids") or []]
    if decided:
        out["decided"] = _strip(decided, keep_text)
    applied = [op for k in _APPLIED_KEYS for op in update.get(k) or []]
    if applied:
        out["applied"] = _strip(applied, keep_text)
    counts = {k: len(update[k]) for k in _COUNTED_KEYS if isinstance(update.get(k), list)}
    if counts:
        out["counts"] = counts
    if update.get("fallback"):
        out["fallback"] = [str(update["fallback"])]
    return out
