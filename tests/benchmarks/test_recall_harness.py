"""The recall benchmark harness (bench/): CV splitter and recall arithmetic, on synthetic data."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from bench.common.corpora import Corpus, Doc, Query, normalize_answer_text
from bench.common.embed_cache import EmbeddingCache
from bench.common.harness import (
    KS,
    LexSpec,
    RankConfig,
    attach_embeddings,
    build_table,
    evaluate,
    lexical_texts,
    loco_cv,
    loco_folds,
    recall_at,
    select_config,
    with_,
)
from bench.common.lite_rules import apply_lite_rules, reaction_ids
from bench.lab.fusion import FusionConfig
from hy_memory_langgraph.testing import HashingEmbeddings

TOPICS = ["camping trip mountains", "pottery class clay", "adoption agency papers", "marathon running shoes",
          "guitar lessons chords", "garden tomatoes harvest", "chess tournament opening", "sushi dinner downtown"]


def _corpus(cid: str, shift: int) -> Corpus:
    """A synthetic two-speaker conversation: one session per topic, questions about each."""
    docs, queries = [], []
    for s, topic in enumerate(TOPICS[shift:] + TOPICS[:shift]):
        session = f"{cid}-s{s}"
        lines = [f"Ann: guess what, news about {topic}", "Bob: tell me more!", f"Ann: it was all {topic.split()[0]}"]
        for t, line in enumerate(lines):
            docs.append(Doc(id=f"D{s}:{t}", text=line, session=session, date=datetime(2023, 1 + s, 1)))
        queries.append(Query(text=f"What did Ann say about {topic.split()[1]}?", category="single-hop",
                             gold=(f"D{s}:0",)))
    return Corpus(id=cid, docs=docs, queries=queries, speakers=("Ann", "Bob"))


@pytest.fixture
def runs(tmp_path: Path) -> list:
    emb = HashingEmbeddings(dims=64)
    cache = EmbeddingCache("hashing-64", cache_dir=tmp_path)
    return attach_embeddings([_corpus(f"c{i}", i) for i in range(3)], cache, emb.embed_documents, emb.embed_documents)


def test_folds_hold_out_each_corpus_once_and_never_train_on_it() -> None:
    folds = loco_folds(["a", "b", "c", "d"])
    assert [held for held, _ in folds] == ["a", "b", "c", "d"]
    for held, train in folds:
        assert held not in train and sorted(train + [held]) == ["a", "b", "c", "d"]


class _Guarded(dict):
    """A table column that fails the test if the held-out corpus is ever read."""

    def __init__(self, data: dict, forbidden: str) -> None:
        super().__init__(data)
        self.forbidden = forbidden

    def __getitem__(self, key: str) -> np.ndarray:
        assert key != self.forbidden, "selection read the held-out corpus"
        return super().__getitem__(key)


def test_selection_never_reads_the_held_out_corpus() -> None:
    a, b = RankConfig(), with_(RankConfig(), k1=1.2)
    good, bad = np.array([[1.0, 1.0]]), np.array([[0.0, 0.0]])
    # A wins on the training corpora, B would win hugely on the held-out one.
    data = {a: {"t1": good, "t2": good, "held": bad}, b: {"t1": bad, "t2": bad, "held": good * 1}}
    guarded = {cfg: _Guarded(cols, "held") for cfg, cols in data.items()}
    assert select_config(guarded, ["t1", "t2"], [a, b]) is a


def test_held_out_data_cannot_change_its_own_fold_choice(runs: list) -> None:
    space = [RankConfig(retriever="bm25"), RankConfig(retriever="vector"),
             with_(RankConfig(), fusion=FusionConfig("rrf", 0.5, 10))]
    table = build_table(runs, space)
    before = {r.held_out: r.chosen for r in loco_cv(runs, space, table)}
    for held in before:  # make every config look perfect / useless on the held-out corpus only
        for cfg in space:
            poisoned = {cfg2: dict(cols) for cfg2, cols in table.items()}
            for other in space:
                poisoned[other][held] = np.zeros_like(table[other][held])
            poisoned[cfg][held] = np.ones_like(table[cfg][held])
            chosen = {r.held_out: r.chosen for r in loco_cv(runs, space, poisoned)}
            assert chosen[held] == before[held]


def test_cv_scores_the_held_out_corpus_with_the_chosen_config(runs: list) -> None:
    space = [RankConfig(retriever="bm25"), RankConfig(retriever="vector")]
    table = build_table(runs, space)
    for result in loco_cv(runs, space, table):
        run = next(r for r in runs if r.corpus.id == result.held_out)
        np.testing.assert_array_equal(result.scores, evaluate(run, result.chosen))
        others = [r.corpus.id for r in runs if r.corpus.id != result.held_out]
        assert result.chosen == select_config(table, others, space)


def test_evidence_recall_arithmetic() -> None:
    q = Query("q", "multi-hop", ("D1:1", "D1:3"))
    assert recall_at(q, ["D1:3", "D1:2", "D1:1"], 1, "evidence") == 0.5
    assert recall_at(q, ["D1:3", "D1:2", "D1:1"], 3, "evidence") == 1.0
    assert recall_at(q, [], 10, "evidence") == 0.0


def test_answer_recall_matches_whole_normalised_answers() -> None:
    texts = {"m1": normalize_answer_text("I'm 35 years old, live in Seattle."),
             "m2": normalize_answer_text("Order #135 ships Monday")}
    assert recall_at(Query("age?", "customer", ("35", "thirty five")), ["m1"], 1, "answer", texts) == 1.0
    assert recall_at(Query("age?", "customer", ("35",)), ["m2"], 1, "answer", texts) == 0.0
    assert recall_at(Query("city?", "customer", ("seattle",)), ["m2", "m1"], 1, "answer", texts) == 0.0
    assert recall_at(Query("city?", "customer", ("seattle",)), ["m2", "m1"], 2, "answer", texts) == 1.0


def test_toy_corpus_is_solved_by_bm25(runs: list) -> None:
    scores = evaluate(runs[0], RankConfig(retriever="bm25", lex=RankConfig().lex))
    assert scores.shape == (len(TOPICS), len(KS))
    assert scores[:, 1].mean() == 1.0


def test_embedding_cache_computes_each_text_once(tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        return [[float(len(t)), 1.0] for t in texts]

    cache = EmbeddingCache("toy", cache_dir=tmp_path)
    first = cache.embed(["a", "bb", "a"], embed, side="query")
    again = EmbeddingCache("toy", cache_dir=tmp_path).embed(["bb", "a"], embed, side="query")
    assert calls == [["a", "bb"]]
    np.testing.assert_array_equal(first[[1, 0]], again)


def test_lite_rules_drop_trivial_and_repeated_turns_and_carry_the_trivial_ones() -> None:
    when = datetime(2024, 5, 1)
    docs = [Doc("d1", "Anna: We went camping in the Alps.", "s1", when),
            Doc("d2", "Ben: ok", "s1", when, role="assistant"),
            Doc("d3", "Ben: Which valley was it?", "s1", when, role="assistant"),
            Doc("d4", "Anna: We went camping in the Alps.", "s1", when),
            Doc("d5", "Anna: 👍", "s1", when),
            Doc("d6", "Anna: We went camping in the Alps.", "s2", when)]
    corpus = Corpus("c", docs, [Query("where did they camp?", "single-hop", ("d2", "d3"))])
    kept, dropped = apply_lite_rules(corpus, trivial=True, dedup=True)
    assert [d.id for d in kept.docs] == ["d1", "d3", "d6"]  # d6: another session
    assert dropped == {"trivial": 2, "duplicate": 1, "reaction": 0, "question": 0, "evidence_dropped": 1}
    assert kept.docs[1].carried == "Ben: ok" and kept.docs[2].carried == ""
    assert "Ben: ok" in lexical_texts(kept, LexSpec(prev=0, next=0))[1]
    unchanged, none = apply_lite_rules(corpus, trivial=False, dedup=False)
    assert unchanged.docs == corpus.docs and none["trivial"] == none["duplicate"] == 0
    asked, dropped = apply_lite_rules(corpus, trivial=True, dedup=True, questions=True)  # as lite stores it now
    assert [d.id for d in asked.docs] == ["d1", "d6"] and dropped["question"] == 1
    assert dropped["evidence_dropped"] == 2


def test_reactions_are_judged_against_the_last_stored_turn_of_the_session() -> None:
    when = datetime(2024, 5, 1)
    docs = [Doc("d1", "Anna: We went camping in the Alps.", "s1", when),
            Doc("d2", "Ben: Wow, camping in the alps sounds lovely!", "s1", when, role="assistant"),
            Doc("d3", "Ben: Which valley was it?", "s1", when, role="assistant"),
            Doc("d4", "Anna: Wow, camping in the alps sounds lovely!", "s2", when)]  # nothing before it in s2
    corpus = Corpus("c", docs, [])
    assert reaction_ids(corpus) == {"d2"}
    kept, dropped = apply_lite_rules(corpus, trivial=True, dedup=True, reactions=True)
    assert [d.id for d in kept.docs] == ["d1", "d3", "d4"] and dropped["reaction"] == 1
    assert kept.docs[1].carried == "Ben: Wow, camping in the alps sounds lovely!"
