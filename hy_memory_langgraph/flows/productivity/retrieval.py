"""Productivity search (working / coding): facts, then experiences.

Scope: the user ids given, the workspace/branch scope of :func:`scope_filter`, the
time range when one is given; all applied by the store before its top-k.

Gates compare **calibrated similarities**
(:mod:`hy_memory_langgraph.models.calibration`): the cosine mapped so that unrelated texts
of the query's language score about 0 and the same text 1 with the embedding model in
use, so a gate means the same with e5 (unrelated cosine about 0.75) as with OpenAI
embeddings (about 0).

Facts: active facts only, by vector (cosine on ``"subject: statement"``). A fact is
kept when its calibrated similarity reaches :data:`FACT_GATE` (0.30). Kept facts are
ordered by ``cosine + _LEXICAL_TIE_BREAK * bm25 / (bm25 + _BM25_SATURATION)``: BM25
(CJK-aware tokenizer of :mod:`hy_memory_langgraph.retrieval.bm25`) over the kept pool
only moves facts whose cosines are within a few hundredths of each other.

Experiences: first those linked from the kept facts (written by the same ``add``, or
updated/confirmed by it), in fact order; then direct hits (max-pooled over the task and
search-key vectors) whose calibrated similarity reaches :data:`EXPERIENCE_GATE` (0.40).

``min_score``, when given, replaces both gates (on the same calibrated scale). ``limit``
applies per layer. Each hit reports its raw ``similarity`` (cosine, facts) and its
``calibrated_similarity``.
"""

from __future__ import annotations

from typing import Any, Final

from langgraph.runtime import Runtime

from hy_memory_langgraph.flows.productivity.state import ProductivitySearchState
from hy_memory_langgraph.models.calibration import LanguageScale
from hy_memory_langgraph.repos.filters import in_scope, scope_filter, time_filter
from hy_memory_langgraph.repos.productivity import ProductivityRepository
from hy_memory_langgraph.repos.records import ACTIVE, Fact, Record
from hy_memory_langgraph.retrieval.bm25 import BM25Index
from hy_memory_langgraph.scenes import get_scene
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.timeutil import elapsed_ms

#: Minimum calibrated similarity of a returned fact.
FACT_GATE: Final = 0.30
#: Minimum calibrated similarity of a directly retrieved experience.
EXPERIENCE_GATE: Final = 0.40
#: Weight of the saturated BM25 score added to the cosine of a kept fact.
_LEXICAL_TIE_BREAK: Final = 0.05
#: BM25 score at which the tie-break reaches half its weight.
_BM25_SATURATION: Final = 4.0
_POOL_FACTOR: Final = 4
_MIN_POOL: Final = 20


def _repo(state: ProductivitySearchState, runtime: Runtime[MemoryContext]) -> ProductivityRepository:
    return runtime.context.productivity_repo(state["route"])


def _where(state: ProductivitySearchState) -> dict[str, Any]:
    return {"status": ACTIVE, **scope_filter(state.get("workspace_id"), state.get("branch")),
            **time_filter(state.get("created_after"), state.get("created_before"))}


def _gate(state: ProductivitySearchState, default: float) -> float:
    min_score = state.get("min_score")
    return float(min_score) if min_score is not None else default


def search_facts(state: ProductivitySearchState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """One store batch for both layers (the query is embedded once); rank the facts.

    Facts: gated vector hits over every user, lexical tie-break, best ``limit``.
    Experiences: a pool of ``2 * limit`` nearest, enough to fill the slots linked
    experiences leave (there are at most ``limit`` of those).
    """
    limit, query = state["limit"], state["effective_query"]
    pools = _repo(state, runtime).search_layers(
        {"fact": max(limit * _POOL_FACTOR, _MIN_POOL), "experience": 2 * limit},
        state["user_ids"], query, where=_where(state))
    scale = runtime.context.stores.calibration().for_text(query)
    gate = _gate(state, FACT_GATE)
    kept = [(fact, score) for fact, score in pools["fact"]
            if scale.similarity(score) >= gate and isinstance(fact, Fact)]
    index = BM25Index()
    for fact, _ in kept:
        index.add(fact.memory_id, fact.embed_text or fact.statement)
    lexical = index.score(query)
    ranked = []
    for fact, cosine in kept:
        bm25 = lexical.get(fact.memory_id, 0.0)
        fused = cosine + _LEXICAL_TIE_BREAK * bm25 / (bm25 + _BM25_SATURATION)
        ranked.append((fused, cosine, fact))
    ranked.sort(key=lambda t: (-t[0], t[2].memory_id))
    hits = [{**_public(f, fused), "similarity": round(cosine, 6),
             "calibrated_similarity": round(scale.similarity(cosine), 6)}
            for fused, cosine, f in ranked[:limit]]
    return {"fact_hits": hits, "experience_pool": pools["experience"]}


def search_experiences(state: ProductivitySearchState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Experiences linked from the kept facts first, then gated direct hits."""
    repo, limit = _repo(state, runtime), state["limit"]
    ws, branch = state.get("workspace_id"), state.get("branch")
    link_of: dict[str, str] = {}
    for fact in state.get("fact_hits") or []:
        for exp_id in fact.get("experience_ids") or []:
            link_of.setdefault(exp_id, fact["memory_id"])
    linked = [e for e in repo.experiences(list(link_of))
              if e.status == ACTIVE and in_scope(e, ws, branch)][:limit]
    gate = _gate(state, EXPERIENCE_GATE)
    scale = runtime.context.stores.calibration().for_text(state["effective_query"])
    direct = {r.memory_id: (r, s) for r, s in state.get("experience_pool") or []
              if scale.similarity(s) >= gate}
    out: list[dict[str, Any]] = []
    for exp in linked:
        score = direct.pop(exp.memory_id, (None, None))[1]
        out.append({**_public(exp, score, scale), "via": "fact",
                    "linked_fact_id": link_of[exp.memory_id]})
    rest = sorted(direct.values(), key=lambda rs: (-rs[1], rs[0].memory_id))
    out.extend({**_public(r, s, scale), "via": "search"} for r, s in rest)
    return {"experience_hits": out[:limit]}


def _public(record: Record, score: float | None, scale: LanguageScale | None = None) -> dict[str, Any]:
    """The caller-facing dict of a hit (``score`` only when the hit has one, and its
    ``calibrated_similarity`` when ``scale`` is given)."""
    out = record.to_dict()
    if score is None:
        out.pop("score")
    else:
        out["score"] = round(float(score), 6)
        if scale is not None:
            out["calibrated_similarity"] = round(scale.similarity(float(score)), 6)
    return out


def finish_productivity_search(state: ProductivitySearchState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """The search result (``docs/design.md#return-shapes``)."""
    result: dict[str, Any] = {
        "request_id": state["request_id"], "scene": "productivity",
        "facts": list(state.get("fact_hits") or []),
        "experiences": list(state.get("experience_hits") or []),
        "elapsed_ms": elapsed_ms(state["started"]),
    }
    result.update(get_scene(state["route"]).extras("search", state))
    return {"result": result}
