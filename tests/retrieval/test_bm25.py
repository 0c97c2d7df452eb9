"""Tokenizer, BM25 index, lexical cache and score fusion."""

from __future__ import annotations

import math
import threading
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hy_memory_langgraph.retrieval.bm25 import (
    BM25Index,
    LexicalCache,
    tokenize,
)

# --- tokenize -------------------------------------------------------------------------------


def test_english_stopwords_and_stemming() -> None:
    assert tokenize("The kids are running; she painted stories and makes cakes") == [
        "kid", "run", "paint", "story", "mak", "cak",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("a", "b"),
    [("dogs", "dog"), ("making", "make"), ("studied", "studies"), ("stopped", "stop"),
     ("boxes", "box"), ("classes", "class"), ("timeouts", "timeout")],
)  # fmt: skip
def test_stemming_conflates_inflections(a: str, b: str) -> None:
    assert tokenize(a) == tokenize(b)


def test_short_and_non_ascii_words_are_not_stemmed() -> None:
    assert tokenize("bus need red cafés") == ["bus", "need", "red", "cafés"]


def test_compound_kept_whole_and_split() -> None:
    assert tokenize("auth.py") == ["auth.py", "auth", "py"]
    assert tokenize("user_id") == ["user_id", "user", "id"]
    assert tokenize("dir\\sub\\x.py")[:2] == ["dir\\sub\\x.py", "x.py"]
    assert tokenize("see src/app/auth.py.") == [
        "see", "src/app/auth.py", "auth.py", "src", "app", "auth", "py",
    ]  # fmt: skip


def test_apostrophes_split_and_contractions_dropped() -> None:
    assert tokenize("I don't think Caroline's dog isn’t here") == ["think", "carolin", "dog"]


def test_nfkc_and_lowercase() -> None:
    assert tokenize("ＡＢＣ１２３ Hello") == ["abc123", "hello"]


def test_flags_disable_stemming_and_stopwords() -> None:
    assert tokenize("the dogs", stem=False, stopwords=False) == ["the", "dogs"]
    assert tokenize("the dogs", stem=False) == ["dogs"]
    assert tokenize("the dogs", stopwords=False) == ["the", "dog"]


def test_empty_and_punctuation_only() -> None:
    assert tokenize("") == []
    assert tokenize(" ,.;!? \n") == []


def test_chinese_segmentation_stopwords_and_bigram_fallback() -> None:
    tokens = tokenize("我们修复了登录超时的问题")
    assert {"修复", "登录", "超时", "问题"} <= set(tokens)
    assert not {"我们", "了", "的"} & set(tokens)
    assert "录超" in tokens  # bigram not produced by jieba
    assert not any("的" in t or "了" in t for t in tokens)  # no bigram over a stop character
    assert tokens.count("登录") == 1  # a bigram jieba already produced is not repeated


def test_mixed_text() -> None:
    tokens = tokenize("修复 auth.py 的登录超时 bug")
    assert tokens[:4] == ["修复", "auth.py", "auth", "py"]
    assert {"登录", "超时", "bug"} <= set(tokens)


def test_other_cjk_scripts_get_bigrams() -> None:
    assert "カタ" in tokenize("カタカナ") and "한국" in tokenize("한국어")


def test_tokenize_is_thread_safe_and_deterministic() -> None:
    text = "中华人民共和国 deploy scripts 部署脚本失败"
    expected = tokenize(text)
    results: list[list[str]] = []
    threads = [threading.Thread(target=lambda: results.append(tokenize(text))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 8


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_tokenize_never_raises_and_yields_nonempty_tokens(text: str) -> None:
    assert all(tok and not tok.isspace() for tok in tokenize(text))


# --- BM25Index ------------------------------------------------------------------------------


def _reference_bm25(
    docs: dict[str, list[str]], query: list[str], k1: float = 0.9, b: float = 0.4
) -> dict[str, float]:
    n = len(docs)
    avg = sum(map(len, docs.values())) / n
    out: dict[str, float] = {}
    for doc_id, toks in docs.items():
        tf = Counter(toks)
        s = 0.0
        for term in query:
            if term not in tf:
                continue
            df = sum(1 for d in docs.values() if term in d)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            s += idf * tf[term] * (k1 + 1) / (tf[term] + k1 * (1 - b + b * len(toks) / avg))
        if s > 0:
            out[doc_id] = s
    return out


def _ws(text: str) -> list[str]:
    return text.split()


def test_bm25_matches_reference_formula() -> None:
    docs = {"a": "x y y z", "b": "x w", "c": "w w w q", "d": "q"}
    index = BM25Index(tokenizer=_ws)
    for doc_id, text in docs.items():
        index.add(doc_id, text)
    expected = _reference_bm25({d: t.split() for d, t in docs.items()}, ["y", "w", "x"])
    got = index.score("y w x")
    assert got.keys() == expected.keys() == {"a", "b", "c"}
    for doc_id in expected:
        assert got[doc_id] == pytest.approx(expected[doc_id])


def test_bm25_top_ranks_relevant_doc_first_and_respects_k() -> None:
    index = BM25Index()
    index.add("login", "Fixed the login timeout in auth.py by raising the session TTL")
    index.add("deploy", "Deploy script failed because the registry token expired")
    index.add("lunch", "We talked about lunch plans on Friday")
    assert index.top("auth.py timeout", 5)[0][0] == "login"
    assert [d for d, _ in index.top("deploy registry", 1)] == ["deploy"]
    assert index.top("deploy", 0) == []
    assert index.top("nothing matches zzz", 5) == []


def test_bm25_chinese_and_mixed_queries() -> None:
    index = BM25Index()
    index.add("zh", "修复了 auth.py 中的登录超时问题")
    index.add("zh2", "部署脚本因为令牌过期而失败")
    index.add("en", "login page colours")
    assert index.top("登录超时", 3)[0][0] == "zh"
    assert index.top("部署失败", 3)[0][0] == "zh2"
    assert index.top("auth.py 登录", 3)[0][0] == "zh"


def test_bm25_allowed_filters_before_top_k() -> None:
    index = BM25Index(tokenizer=_ws)
    for i in range(50):
        index.add(f"d{i:02d}", "alpha " * (1 + i % 3))
    index.add("small", "alpha beta")
    expected = index.score("alpha")["small"]
    assert index.top("alpha", 1, allowed=["small"]) == [("small", pytest.approx(expected))]
    assert index.top("alpha", 5, allowed=set()) == []
    assert set(index.score("alpha", allowed={"d00", "small"})) == {"d00", "small"}


def test_bm25_ties_break_by_id() -> None:
    index = BM25Index(tokenizer=_ws)
    for doc_id in ("c", "a", "b"):
        index.add(doc_id, "same text")
    assert [d for d, _ in index.top("same", 3)] == ["a", "b", "c"]


def test_bm25_replace_remove_len_contains() -> None:
    index = BM25Index(tokenizer=_ws)
    index.add("a", "red apple")
    index.add("b", "green apple")
    assert len(index) == 2 and "a" in index and "z" not in index
    index.add("a", "yellow banana")  # replaces
    assert len(index) == 2
    assert set(index.score("apple")) == {"b"}
    index.remove("b")
    index.remove("missing")  # ignored
    assert len(index) == 1 and "b" not in index
    assert index.score("apple") == {}
    index.remove("a")
    assert len(index) == 0 and index.score("banana") == {}


_ops = st.lists(
    st.tuples(
        st.sampled_from(["add", "remove"]),
        st.sampled_from(["d1", "d2", "d3", "d4"]),
        st.lists(st.sampled_from(["x", "y", "z", "w"]), max_size=6),
    ),
    max_size=25,
)


@settings(max_examples=100, deadline=None)
@given(_ops, st.lists(st.sampled_from(["x", "y", "z", "w", "v"]), min_size=1, max_size=4))
def test_incremental_index_equals_rebuilt_index(ops, query) -> None:
    index = BM25Index(tokenizer=_ws)
    live: dict[str, str] = {}
    for op, doc_id, words in ops:
        if op == "add":
            index.add(doc_id, " ".join(words))
            live[doc_id] = " ".join(words)
        else:
            index.remove(doc_id)
            live.pop(doc_id, None)
    rebuilt = BM25Index(tokenizer=_ws)
    for doc_id, text in live.items():
        rebuilt.add(doc_id, text)
    got, want = index.score(" ".join(query)), rebuilt.score(" ".join(query))
    assert got.keys() == want.keys()
    assert all(got[d] == pytest.approx(want[d]) for d in want)
    assert all(s > 0 for s in got.values())


def test_bm25_concurrent_adds_and_queries() -> None:
    index = BM25Index(tokenizer=_ws)

    def writer(base: int) -> None:
        for i in range(200):
            index.add(f"{base}-{i}", f"term{i % 7} shared")
            index.score("shared term3")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(index) == 800
    assert len(index.score("shared")) == 800


# --- LexicalCache ---------------------------------------------------------------------------


class _CountingTokenizer:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, text: str) -> list[str]:
        self.calls.append(text)
        return text.split()


def test_cache_sync_retokenizes_only_changed_docs() -> None:
    tok = _CountingTokenizer()
    cache = LexicalCache(tokenizer=tok)
    docs = [("a", 1, "alpha"), ("b", 1, "beta"), ("c", None, "gamma")]
    index = cache.sync("k", docs)
    assert len(index) == 3 and len(tok.calls) == 3
    tok.calls.clear()
    assert cache.sync("k", docs) is index
    assert tok.calls == []
    cache.sync("k", [("a", 2, "alpha two"), ("c", None, "gamma")])  # a changed, b gone
    assert tok.calls == ["alpha two"]
    assert "b" not in index and len(index) == 2
    assert set(index.score("two")) == {"a"}


def test_cache_keys_are_independent_and_lru_bounded() -> None:
    cache = LexicalCache(max_keys=2, tokenizer=_ws)
    cache.sync(("u1",), [("x", 1, "one")])
    cache.sync(("u2",), [("y", 1, "two")])
    cache.sync(("u1",), [("x", 1, "one")])  # refresh u1
    cache.sync(("u3",), [("z", 1, "three")])  # evicts u2
    assert ("u1",) in cache and ("u3",) in cache and ("u2",) not in cache
    assert len(cache) == 2
    assert set(cache.sync(("u1",), [("x", 1, "one")]).score("one")) == {"x"}
    with pytest.raises(ValueError):
        LexicalCache(max_keys=0)


# --- fusion ---------------------------------------------------------------------------------
