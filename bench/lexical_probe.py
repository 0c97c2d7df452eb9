"""BM25-only evidence recall on a LoCoMo-format file (a quick probe, not a timed test).

Each turn is a document ``"{speaker}: {text}"`` (plus ``" [shared an image: {caption}]"`` when the turn
shared an image), one index per conversation, the question is the query. Recall@k of a
question = share of its evidence ids found in the top k; averaged over questions of
categories 1-4 that have evidence.

Usage::

    python -m bench.lexical_probe [path/to/locomo.json]
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.common.locomo import Conversation, iter_questions, load_locomo
from bench.common.paths import LOCOMO_PATH
from hy_memory_langgraph.retrieval.bm25 import BM25Index, tokenize

KS = (5, 10, 20)


def evidence_recall(
    convs: list[Conversation],
    tokenizer: Callable[[str], list[str]] = tokenize,
    *,
    captions: bool = True,
    categories: tuple[int, ...] = (1, 2, 3, 4),
) -> dict[str, dict[int, float]]:
    """Recall@k per category (and ``"all"``) for BM25 over turns."""
    indexes: dict[str, BM25Index] = {}
    for conv in convs:
        index = BM25Index(tokenizer=tokenizer)
        for turn in conv.turns:
            index.add(turn.dia_id, turn.message(captions=captions))
        indexes[conv.sample_id] = index
    sums: dict[str, dict[int, float]] = defaultdict(lambda: dict.fromkeys(KS, 0.0))
    counts: dict[str, int] = defaultdict(int)
    for conv, qa in iter_questions(convs, categories):
        if not qa.evidence:
            continue
        ranked = [doc for doc, _ in indexes[conv.sample_id].top(qa.question, max(KS))]
        gold = set(qa.evidence)
        for group in ("all", f"cat{qa.category}"):
            counts[group] += 1
            for k in KS:
                sums[group][k] += len(gold & set(ranked[:k])) / len(gold)
    return {g: {k: sums[g][k] / counts[g] for k in KS} for g in sorted(counts)} | {
        "n": {0: float(counts["all"])}
    }


def main(path: str | Path = LOCOMO_PATH) -> None:
    convs = load_locomo(path)
    variants: dict[str, tuple[Callable[[str], list[str]], bool]] = {
        "default (stem+stop, captions)": (tokenize, True),
        "no captions": (tokenize, False),
        "no stemming": (partial(tokenize, stem=False), True),
        "no stop-words": (partial(tokenize, stopwords=False), True),
        "neither": (partial(tokenize, stem=False, stopwords=False), True),
    }
    for name, (tokenizer, captions) in variants.items():
        start = time.perf_counter()
        result = evidence_recall(convs, tokenizer, captions=captions)
        took = time.perf_counter() - start
        n = int(result.pop("n")[0])
        line = "  ".join(
            f"{g}: " + "/".join(f"{r[k]:.3f}" for k in KS) for g, r in result.items()
        )
        print(f"{name:32s} n={n} R@5/10/20  {line}  ({took:.1f}s)")


if __name__ == "__main__":
    main(*sys.argv[1:2])
