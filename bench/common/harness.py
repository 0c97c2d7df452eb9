"""Recall harness: rank cached corpora under many configurations, leave-one-corpus-out CV.

Everything expensive (e5 embeddings of memories and questions) is computed once and
cached on disk (:mod:`embed_cache`); a ranking is then a pure function of a corpus, a
question and a :class:`RankConfig`, built from the library's own ranking code
(:class:`~hy_memory_langgraph.retrieval.bm25.BM25Index`,
:func:`~hy_memory_langgraph.retrieval.ranking.rank_candidates`, the query helpers), so the
figures measure what the library does; what the library does not ship (other fusions,
query expansion, the second hop, the Snowball stemmer) comes from :mod:`bench.lab`.
Vector search is emulated exactly: the store ranks by the cosine of L2-normalised e5
vectors over the user's memories (a flat, exact scan).

Cross-validation (:func:`loco_cv`): for each corpus (fold), every tunable is chosen on the
other corpora only (best mean recall@10 over their questions, ties by recall@5, then by
the order of the search space), and the chosen configuration is scored on the held-out
corpus. :func:`select_config` never sees the held-out results; the test suite checks that.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timezone
from functools import partial

import numpy as np
import numpy.typing as npt

from bench.common.corpora import Corpus, Doc, Query, normalize_answer_text
from bench.common.embed_cache import EmbeddingCache
from bench.lab.expansion import TermStats, drop_common_terms, expand_with_feedback
from bench.lab.fusion import FusionConfig, fuse, fused
from bench.lab.hop import Hop, add_second_hop, hop_terms, merge_neighbours
from bench.lab.stemming import snowball_tokenize
from hy_memory_langgraph.messages.signal import is_question_only
from hy_memory_langgraph.models.calibration import LanguageScale
from hy_memory_langgraph.repos.chat_terms import LEXICAL_WINDOW
from hy_memory_langgraph.retrieval.bm25 import BM25Index, tokenize
from hy_memory_langgraph.retrieval.neighbours import Utterance, texts_with_neighbours
from hy_memory_langgraph.retrieval.query import TimeSpan, boost_by_time, time_mentions
from hy_memory_langgraph.retrieval.ranking import ChatRanking, rank_candidates, weigh_questions
from hy_memory_langgraph.retrieval.relative_time import relative_spans

__all__ = [
    "KS",
    "QUESTION_WEIGHTS",
    "CorpusRun",
    "FoldResult",
    "LexSpec",
    "RankConfig",
    "attach_embeddings",
    "build_table",
    "by_category",
    "evaluate",
    "fold_mean",
    "in_sample",
    "loco_cv",
    "loco_folds",
    "pooled",
    "recall_at",
    "select_config",
    "with_",
]

KS = (5, 10)
#: Weights of question-only memories searched by CV and checked on BFCL (1.0 = off).
QUESTION_WEIGHTS: tuple[float, ...] = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.3, 0.1)
#: Calibrated similarities above which a question-only memory echoes the question (0 = all).
QUESTION_ECHOES: tuple[float, ...] = (0.0, 0.6, 0.75, 0.9)
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class LexSpec:
    """What the lexical index sees.

    Attributes:
        stemmer: ``"light"`` (the library's), ``"snowball"`` (:mod:`bench.lab.stemming`)
            or ``"none"``.
        stopwords: Drop stop-words.
        prev: Previous messages of the same session appended as context.
        next: Following messages of the same session appended as context.
        strip_speaker: Diagnostic only (bench-specific): index each message without its
            leading ``"Name: "``.
    """

    stemmer: str = "light"
    stopwords: bool = True
    prev: int = 1
    next: int = 0
    strip_speaker: bool = False

    def tokenizer(self) -> Callable[[str], list[str]]:
        if self.stemmer == "none":
            return partial(tokenize, stem=False, stopwords=self.stopwords)
        if self.stemmer == "snowball":
            return partial(snowball_tokenize, stopwords=self.stopwords)
        return partial(tokenize, stopwords=self.stopwords)


@dataclass(frozen=True)
class RankConfig:
    """Every tunable of one chat-search ranking.

    Attributes:
        retriever: ``"hybrid"``, ``"bm25"`` or ``"vector"``.
        fusion: How the two pools are fused (hybrid only; min-max is the library's).
        lex: Tokenizer and context of the lexical index.
        k1: BM25 ``k1``.
        b: BM25 ``b``.
        pool: Candidates taken from each retriever before fusion.
        max_df: Query terms found in more than this share of the memories are dropped.
        prf_docs: Pseudo-relevance feedback: first-pass top documents used (0 = off).
        prf_terms: Expansion terms added.
        prf_weight: Weight of the expansion terms relative to the original query.
        time_boost: Relative boost of memories dated within a date named in the query.
        session_cap: At most this many memories per session first in the top-k (0 = off).
        question_weight: Factor on the final score of question-only memories
            (:func:`~hy_memory_langgraph.messages.is_question_only`; 1.0 = off).
        question_echo: Only question-only memories at least this similar to the question
            (calibrated with :attr:`CorpusRun.scale`) are weighted; 0 = all of them.
        hop_seeds: Second hop (:mod:`bench.lab.hop`; hybrid only): first-pass top memories
            used as seeds (0 = off).
        hop_vector: Weight of the vector hop (seed vectors as queries).
        hop_lexical: Weight of the lexical hop (the seeds' feedback terms as a BM25 query).
        hop_terms: Terms of the lexical hop's query.
        hop_neighbours: Memories each hop adds at most (per seed for the vector hop).
        event_spans: Memories' own relative phrases ("two weeks ago"), resolved against
            their date, count as their dates for the time boost.
        relative_query: Relative phrases of the questions are resolved against the
            corpus's reference date (:attr:`CorpusRun.reference`).
    """

    retriever: str = "hybrid"
    fusion: FusionConfig = FusionConfig("max", 0.5)
    lex: LexSpec = LexSpec()
    k1: float = 0.9
    b: float = 0.4
    pool: int = 50
    max_df: float = 1.0
    prf_docs: int = 0
    prf_terms: int = 10
    prf_weight: float = 0.0
    time_boost: float = 0.0
    session_cap: int = 0
    question_weight: float = 1.0
    question_echo: float = 0.0
    hop_seeds: int = 0
    hop_vector: float = 0.0
    hop_lexical: float = 0.0
    hop_terms: int = 10
    hop_neighbours: int = 50
    event_spans: bool = False
    relative_query: bool = False

    @classmethod
    def from_ranking(cls, ranking: ChatRanking) -> RankConfig:
        """The harness configuration of the library's chat ranking settings (and its
        lexical documents' session window)."""
        return cls(fusion=FusionConfig("minmax", ranking.vector_weight), k1=ranking.k1, b=ranking.b,
                   pool=ranking.min_pool, lex=LexSpec(prev=LEXICAL_WINDOW[0], next=LEXICAL_WINDOW[1]),
                   time_boost=ranking.time_boost, question_weight=ranking.question_weight,
                   question_echo=ranking.question_echo, event_spans=ranking.event_spans,
                   relative_query=ranking.relative_query)

    def chat_ranking(self) -> ChatRanking:
        """The library's settings for the parts of this configuration the pure ranking reads."""
        return ChatRanking(time_boost=self.time_boost, event_spans=self.event_spans, relative_query=self.relative_query,
                           question_weight=self.question_weight, question_echo=self.question_echo)

    @property
    def hop(self) -> Hop:
        """The second hop of this configuration."""
        return Hop(self.hop_seeds, self.hop_vector, self.hop_lexical, self.hop_terms, self.hop_neighbours)

    def label(self) -> str:
        """A compact one-line description (only what differs from the legacy default)."""
        base = RankConfig()
        parts = [self.retriever]
        if self.retriever == "hybrid":
            f = self.fusion
            parts.append(f"{f.method}(w={f.weight:g}" + (f",k={f.rrf_k:g})" if f.method == "rrf" else ")"))
        if self.retriever != "vector":
            parts.append(f"k1={self.k1:g},b={self.b:g}")
            if self.lex != base.lex:
                diff = {k: v for k, v in vars(self.lex).items() if getattr(base.lex, k) != v}
                parts.append("lex(" + ",".join(f"{k}={v}" for k, v in diff.items()) + ")")
            if self.max_df < 1.0:
                parts.append(f"max_df={self.max_df:g}")
            if self.prf_docs and self.prf_weight:
                parts.append(f"prf({self.prf_docs}d,{self.prf_terms}t,w={self.prf_weight:g})")
        if self.pool != base.pool:
            parts.append(f"pool={self.pool}")
        if self.time_boost:
            parts.append(f"time(+{self.time_boost:g})")
        if self.session_cap:
            parts.append(f"session_cap={self.session_cap}")
        if self.question_weight < 1.0:
            parts.append(f"question_weight={self.question_weight:g}")
            if self.question_echo > 0:
                parts.append(f"question_echo={self.question_echo:g}")
        if self.hop_seeds and (self.hop_vector or self.hop_lexical):
            hop = [f"{self.hop_seeds} seeds"]
            if self.hop_vector:
                hop.append(f"vec w={self.hop_vector:g}")
            if self.hop_lexical:
                hop.append(f"lex w={self.hop_lexical:g} {self.hop_terms}t")
            parts.append("hop(" + ",".join(hop) + f",n={self.hop_neighbours})")
        if self.event_spans:
            parts.append("event_spans")
        if self.relative_query:
            parts.append("relative_query")
        return " ".join(parts)


def _strip_speaker(text: str) -> str:
    head, sep, tail = text.partition(": ")
    return tail if sep and len(head) <= 40 and "\n" not in head else text


def _own(doc: Doc) -> str:
    """A memory's own lexical text: the message and the trivial turns it carries (as the
    library's ``ChatMemory.own_text``)."""
    return f"{doc.text}\n{doc.carried}" if doc.carried else doc.text


def lexical_texts(corpus: Corpus, spec: LexSpec) -> list[str]:
    """The text indexed for each memory: the message plus its session neighbours.

    Built by the library's :func:`texts_with_neighbours` (turns in write order).
    """
    turns = [Utterance(d.id, d.session, (i,), _strip_speaker(d.text) if spec.strip_speaker else _own(d))
             for i, d in enumerate(corpus.docs)]
    if spec.strip_speaker:  # diagnostic: the neighbours keep their prefix, as before
        own = {t.id: t.text for t in turns}
        full = texts_with_neighbours([replace(t, text=d.text) for t, d in zip(turns, corpus.docs, strict=True)],
                                     before=spec.prev, after=spec.next)
        return [own[d.id] + full[d.id][len(d.text):] for d in corpus.docs]
    texts = texts_with_neighbours(turns, before=spec.prev, after=spec.next)
    return [texts[d.id] for d in corpus.docs]


class CorpusRun:
    """One corpus with its cached vectors and lazily built lexical indexes and scores."""

    def __init__(self, corpus: Corpus, doc_vecs: npt.NDArray[np.float32],
                 query_vecs: npt.NDArray[np.float32], reference: date | None = None) -> None:
        self.corpus = corpus
        #: When the questions are asked (relative phrases of a question are resolved
        #: against it): by default today (UTC), as the library resolves them against the
        #: time of the search.
        self.reference = reference or datetime.now(timezone.utc).date()
        self._events: dict[str, list[TimeSpan]] | None = None
        self.ids = [d.id for d in corpus.docs]
        self.dates = {d.id: d.date for d in corpus.docs}
        self.sessions = {d.id: d.session for d in corpus.docs}
        self.cos = (_unit(query_vecs) @ _unit(doc_vecs).T).astype(np.float64)
        self._doc_vecs = doc_vecs
        self._doc_cos: npt.NDArray[np.float64] | None = None
        self._position = {doc_id: i for i, doc_id in enumerate(self.ids)}
        self._indexes: dict[LexSpec, BM25Index] = {}
        self._stats: dict[LexSpec, TermStats] = {}
        self._lexical: dict[tuple, list[dict[str, float]]] = {}
        self._vector: dict[int, list[dict[str, float]]] = {}
        self._lexical_pool: dict[tuple, list[dict[str, float]]] = {}
        self._spans = [time_mentions(q.text) for q in corpus.queries]
        self._answer_texts = [normalize_answer_text(d.text) for d in corpus.docs]
        self._by_id = dict(zip(self.ids, self._answer_texts, strict=True))
        self.questions = frozenset(d.id for d in corpus.docs if is_question_only(d.text))
        #: Maps cosines to calibrated similarities (``None``: raw cosines).
        self.scale: LanguageScale | None = None

    def weighed_questions(self, qi: int, cfg: RankConfig) -> frozenset[str]:
        """The question-only memories ``cfg.question_weight`` applies to for question ``qi``."""
        if cfg.question_weight >= 1.0 or cfg.question_echo <= 0:
            return self.questions
        cosines = self.vector(cfg.pool)[qi]
        scale = self.scale
        return frozenset(d for d in self.questions if d in cosines and (
            scale.similarity(cosines[d]) if scale else cosines[d]) >= cfg.question_echo)

    @property
    def events(self) -> dict[str, list[TimeSpan]]:
        """Event spans of the memories: their relative phrases seen from their date."""
        if self._events is None:
            self._events = {d.id: relative_spans(d.text, d.date.date()) for d in self.corpus.docs
                            if d.date is not None}
            self._events = {k: v for k, v in self._events.items() if v}
        return self._events

    def index(self, spec: LexSpec, k1: float, b: float) -> BM25Index:
        if spec not in self._indexes:
            index = BM25Index(tokenizer=spec.tokenizer())
            for doc_id, text in zip(self.ids, lexical_texts(self.corpus, spec), strict=True):
                index.add(doc_id, text)
            self._indexes[spec] = index
        index = self._indexes[spec]
        index.k1, index.b = k1, b
        return index

    def stats(self, spec: LexSpec) -> TermStats:
        """Term statistics of the texts :meth:`index` indexes (for the lab's query helpers)."""
        if spec not in self._stats:
            tokens = spec.tokenizer()
            self._stats[spec] = TermStats({doc_id: tokens(text) for doc_id, text in
                                           zip(self.ids, lexical_texts(self.corpus, spec), strict=True)})
        return self._stats[spec]

    def lexical(self, cfg: RankConfig) -> list[dict[str, float]]:
        """Full BM25 score dicts per question (first pass, before PRF)."""
        key = (cfg.lex, cfg.k1, cfg.b, cfg.max_df)
        if key not in self._lexical:
            index = self.index(cfg.lex, cfg.k1, cfg.b)
            self._lexical[key] = [index.score_terms(self.query_terms(cfg, q.text)) for q in self.corpus.queries]
        return self._lexical[key]

    def lexical_pool(self, cfg: RankConfig) -> list[dict[str, float]]:
        """Top-``pool`` BM25 dicts per question (first pass, before PRF)."""
        key = (cfg.lex, cfg.k1, cfg.b, cfg.max_df, cfg.pool)
        if key not in self._lexical_pool:
            self._lexical_pool[key] = [_top(scores, cfg.pool) for scores in self.lexical(cfg)]
        return self._lexical_pool[key]

    def query_terms(self, cfg: RankConfig, text: str) -> Counter[str]:
        """The query's terms, those in more than ``cfg.max_df`` of the memories dropped."""
        terms = Counter(cfg.lex.tokenizer()(text))
        return terms if cfg.max_df >= 1.0 else drop_common_terms(terms, self.stats(cfg.lex), cfg.max_df)

    def vector(self, pool: int) -> list[dict[str, float]]:
        """Top-``pool`` cosine dicts per question (the store's exact vector search)."""
        if pool not in self._vector:
            out = []
            for row in self.cos:
                top = np.argsort(-row, kind="stable")[:pool]
                out.append({self.ids[j]: float(row[j]) for j in top})
            self._vector[pool] = out
        return self._vector[pool]

    def rank(self, qi: int, cfg: RankConfig, depth: int = max(KS)) -> list[str]:
        """Ids of the top ``depth`` memories for question ``qi`` under ``cfg``."""
        if cfg.retriever == "vector":
            ranked = sorted(self.vector(cfg.pool)[qi].items(), key=lambda kv: (-kv[1], kv[0]))
        else:
            lex_pool = self.lexical_pool(cfg)[qi]
            if cfg.prf_docs and cfg.prf_weight:
                index = self.index(cfg.lex, cfg.k1, cfg.b)
                first = lex_pool
                if cfg.retriever == "hybrid":
                    first = dict(fuse(self.vector(cfg.pool)[qi], first, cfg.fusion))
                terms = self.query_terms(cfg, self.corpus.queries[qi].text)
                weights = expand_with_feedback(terms, self.stats(cfg.lex), _top(first, cfg.prf_docs),
                                               n_terms=cfg.prf_terms, weight=cfg.prf_weight)
                lex_pool = _top(index.score_terms(weights), cfg.pool)
            if cfg.retriever == "hybrid":
                ranking = cfg.chat_ranking()
                ranked = rank_candidates(fused(self.vector(cfg.pool)[qi], lex_pool, cfg.fusion),
                                         query=self.corpus.queries[qi].text, dates=self.dates, ranking=ranking,
                                         now=self.reference if cfg.relative_query else None,
                                         events=self.events if cfg.event_spans else None)
                if cfg.hop.vector or cfg.hop.lexical:
                    ranked = self.second_hop(qi, cfg, ranked)
                ranked = weigh_questions(ranked, self.weighed_questions(qi, cfg), ranking.question_weight)
            else:
                ranked = sorted(lex_pool.items(), key=lambda kv: (-kv[1], kv[0]))
        if cfg.time_boost and cfg.retriever != "hybrid":
            ranked = boost_by_time(ranked, self.dates, self._spans[qi], boost=cfg.time_boost,
                                   events=self.events if cfg.event_spans else None)
        if cfg.retriever != "hybrid":
            ranked = weigh_questions(ranked, self.weighed_questions(qi, cfg), cfg.question_weight)
        ids = [doc for doc, _ in ranked]
        if cfg.session_cap:
            ids = _cap_per_session(ids, self.sessions, cfg.session_cap)
        return ids[:depth]

    def neighbours(self, seed: str, limit: int) -> dict[str, float]:
        """The ``limit`` memories nearest to memory ``seed``'s vector (the store's exact scan)."""
        if self._doc_cos is None:
            unit = _unit(self._doc_vecs)
            self._doc_cos = (unit @ unit.T).astype(np.float64)
        row = self._doc_cos[self._position[seed]]
        top = np.argsort(-row, kind="stable")[:limit]
        return {self.ids[j]: float(row[j]) for j in top}

    def second_hop(self, qi: int, cfg: RankConfig, ranked: list[tuple[str, float]]) -> list[tuple[str, float]]:
        """The lab's second hop over this corpus (see :mod:`bench.lab.hop`)."""
        hop = cfg.hop
        seeds = hop.seeds_of(ranked)
        vector_hop: dict[str, float] = {}
        lexical_hop: dict[str, float] = {}
        if hop.vector:
            per_seed = {s: self.neighbours(s, hop.neighbours + len(seeds)) for s in seeds}
            vector_hop = merge_neighbours(per_seed, hop.neighbours)
        if hop.lexical:
            terms = self.query_terms(cfg, self.corpus.queries[qi].text)
            hop_query = hop_terms(terms, self.stats(cfg.lex), seeds, n_terms=hop.terms)
            if hop_query:
                index = self.index(cfg.lex, cfg.k1, cfg.b)
                lexical_hop = _top(index.score_terms(hop_query), hop.neighbours + len(seeds))
        return add_second_hop(ranked, vector_hop, lexical_hop, hop)

    def recall(self, query: Query, ranked: Sequence[str], k: int) -> float:
        return recall_at(query, ranked, k, self.corpus.gold_kind, self._by_id)


def _cap_per_session(ids: list[str], sessions: dict[str, str], cap: int) -> list[str]:
    """At most ``cap`` ids per session first, the rest after (order kept within each part)."""
    seen: Counter[str] = Counter()
    head, tail = [], []
    for doc in ids:
        seen[sessions[doc]] += 1
        (head if seen[sessions[doc]] <= cap else tail).append(doc)
    return head + tail


def _unit(m: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms > 0, norms, 1.0)


def _top(scores: dict[str, float], k: int) -> dict[str, float]:
    return dict(sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k])


def recall_at(query: Query, ranked: Sequence[str], k: int, gold_kind: str,
              texts: dict[str, str] | None = None) -> float:
    """Recall@k of one question.

    Args:
        query: The question and its gold.
        ranked: Retrieved memory ids, best first.
        k: Cut-off.
        gold_kind: ``"evidence"``: share of the gold ids in the top k. ``"answer"``: 1.0 when
            any gold answer (normalised) occurs in the normalised text of a top-k memory.
        texts: ``{id: normalised text}`` (needed for ``"answer"``).
    """
    top = list(ranked[:k])
    if gold_kind == "evidence":
        gold = set(query.gold)
        return len(gold & set(top)) / len(gold) if gold else 0.0
    if texts is None:
        raise ValueError("answer recall needs the memory texts")
    answers = [normalize_answer_text(a) for a in query.gold if a.strip()]
    return 1.0 if any(a in texts[d] for d in top for a in answers) else 0.0


def evaluate(run: CorpusRun, cfg: RankConfig, ks: Sequence[int] = KS) -> FloatArray:
    """Recall at each of ``ks`` for every question of ``run``: shape ``(n_q, len(ks))``."""
    rows = []
    for qi, query in enumerate(run.corpus.queries):
        ranked = run.rank(qi, cfg, depth=max(ks))
        rows.append([run.recall(query, ranked, k) for k in ks])
    return np.array(rows, dtype=np.float64).reshape(-1, len(ks))


def attach_embeddings(corpora: Sequence[Corpus], cache: EmbeddingCache,
                      embed_docs: Callable[[list[str]], Sequence[Sequence[float]]],
                      embed_queries: Callable[[list[str]], Sequence[Sequence[float]]],
                      scale: LanguageScale | None = None) -> list[CorpusRun]:
    """Build a :class:`CorpusRun` per corpus, embedding (or loading) memories and questions;
    ``scale`` calibrates their cosines as the library does (question echoes)."""
    runs = []
    for corpus in corpora:
        docs = cache.embed([d.text for d in corpus.docs], embed_docs, side="passage")
        queries = cache.embed([q.text for q in corpus.queries], embed_queries, side="query")
        run = CorpusRun(corpus, docs, queries)
        run.scale = scale
        runs.append(run)
    return runs


# --- cross-validation -------------------------------------------------------------------


def loco_folds(ids: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Leave-one-out folds: ``(held_out, training ids)`` per id."""
    return [(held, [i for i in ids if i != held]) for held in ids]


Table = dict[RankConfig, dict[str, FloatArray]]


def select_config(table: Table, train_ids: Iterable[str], space: Sequence[RankConfig]) -> RankConfig:
    """The configuration of ``space`` with the best mean recall@10 over the training questions.

    Questions of all training corpora are pooled (micro average); ties go to the better
    recall@5, then to the earlier configuration of ``space``. Only the ``train_ids``
    columns of ``table`` are read.
    """
    train = list(train_ids)
    best, best_key = space[0], (-1.0, -1.0)
    for cfg in space:
        rows = np.concatenate([table[cfg][cid] for cid in train])
        key = (round(float(rows[:, 1].mean()), 12), round(float(rows[:, 0].mean()), 12))
        if key > best_key:
            best, best_key = cfg, key
    return best


@dataclass
class FoldResult:
    """One fold: the configuration chosen without the held-out corpus, and its scores there."""

    held_out: str
    chosen: RankConfig
    scores: FloatArray
    categories: list[str] = field(default_factory=list)


def build_table(runs: Sequence[CorpusRun], space: Sequence[RankConfig],
                progress: Callable[[int, int], None] | None = None) -> Table:
    """Evaluate every configuration of ``space`` on every corpus once."""
    table: Table = {}
    for n, cfg in enumerate(dict.fromkeys(space), 1):
        table[cfg] = {run.corpus.id: evaluate(run, cfg) for run in runs}
        if progress is not None:
            progress(n, len(space))
    return table


def loco_cv(runs: Sequence[CorpusRun], space: Sequence[RankConfig], table: Table | None = None) -> list[FoldResult]:
    """Leave-one-corpus-out CV: choose on the others, score the held-out corpus."""
    table = table if table is not None else build_table(runs, space)
    by_id = {run.corpus.id: run for run in runs}
    results = []
    for held, train in loco_folds(list(by_id)):
        chosen = select_config(table, train, space)
        results.append(FoldResult(held, chosen, table[chosen][held],
                                  [q.category for q in by_id[held].corpus.queries]))
    return results


def pooled(results: Sequence[FoldResult]) -> FloatArray:
    """Held-out recall over all questions of all folds (micro average), per k."""
    return np.concatenate([r.scores for r in results]).mean(axis=0)


def fold_mean(results: Sequence[FoldResult]) -> FloatArray:
    """Mean over folds of each fold's held-out recall (macro average), per k."""
    return np.mean([r.scores.mean(axis=0) for r in results], axis=0)


def by_category(results: Sequence[FoldResult]) -> dict[str, FloatArray]:
    """Held-out recall per question category (pooled over folds)."""
    rows: dict[str, list[FloatArray]] = defaultdict(list)
    for r in results:
        for cat, row in zip(r.categories, r.scores, strict=True):
            rows[cat].append(row)
    return {cat: np.mean(v, axis=0) for cat, v in rows.items()}


def in_sample(table: Table, runs: Sequence[CorpusRun], space: Sequence[RankConfig]) -> tuple[RankConfig, FloatArray]:
    """Tuned on all corpora and scored on the same ones (optimistic, for comparison only)."""
    ids = [run.corpus.id for run in runs]
    chosen = select_config(table, ids, space)
    return chosen, np.concatenate([table[chosen][i] for i in ids]).mean(axis=0)


def mean_std(values: Iterable[float]) -> str:
    vals = list(values)
    return f"{statistics.fmean(vals):.3f} ± {statistics.pstdev(vals):.3f}"


def with_(cfg: RankConfig, **changes: object) -> RankConfig:
    """``dataclasses.replace`` that also accepts ``lex_*`` keys for the :class:`LexSpec`."""
    lex = {k.removeprefix("lex_"): v for k, v in changes.items() if k.startswith("lex_")}
    rest = {k: v for k, v in changes.items() if not k.startswith("lex_")}
    if lex:
        rest["lex"] = replace(cfg.lex, **lex)
    return replace(cfg, **rest)  # type: ignore[arg-type]


def dated(corpus: Corpus) -> dict[str, datetime | None]:
    return {d.id: d.date for d in corpus.docs}
