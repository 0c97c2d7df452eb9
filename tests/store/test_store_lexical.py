"""The persistent lexical index of HyMemoryStore (SQLite and PostgreSQL).

BM25 in SQL gives the in-process :class:`BM25Index` ranking on the same texts (English
and Chinese, grouped documents with their neighbours' tails); documents follow their
items (re-put, delete, expiry); neighbours are re-derived when a group changes and
deleted text leaves every posting; statistics rows of erased namespaces go; time ranges
filter before the top-k, for keyword and key-only vector search alike. Documents written
one batch at a time end with exactly the postings of the same documents written at once,
whatever happens to them meanwhile.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa
from langgraph.store.base import PutOp
from store_helpers import index_config

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.retrieval.bm25 import BM25Index, tokenize
from hy_memory_langgraph.retrieval.neighbours import Utterance, texts_with_neighbours
from hy_memory_langgraph.store import HyMemoryStore, LexicalOp
from hy_memory_langgraph.store.db import engine as engine_module
from hy_memory_langgraph.store.schema.tables import (
    lexical_docs,
    lexical_postings,
    lexical_spaces,
)

NS = ("chat", "u1")
WINDOW = (2, 1)
K1, B = 0.6, 0.6
EN = ("tea cat berlin marathon sister guitar painting beach dog camping job school garden piano "
      "coffee morning trip mountain river book movie dinner friend weekend").split()
ZH = "喜欢 喝茶 周末 爬山 妹妹 吉他 画画 海边 小狗 露营 工作 学校 花园 钢琴 咖啡 早上 旅行 电影".split()


@pytest.fixture(params=["sqlite", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], HyMemoryStore]]:
    """``make_store()`` opens HyMemoryStores on one database of the test's backend."""
    opened: list[HyMemoryStore] = []
    schemas = request.getfixturevalue("pg_schemas") if request.param == "postgres" else None
    prefix = schemas.prefix() if schemas is not None else ""

    def make() -> HyMemoryStore:
        if schemas is not None:
            store = HyMemoryStore.from_url(schemas.url, name=prefix + "lex", index=index_config(["text"]))
        else:
            store = HyMemoryStore(tmp_path / "lex.db", index=index_config(["text"]))
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@dataclass(frozen=True)
class Doc:
    key: str
    text: str
    group: str | None = None
    order: tuple[str, float] = ("", 0.0)
    ts: float = 0.0


def _counts(text: str) -> dict[str, int]:
    return dict(Counter(tokenize(text)))


def _op(doc: Doc, window: tuple[int, int] = WINDOW, *, ns: tuple[str, ...] = NS) -> LexicalOp:
    tail = _counts(doc.text[-1000:]) if doc.group and len(doc.text) > 1000 else None
    return LexicalOp(ns, doc.key, _counts(doc.text), tail, ts=doc.ts, group=doc.group, order=doc.order,
                     window=window)


def _write(store: HyMemoryStore, docs: list[Doc], window: tuple[int, int] = WINDOW) -> None:
    ops: list[object] = []
    for doc in docs:
        ops += [PutOp(NS, doc.key, {"text": doc.text}), _op(doc, window)]
    store.batch(ops)  # type: ignore[arg-type]


def _reference(docs: list[Doc], query: str, k: int, window: tuple[int, int] = WINDOW,
               allowed: set[str] | None = None) -> list[tuple[str, float]]:
    """What the in-process index answers over the same documents."""
    texts = texts_with_neighbours([Utterance(d.key, d.group, d.order, d.text) for d in docs],
                                  before=window[0], after=window[1])
    index = BM25Index()
    for doc in docs:
        index.add(doc.key, texts[doc.key])
    return index.top(query, k, allowed=allowed, k1=K1, b=B)


def _search(store: HyMemoryStore, query: str, k: int, ts_range: tuple[float | None, float | None] | None = None
            ) -> list[tuple[str, float]]:
    return [(h.key, h.score) for h in store.lexical_search(NS, Counter(tokenize(query)), limit=k, k1=K1, b=B,
                                                          ts_range=ts_range)]


def _assert_same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    """Same documents, same scores (up to float addition order), same order."""
    assert [k for k, _ in got] == [k for k, _ in want]
    for (_, a), (_, b) in zip(got, want, strict=True):
        assert a == pytest.approx(b, rel=1e-9)


def _corpus(rng: random.Random, n: int, sessions: int) -> list[Doc]:
    docs = []
    for i in range(n):
        words = [rng.choice(EN + ZH) for _ in range(rng.randint(2, 12))]
        text = " ".join(words) if i % 3 else "".join(w for w in words)  # some all-CJK runs
        if i % 17 == 0:
            text = " ".join(rng.choice(EN) for _ in range(400))  # long: neighbours get its tail
        group = f"s{i % sessions}" if i % 5 else None
        docs.append(Doc(f"m{i:03d}", text, group, ("2024-01-01T00:00:00+00:00", float(rng.randint(0, 50))),
                        ts=float(i)))
    return docs


QUERIES = ["tea with my sister", "周末去爬山", "camping trip in the mountain", "喜欢喝茶的妹妹",
           "guitar piano school", "berlin", "咖啡 coffee morning"]


def test_bm25_in_sql_ranks_like_the_in_process_index(make_store: Callable[[], HyMemoryStore]) -> None:
    store = make_store()
    docs = _corpus(random.Random(7), 120, sessions=6)
    _write(store, docs[:70])
    _write(store, docs[70:])  # a second batch joins existing groups
    for query in QUERIES:
        _assert_same(_search(store, query, 30), _reference(docs, query, 30))
    status = store.lexical_status(NS)
    assert (status.docs, status.window) == (120, WINDOW)


def test_neighbours_follow_arrivals_changes_and_deletes(make_store: Callable[[], HyMemoryStore]) -> None:
    store = make_store()
    turns = [Doc(f"t{i}", text, "s1", ("2024-01-01T00:00:00+00:00", float(i)))
             for i, text in enumerate(["Did you go camping?", "Yes, last weekend!", "Where did you go?",
                                       "To the lake near Berlin.", "Sounds lovely."])]
    _write(store, turns[:1])
    assert _search(store, "weekend", 5) == []
    _write(store, turns[1:2])  # the next turn arrives: the first turn now carries it
    assert {k for k, _ in _search(store, "weekend", 5)} == {"t0", "t1"}
    _write(store, turns[2:])
    _assert_same(_search(store, "camping lake berlin", 10), _reference(turns, "camping lake berlin", 10))
    changed = Doc("t2", "Which campsite?", "s1", turns[2].order)
    _write(store, [changed])
    current = [turns[0], turns[1], changed, turns[3], turns[4]]
    for query in ("where", "campsite", "lovely lake"):
        _assert_same(_search(store, query, 10), _reference(current, query, 10))
    store.delete(NS, "t3")
    current.remove(turns[3])
    for query in ("berlin lake", "campsite lovely", "weekend"):
        _assert_same(_search(store, query, 10), _reference(current, query, 10))
    assert "berlin" not in _terms_stored(store)  # the deleted turn left every posting


def _terms_stored(store: HyMemoryStore) -> set[str]:
    with store._engine.connect() as conn:
        postings = set(conn.execute(sa.select(lexical_postings.c.term)).scalars())
        texts = " ".join(t or "" for row in conn.execute(sa.select(lexical_docs.c.terms, lexical_docs.c.tail))
                         for t in row)
    return postings | set(tokenize(texts))


def _spaces(store: HyMemoryStore) -> list[tuple[str, int]]:
    with store._engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.select(lexical_spaces.c.namespace, lexical_spaces.c.docs))]


def test_documents_live_and_die_with_their_items(make_store: Callable[[], HyMemoryStore]) -> None:
    store = make_store()
    _write(store, [Doc("a", "green tea"), Doc("b", "black coffee"), Doc("c", "green jasmine tea")])
    store.put(NS, "c", {"text": "retired"})  # re-put without a document: its document goes
    assert [k for k, _ in _search(store, "tea", 5)] == ["a"]
    assert store.lexical_status(NS).docs == 2
    store.batch([LexicalOp(NS, "missing", {"ghost": 1})])  # no such item: ignored
    assert _search(store, "ghost", 5) == []
    store.delete(NS, "a")
    assert "green" not in _terms_stored(store) and _spaces(store) == [("chat.u1", 1)]
    store.delete(NS, "b")
    store.delete(NS, "c")
    assert _spaces(store) == [] and _terms_stored(store) == set()  # nothing names the namespace


class _Undo(Exception):
    """Raised to roll a test's write transaction back."""


def test_written_rows_tell_what_they_had(make_store: Callable[[], HyMemoryStore]) -> None:
    """The upsert and the delete say, per row, whether that item has a lexical document
    (not whether any item has one), and the upsert which rows have no vectors to drop, so
    a write of new rows reads no documents and drops no vectors."""
    from hy_memory_langgraph.store.db.engine import write_tx  # noqa: PLC0415
    from hy_memory_langgraph.store.sql import statements  # noqa: PLC0415

    store = make_store()
    store.batch([PutOp(NS, "doc", {"n": 1}, index=False), LexicalOp(NS, "doc", {"tea": 1}),
                 PutOp(NS, "vec", {"text": "green tea"})])
    encoded, row = "chat.u1", {"value": "{}", "scope": None, "created_at": 1, "updated_at": 1,
                               "ttl_minutes": None, "expires_at": None}
    with pytest.raises(_Undo), write_tx(store._engine, scopes=[encoded]) as conn:
        written = statements.upsert_items(conn, [{**row, "namespace": encoded, "key": key}
                                                 for key in ("doc", "vec", "new")])
        ids = {key: written.ids[(encoded, key)] for key in ("doc", "vec", "new")}
        assert written.undocumented == {ids["vec"], ids["new"]}
        assert ids["new"] in written.vectorless and ids["vec"] not in written.vectorless
        if store._engine.dialect.name == "sqlite":  # PostgreSQL knows only new rows
            assert ids["doc"] in written.vectorless
        gone = statements.delete_items(conn, [(encoded, key) for key in ("doc", "vec", "new")])
        assert {r.key: r.documented for r in gone} == {"doc": True, "vec": False, "new": False}
        raise _Undo
    assert store.get(NS, "doc") is not None and store.get(NS, "new") is None
    assert store.search(NS, query="green tea")[0].key == "vec"
    assert [key for key, _ in _search(store, "tea", 5)] == ["doc"]


def test_expired_items_lose_their_documents(tmp_path: Path) -> None:
    with HyMemoryStore(tmp_path / "ttl.db", index=index_config(["text"])) as store:
        store.batch([PutOp(NS, "a", {"text": "short lived tea"}, ttl=0.0001), _op(Doc("a", "short lived tea")),
                     PutOp(NS, "b", {"text": "kept tea"}), _op(Doc("b", "kept tea"))])
        import time

        time.sleep(0.02)
        assert store.sweep_ttl() == 1
        assert [k for k, _ in _search(store, "tea", 5)] == ["b"] and "lived" not in _terms_stored(store)


def test_time_range_filters_before_the_top_k(make_store: Callable[[], HyMemoryStore]) -> None:
    store = make_store()
    docs = [Doc(f"m{i}", f"tea note {i}" + " tea" * (i % 4), ts=float(i)) for i in range(40)]
    _write(store, docs)
    inside = {d.key for d in docs if 10 <= d.ts <= 19}
    got = _search(store, "tea", 5, ts_range=(10, 19))
    _assert_same(got, _reference(docs, "tea", 5, allowed=inside))
    assert {k for k, _ in _search(store, "tea", 50, ts_range=(None, 3))} == {"m0", "m1", "m2", "m3"}
    vector = store.vector_search_keys(NS, docs[15].text, limit=5, ts_range=(10, 19))
    assert len(vector) == 5 and {h.key for h in vector} <= inside and vector[0].key == "m15"
    assert all(10 <= (h.ts or 0) <= 19 for h in vector)
    everything = store.vector_search_keys(NS, docs[15].text, limit=3)
    assert everything[0].key == "m15" and everything[0].score == pytest.approx(1.0, abs=1e-5)


def test_a_new_window_rebuilds_the_groups(make_store: Callable[[], HyMemoryStore]) -> None:
    store = make_store()
    turns = [Doc(f"t{i}", f"word{i} common", "s", ("x", float(i))) for i in range(6)]
    _write(store, turns, window=(0, 0))
    assert [k for k, _ in _search(store, "word3", 5)] == ["t3"]
    _write(store, turns[:1], window=(1, 1))
    assert store.lexical_status(NS).window == (1, 1)
    _assert_same(_search(store, "word3 common", 10), _reference(turns, "word3 common", 10, window=(1, 1)))


def test_bad_lexical_ops_are_refused_before_anything_is_written(make_store: Callable[[], HyMemoryStore]) -> None:
    store = make_store()
    bad_ops = [LexicalOp(NS, "a", {"tea": 0}), LexicalOp(NS, "a", {"": 1}),
               LexicalOp(NS, "a", {"t": 1}, window=(-1, 0)), LexicalOp(NS, "a", {"t": 1}, ts=float("nan")),
               LexicalOp(NS, "a", {"t": 1}, order=(1, 0.0))]  # type: ignore[arg-type]
    for bad in bad_ops:
        with pytest.raises(InvalidInputError):
            store.batch([PutOp(NS, "a", {"text": "x"}), bad])
    assert store.get(NS, "a") is None


def test_search_reads_only_the_query_terms_postings(tmp_path: Path) -> None:
    """A search's statements touch the postings of its terms, never every document."""
    with HyMemoryStore(tmp_path / "big.db", index=index_config(["text"])) as store:
        docs = [Doc(f"m{i:04d}", f"filler{i} words here" + (" rare" if i == 77 else "")) for i in range(1500)]
        _write(store, docs)
        run: list[tuple[str, object]] = []
        sa.event.listen(store._engine, "before_cursor_execute",
                        lambda conn, cursor, statement, params, *rest: run.append((statement, params)))
        assert [k for k, _ in _search(store, "rare", 10)] == ["m0077"]
        queries = [(s, p) for s, p in run if s.startswith("SELECT")]
        assert len(queries) == 3  # statistics, document frequencies, scores
        assert all("hy_store_items" not in s for s, _ in queries)
        scores, params = queries[2]
        assert "term IN" in scores and "GROUP BY" in scores
        with store._engine.connect() as conn:
            plan = " | ".join(str(row[-1]) for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + scores, params))
        assert "SCAN hy_lexical_postings" not in plan and "SCAN hy_lexical_docs" not in plan, plan


# ---------------------------------------------------------------- batch by batch


def _postings(store: HyMemoryStore) -> dict[tuple[str, str], tuple[int, int]]:
    """Every posting as ``{(key, term): (tf, doc_len)}``, read straight from the tables."""
    p, d = lexical_postings.c, lexical_docs.c
    with store._engine.connect() as conn:
        rows = conn.execute(sa.select(d.key, p.term, p.tf, p.doc_len).join_from(
            lexical_postings, lexical_docs, d.item_id == p.item_id)).all()
    return {(key, term): (int(tf), int(doc_len)) for key, term, tf, doc_len in rows}


def _at_once(make_store: Callable[[], HyMemoryStore], docs: list[Doc]) -> dict[tuple[str, str], tuple[int, int]]:
    """The postings of ``docs`` written in one batch to an emptied namespace."""
    store = make_store()
    store.batch([PutOp(NS, i.key, None) for i in store.search(NS, limit=1000)])
    _write(store, docs)
    return _postings(store)


def test_each_write_indexes_its_documents(make_store: Callable[[], HyMemoryStore]) -> None:
    """A write gives its documents their postings in its own transaction: the next read,
    even by another store object on the database, ranks every document written before."""
    store, other = make_store(), make_store()
    turns = [Doc(f"t{i}", f"word{i} tea", "s1", ("x", float(i))) for i in range(6)]
    for n, turn in enumerate(turns, 1):
        _write(store, [turn])
        assert {key for key, _ in _postings(store)} == {t.key for t in turns[:n]}
    _assert_same(_search(other, "word5 word4 tea", 10), _reference(turns, "word5 word4 tea", 10))
    assert store.lexical_status(NS).docs == 6


def test_arrivals_between_indexed_turns_reindex_the_turns_around_them(
        make_store: Callable[[], HyMemoryStore]) -> None:
    """Six turns written one by one between indexed ones re-derive the turns around them:
    the postings equal those of the same sixteen turns written at once."""
    store = make_store()
    turns = [Doc(f"t{i}", f"word{i} tea", "s1", ("x", float(i))) for i in range(10)]
    _write(store, turns)
    between = [Doc(f"u{i}", f"between{i} cat", "s1", ("x", i + 2.5)) for i in range(6)]
    for doc in between:
        _write(store, [doc])
    _assert_same(_search(store, "word2 word8 between0 cat", 20),
                 _reference(turns + between, "word2 word8 between0 cat", 20))
    written = _postings(store)
    assert written == _at_once(make_store, turns + between)


def _random_history(rng: random.Random, store: HyMemoryStore) -> list[Doc]:
    """Adds (most of the batches), re-puts, deletes and a window change, in random order;
    returns the documents alive at the end."""
    alive: dict[str, Doc] = {}
    for step in range(60):
        roll = rng.random()
        if roll < 0.12 and alive:
            key = rng.choice(sorted(alive))
            store.delete(NS, key)
            del alive[key]
            continue
        if roll < 0.22 and alive:
            old = alive[rng.choice(sorted(alive))]
            docs = [Doc(old.key, " ".join(rng.choice(EN + ZH) for _ in range(4)), old.group, old.order)]
        else:
            docs = [Doc(f"k{step}_{j}", " ".join(rng.choice(EN + ZH) for _ in range(rng.randint(1, 6))),
                        rng.choice(["s1", "s2", None]), ("2024", float(rng.randint(0, 30))))
                    for j in range(rng.choice([1, 1, 1, 2, 3]))]
        alive.update({d.key: d for d in docs})
        _write(store, docs, window=(1, 1) if step == 45 else WINDOW)
    return list(alive.values())


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_history_ends_with_the_postings_of_its_documents_written_at_once(
        make_store: Callable[[], HyMemoryStore], seed: int) -> None:
    """Adds, re-puts, deletes and a window change, batch by batch, leave the postings of
    the surviving documents written in one batch, and rank like the in-process index."""
    store = make_store()
    alive = _random_history(random.Random(seed), store)
    hits = _search(store, "tea cat 喜欢 camping", 50)
    _assert_same(hits, _reference(alive, "tea cat 喜欢 camping", 50))
    assert (store.lexical_status(NS).docs, store.lexical_status(NS).window) == (len(alive), WINDOW)
    written = _postings(store)
    assert written == _at_once(make_store, alive)


def test_a_read_only_store_ranks_every_document_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = [Doc("a", "green tea", "s", ("x", 0.0)), Doc("b", "black tea", "s", ("x", 1.0)),
            Doc("c", "green jasmine", "s", ("x", 2.0))]
    with HyMemoryStore(tmp_path / "ro.db", index=index_config(["text"])) as store:
        for doc in docs:
            _write(store, [doc])
    monkeypatch.setattr(engine_module, "_writable", lambda path: False)  # as without permission
    with HyMemoryStore(tmp_path / "ro.db", index=index_config(["text"])) as store:
        assert store.read_only
        assert store.lexical_status(NS).docs == 3
        _assert_same(_search(store, "jasmine green", 5), _reference(docs, "jasmine green", 5))
