"""CJK-aware lexical search: tokenizer, incremental Okapi BM25, per-scope cache.

Used by search: facts are ranked by vector similarity with a small lexical
tie-break, and chat search fuses lexical with vector scores (:mod:`.ranking`).

Tokenizer decisions (:func:`tokenize`):

* Text is NFKC-normalised (full-width letters, digits and punctuation become ASCII) and
  lower-cased.
* Latin/digit text: maximal runs of letters/digits. Runs joined by ``. _ - / \\ :`` form a
  *compound* (``auth.py``, ``user_id``, ``src/auth.py``, ``2023-05-08``). A compound is
  emitted whole (not stemmed, not stop-worded) **and** as its parts, so ``auth.py`` matches
  both the query ``auth.py`` (exactly, high idf) and the query ``auth``. A path also emits each
  of its ``/`` segments that is itself a compound (``src/auth.py`` also gives ``auth.py``).
  Apostrophes split (``don't`` -> ``don`` ``t``, both stop-words).
* English stop-words (a compact list of ~170 function words) are removed from parts.
* Light stemming of pure ASCII words longer than 3 letters: plurals (``-s -es -ies``),
  ``-ing``, ``-ed``/``-ied``, then a final ``-e`` (so ``make``/``making``/``makes`` agree).
  Deterministic and tiny; it is applied alike to documents and queries.
* CJK runs (Han, kana, Hangul) are segmented with jieba in search mode (finer overlapping
  words), then every character bigram of the run that jieba did not already produce is added
  as a fallback token (covers segmentation differences between document and query). Chinese
  stop-words are dropped, and so are bigrams containing a single-character stop-word.

Example:
    >>> tokenize("Fixed the login timeouts in auth.py")
    ['fix', 'login', 'timeout', 'auth.py', 'auth', 'py']
"""

from __future__ import annotations

import functools
import heapq
import logging
import math
import re
import threading
import unicodedata
import warnings
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from types import ModuleType

Tokenizer = Callable[[str], list[str]]

_EN_STOP = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each else ever few
    for from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just let me more most much must my myself no nor not now of off oh ok
    okay on once only or other our ours ourselves out over own really same she should so some
    such than that the their theirs them themselves then there these they this those through to
    too under until up upon us very was we were what when where which while who whom why will
    with would yeah yes yet you your yours yourself yourselves s t d m ll re ve don didn doesn
    isn wasn weren aren hasn haven hadn wouldn couldn shouldn im ive youre thats
    get got go going gonna wanna like just thing things lot lots
    """.split()
)
_ZH_STOP = frozenset(
    """
    的 了 是 在 我 你 他 她 它 们 这 那 和 与 及 或 也 都 就 而 着 吗 呢 吧 啊 呀 哦 嗯 把 被 给 对
    从 之 其 很 又 还 个 让 得 地 过 我们 你们 他们 她们 它们 这个 那个 这些 那些 一个 什么 怎么
    如何 为什么 没有 就是 可以 还是 但是 因为 所以 如果 已经 自己 这样 那样 一下 一些
    """.split()
)
_ZH_STOP_CHARS = frozenset(w for w in _ZH_STOP if len(w) == 1)

_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
_WORD = re.compile(r"[^\W_]+(?:[._\-/\\:][^\W_]+)*")
_PART = re.compile(r"[^\W_]+")
_VOWEL = re.compile(r"[aeiouy]")

_jieba_lock = threading.Lock()
_jieba_mod: ModuleType | None = None


def _jieba() -> ModuleType:
    """Import and initialise jieba once, quietly (thread-safe, lazy)."""
    global _jieba_mod
    if _jieba_mod is None:
        with _jieba_lock:
            if _jieba_mod is None:
                with warnings.catch_warnings():
                    # jieba imports pkg_resources on some setuptools versions.
                    warnings.filterwarnings("ignore", message=".*pkg_resources.*")
                    warnings.filterwarnings("ignore", category=DeprecationWarning, module="jieba")
                    import jieba
                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba_mod = jieba
    return _jieba_mod


def _undouble(word: str) -> str:
    if len(word) >= 3 and word[-1] == word[-2] and word[-1] not in "aeiouylsz":
        return word[:-1]
    return word


def _stem(word: str) -> str:
    """Strip plural, -ing, -ed and final -e suffixes from a plain ASCII word."""
    if len(word) <= 3 or not (word.isascii() and word.isalpha()):
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses") or (word.endswith(("ches", "shes", "xes", "zes")) and len(word) > 4):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ied") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ing") and len(word) >= 6 and _VOWEL.search(word[:-3]):
        word = _undouble(word[:-3])
    elif word.endswith("ed") and len(word) >= 5 and _VOWEL.search(word[:-2]):
        word = _undouble(word[:-2])
    if len(word) > 3 and word.endswith("e") and not word.endswith("ee"):
        word = word[:-1]
    return word


#: Stems of recently seen words are kept (a conversation repeats its words: a third of
#: tokenising): this many, of at most :data:`_CACHED_WORD` characters each.
_STEM_CACHE = 1 << 15
_CACHED_WORD = 40


def _remembered(stem: Callable[[str], str]) -> Callable[[str], str]:
    """``stem`` with the stems of short words cached (long ones are rare and unbounded)."""
    cached = functools.lru_cache(maxsize=_STEM_CACHE)(stem)
    return lambda word: cached(word) if len(word) <= _CACHED_WORD else stem(word)


_LIGHT_STEM = _remembered(_stem)


def _latin_tokens(segment: str, out: list[str], stem: Callable[[str], str] | None, stop: bool) -> None:
    for match in _WORD.finditer(segment):
        word = match.group()
        parts = _PART.findall(word)
        if len(parts) > 1:
            out.append(word)
            if "/" in word or "\\" in word:
                out.extend(
                    s for s in re.split(r"[/\\]", word) if _WORD.fullmatch(s) and not _PART.fullmatch(s)
                )
        for part in parts:
            if stop and part in _EN_STOP:
                continue
            out.append(stem(part) if stem is not None else part)


def _cjk_tokens(run: str, out: list[str], stop: bool) -> None:
    words = [w for w in _jieba().lcut_for_search(run) if w.strip()]
    produced = set(words)
    out.extend(w for w in words if not (stop and w in _ZH_STOP))
    for i in range(len(run) - 1):
        bigram = run[i : i + 2]
        if bigram in produced:
            continue
        if stop and (bigram[0] in _ZH_STOP_CHARS or bigram[1] in _ZH_STOP_CHARS):
            continue
        out.append(bigram)


def tokenize(text: str, *, stem: bool = True, stopwords: bool = True) -> list[str]:
    """Split text into lexical tokens (see the module docstring for the rules).

    Args:
        text: Any text; English, Chinese (or other CJK) and mixed text, code identifiers.
        stem: Stem English words.
        stopwords: Drop English and Chinese stop-words.

    Returns:
        Tokens in text order, repeats kept (they are term frequencies).
    """
    if not text:
        return []
    stem_fn = _LIGHT_STEM if stem else None
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")
    out: list[str] = []
    pos = 0
    for match in _CJK_RUN.finditer(text):
        _latin_tokens(text[pos : match.start()], out, stem_fn, stopwords)
        _cjk_tokens(match.group(), out, stopwords)
        pos = match.end()
    _latin_tokens(text[pos:], out, stem_fn, stopwords)
    return out


# Tuned on LoCoMo (bench/locomo_recall.py): short conversational documents favour a
# flatter term-frequency curve and weaker length normalisation than the textbook 1.2/0.75.
DEFAULT_K1 = 0.9
DEFAULT_B = 0.4


class BM25Index:
    """Incremental Okapi BM25 over an inverted index; thread-safe.

    ``idf = log(1 + (N - df + 0.5) / (df + 0.5))``; a query term counts once per occurrence
    in the query. Scoring only touches the postings of the query terms.

    Example:
        >>> index = BM25Index()
        >>> index.add("a", "fixed the login timeout in auth.py")
        >>> index.add("b", "dinner plans for Friday")
        >>> [doc for doc, _ in index.top("auth.py timeout", 5)]
        ['a']
    """

    def __init__(
        self, *, k1: float = DEFAULT_K1, b: float = DEFAULT_B, tokenizer: Tokenizer | None = None
    ) -> None:
        self.k1 = k1
        self.b = b
        self._tokenize: Tokenizer = tokenizer or tokenize
        self._lock = threading.RLock()
        self._doc_tf: dict[str, Counter[str]] = {}
        self._doc_len: dict[str, int] = {}
        self._postings: dict[str, dict[str, int]] = {}
        self._total_len = 0

    def __len__(self) -> int:
        return len(self._doc_len)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._doc_len

    def add(self, doc_id: str, text: str) -> None:
        """Index ``text`` under ``doc_id``, replacing any previous text of that id."""
        self.add_tokens(doc_id, self._tokenize(text or ""))

    def add_tokens(self, doc_id: str, tokens: Iterable[str]) -> None:
        """Index pre-tokenized text under ``doc_id`` (replaces any previous version)."""
        tf = Counter(tokens)
        with self._lock:
            self._remove(doc_id)
            self._doc_tf[doc_id] = tf
            length = sum(tf.values())
            self._doc_len[doc_id] = length
            self._total_len += length
            for term, count in tf.items():
                self._postings.setdefault(term, {})[doc_id] = count

    def remove(self, doc_id: str) -> None:
        """Forget ``doc_id``; unknown ids are ignored."""
        with self._lock:
            self._remove(doc_id)

    def _remove(self, doc_id: str) -> None:
        tf = self._doc_tf.pop(doc_id, None)
        if tf is None:
            return
        self._total_len -= self._doc_len.pop(doc_id)
        for term in tf:
            posting = self._postings[term]
            del posting[doc_id]
            if not posting:
                del self._postings[term]

    def score(
        self, query: str, *, allowed: Collection[str] | None = None,
        k1: float | None = None, b: float | None = None,
    ) -> dict[str, float]:
        """BM25 score of every document sharing a term with ``query`` (scores > 0 only).

        Args:
            query: Query text, tokenized like the documents.
            allowed: When given, only these document ids are scored.
            k1: Overrides the index's ``k1`` for this call.
            b: Overrides the index's ``b`` for this call.
        """
        return self.score_terms(Counter(self._tokenize(query or "")), allowed=allowed, k1=k1, b=b)

    def score_terms(
        self, weights: Mapping[str, float], *, allowed: Collection[str] | None = None,
        k1: float | None = None, b: float | None = None,
    ) -> dict[str, float]:
        """BM25 score for weighted query terms: ``sum(weight * idf * tf part)``.

        ``score(q)`` is ``score_terms(Counter(tokenize(q)))``; weights let a caller drop,
        down-weight or add terms without re-tokenizing.

        Args:
            weights: ``{term: weight}``; terms with weight <= 0 are skipped.
            allowed: When given, only these document ids are scored.
            k1: Overrides the index's ``k1`` for this call.
            b: Overrides the index's ``b`` for this call.

        Returns:
            ``{doc_id: score}`` for documents with a positive score.
        """
        if allowed is not None and not isinstance(allowed, (set, frozenset, dict)):
            allowed = set(allowed)
        scores: dict[str, float] = {}
        with self._lock:
            n_docs = len(self._doc_len)
            if not n_docs or not weights:
                return scores
            avg_len = self._total_len / n_docs or 1.0
            k1 = self.k1 if k1 is None else k1
            b = self.b if b is None else b
            for term, weight in weights.items():
                posting = self._postings.get(term)
                if not posting or weight <= 0:
                    continue
                df = len(posting)
                idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)) * weight
                for doc_id, tf in posting.items():
                    if allowed is not None and doc_id not in allowed:
                        continue
                    norm = k1 * (1.0 - b + b * self._doc_len[doc_id] / avg_len)
                    scores[doc_id] = scores.get(doc_id, 0.0) + idf * tf * (k1 + 1.0) / (tf + norm)
        return {doc_id: s for doc_id, s in scores.items() if s > 0.0}

    def top(
        self, query: str, k: int, *, allowed: Collection[str] | None = None,
        k1: float | None = None, b: float | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` best ``(doc_id, score)`` pairs, best first (ties by id).

        ``allowed`` filters before ranking, so a small scope never loses recall; ``k1`` and
        ``b`` override the index's parameters for this call.
        """
        if k <= 0:
            return []
        scores = self.score(query, allowed=allowed, k1=k1, b=b)
        return heapq.nsmallest(k, scores.items(), key=lambda kv: (-kv[1], kv[0]))


class _Entry:
    __slots__ = ("index", "versions", "lock")

    def __init__(self, index: BM25Index) -> None:
        self.index = index
        self.versions: dict[str, Hashable] = {}
        self.lock = threading.Lock()


_MISSING = object()


class LexicalCache:
    """One :class:`BM25Index` per key (e.g. a namespace), kept in step with a document set.

    ``sync`` re-tokenizes only documents whose version changed and drops vanished ones, so
    calling it before every search is cheap. At most ``max_keys`` indexes are kept (LRU).

    Example:
        >>> cache = LexicalCache(max_keys=8)
        >>> docs = [("f1", 1, "deploy script fails"), ("f2", 1, "lunch")]
        >>> idx = cache.sync(("u1", "facts"), docs)
        >>> idx.top("deploy", 1)[0][0]
        'f1'
        >>> idx = cache.sync(("u1", "facts"), [("f2", 2, "deploy again")])
        >>> sorted(d for d, _ in idx.top("deploy", 5))
        ['f2']
    """

    def __init__(self, max_keys: int = 256, *, tokenizer: Tokenizer | None = None) -> None:
        if max_keys < 1:
            raise ValueError("max_keys must be >= 1")
        self.max_keys = max_keys
        self._tokenizer = tokenizer
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def sync(self, key: Hashable, docs: Iterable[tuple[str, Hashable, str]]) -> BM25Index:
        """Bring the index of ``key`` in line with ``docs`` and return it.

        Args:
            key: Any hashable scope key.
            docs: The complete current set as ``(doc_id, version, text)``; ``version`` is any
                hashable change marker (e.g. ``updated_at``).
        """
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _Entry(BM25Index(tokenizer=self._tokenizer))
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_keys:
                self._entries.popitem(last=False)
        with entry.lock:
            seen: set[str] = set()
            for doc_id, version, text in docs:
                seen.add(doc_id)
                if entry.versions.get(doc_id, _MISSING) != version or doc_id not in entry.versions:
                    entry.index.add(doc_id, text)
                    entry.versions[doc_id] = version
            for gone in entry.versions.keys() - seen:
                entry.index.remove(gone)
                del entry.versions[gone]
        return entry.index
