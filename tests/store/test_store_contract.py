"""Contract suite: the same behaviour from InMemoryStore (oracle) and HyMemoryStore.

Orders that langgraph leaves undefined (no-query search: InMemoryStore returns
insertion order, HyMemoryStore newest first) are compared as sets.
"""

from __future__ import annotations

from datetime import timezone

import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)
from store_helpers import StoreFactory, index_config, is_hy, key_set, keys

DOCS = {
    "tea": {"text": "green tea with jasmine", "kind": "drink", "score": 4.5, "n": 3},
    "coffee": {"text": "strong black coffee", "kind": "drink", "score": 3.0, "n": 1},
    "bread": {"text": "fresh sourdough bread", "kind": "food", "score": 4.0, "n": 2},
    "cake": {"text": "chocolate cake with cream", "kind": "food", "score": 2.5, "n": 5},
}


def fill(store: BaseStore, namespace: tuple[str, ...] = ("docs",)) -> None:
    for key, value in DOCS.items():
        store.put(namespace, key, value)


# ---------------------------------------------------------------- put / get / delete


def test_put_get_roundtrip(store: BaseStore) -> None:
    store.put(("users", "1"), "prefs", {"theme": "dark", "nested": {"a": [1, 2, {"b": None}]}})
    item = store.get(("users", "1"), "prefs")
    assert isinstance(item, Item)
    assert item.value == {"theme": "dark", "nested": {"a": [1, 2, {"b": None}]}}
    assert item.namespace == ("users", "1") and item.key == "prefs"
    assert item.created_at.tzinfo is not None and item.updated_at.tzinfo is not None
    assert item.created_at.utcoffset() == timezone.utc.utcoffset(None)


def test_get_missing_is_none(store: BaseStore) -> None:
    assert store.get(("nope",), "k") is None
    store.put(("a",), "k", {"x": 1})
    assert store.get(("a",), "other") is None
    assert store.get(("a", "b"), "k") is None


def test_overwrite_and_delete(store: BaseStore) -> None:
    store.put(("a",), "k", {"x": 1})
    store.put(("a",), "k", {"x": 2})
    assert store.get(("a",), "k").value == {"x": 2}
    store.delete(("a",), "k")
    assert store.get(("a",), "k") is None
    store.delete(("a",), "never-existed")  # no error


def test_batch_mixed_ops_read_before_write(store: BaseStore) -> None:
    store.put(("a",), "k", {"v": "old"})
    results = store.batch(
        [
            PutOp(("a",), "k", {"v": "new"}),
            GetOp(("a",), "k"),
            PutOp(("a",), "j", {"v": 1}),
            PutOp(("a",), "j", {"v": 2}),
            SearchOp(("a",)),
            ListNamespacesOp(),
        ]
    )
    assert results[0] is None and results[2] is None and results[3] is None
    assert results[1].value == {"v": "old"}  # reads see the state before the batch
    assert key_set(results[4]) == {"k"}
    assert results[5] == [("a",)]
    assert store.get(("a",), "k").value == {"v": "new"}
    assert store.get(("a",), "j").value == {"v": 2}  # last put wins


def test_invalid_namespaces_rejected(store: BaseStore) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.put(("a.b",), "k", {"x": 1})
    with pytest.raises(InvalidNamespaceError):
        store.put((), "k", {"x": 1})
    with pytest.raises(InvalidNamespaceError):
        store.search(("",))
    if is_hy(store):  # langgraph's InMemoryStore.batch does not validate direct ops
        with pytest.raises(InvalidNamespaceError):
            store.batch([GetOp(("a.b",), "k")])
        with pytest.raises(InvalidNamespaceError):
            store.batch([ListNamespacesOp((MatchCondition("prefix", ("x.y",)),))])


# ---------------------------------------------------------------- search without query


def test_search_prefix_and_sets(store: BaseStore) -> None:
    fill(store, ("docs", "u1"))
    store.put(("docs", "u2"), "other", {"text": "tea again", "kind": "drink"})
    store.put(("docsx",), "sibling", {"text": "not under docs"})
    assert key_set(store.search(("docs",), limit=100)) == set(DOCS) | {"other"}
    assert key_set(store.search(("docs", "u1"), limit=100)) == set(DOCS)
    assert key_set(store.search((), limit=100)) == set(DOCS) | {"other", "sibling"}
    assert store.search(("doc",)) == []
    assert all(isinstance(r, SearchItem) and r.score is None for r in store.search(("docs",)))


def test_prefix_boundaries_with_tricky_labels(store: BaseStore) -> None:
    for label in ["a", "a-b", "a/b", "ab", "a b", "é"]:
        store.put((label,), "k", {"v": label})
        store.put((label, "child"), "k", {"v": label})
    assert [r.value["v"] for r in store.search(("a",), limit=10)] == ["a", "a"]
    assert len(store.search(("a/b",), limit=10)) == 2
    assert len(store.search(("é",), limit=10)) == 2
    assert store.list_namespaces(prefix=("a",)) == [("a",), ("a", "child")]


def test_search_limit_offset_partition(store: BaseStore) -> None:
    for i in range(7):
        store.put(("p",), f"k{i}", {"i": i})
    pages = [store.search(("p",), limit=3, offset=o) for o in (0, 3, 6)]
    assert [len(p) for p in pages] == [3, 3, 1]
    assert set().union(*(key_set(p) for p in pages)) == {f"k{i}" for i in range(7)}
    assert store.search(("p",), limit=0) == []
    assert store.search(("p",), offset=10) == []


# ---------------------------------------------------------------- filters (oracle-supported)


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        ({"kind": "drink"}, {"tea", "coffee"}),
        ({"kind": {"$eq": "food"}}, {"bread", "cake"}),
        ({"kind": {"$ne": "food"}}, {"tea", "coffee"}),
        ({"score": {"$gt": 3.0}}, {"tea", "bread"}),
        ({"score": {"$gte": 3.0}}, {"tea", "bread", "coffee"}),
        ({"score": {"$lt": 3.0}}, {"cake"}),
        ({"score": {"$lte": 3.0}}, {"cake", "coffee"}),
        ({"n": {"$gt": 1, "$lt": 5}}, {"tea", "bread"}),
        ({"kind": "drink", "n": {"$gte": 2}}, {"tea"}),
        ({"kind": "nothing"}, set()),
        ({"missing": None}, set(DOCS)),
    ],
)
def test_filters_match_oracle_semantics(store: BaseStore, flt: dict, expected: set[str]) -> None:
    fill(store)
    assert key_set(store.search(("docs",), filter=flt, limit=100)) == expected


def test_filter_nested_dict_is_containment_and_list_is_exact(store: BaseStore) -> None:
    store.put(("n",), "a", {"meta": {"lang": "en", "src": "web"}, "tags": ["x", "y"]})
    store.put(("n",), "b", {"meta": {"lang": "fr"}, "tags": ["x"]})
    store.put(("n",), "c", {"meta": "flat", "tags": ["y", "x"]})
    assert key_set(store.search(("n",), filter={"meta": {"lang": "en"}})) == {"a"}
    assert key_set(store.search(("n",), filter={"meta": {}})) == {"a", "b"}
    assert key_set(store.search(("n",), filter={"tags": ["x", "y"]})) == {"a"}
    assert key_set(store.search(("n",), filter={"tags": ["x"]})) == {"b"}
    assert key_set(store.search(("n",), filter={"meta": {"lang": {"$ne": "en"}}})) == {"b"}


def test_filter_with_null_value(store: BaseStore) -> None:
    store.put(("b",), "x", {"branch": "x"})
    store.put(("b",), "n", {"branch": None})
    store.put(("b",), "absent", {"other": 1})
    store.put(("b",), "y", {"branch": "y"})
    assert key_set(store.search(("b",), filter={"branch": None})) == {"n", "absent"}
    assert key_set(store.search(("b",), filter={"branch": {"$ne": "x"}})) == {"n", "absent", "y"}


# ---------------------------------------------------------------- semantic search


def test_query_ranks_by_similarity(store: BaseStore) -> None:
    fill(store)
    results = store.search(("docs",), query="green tea jasmine", limit=4)
    assert keys(results)[0] == "tea"
    scores = [r.score for r in results]
    assert all(isinstance(s, float) for s in scores)
    assert scores == sorted(scores, reverse=True)


def test_query_with_filter_and_offset(store: BaseStore) -> None:
    fill(store)
    full = store.search(("docs",), query="cake with cream", filter={"kind": "food"}, limit=10)
    assert key_set(full) == {"bread", "cake"} and keys(full)[0] == "cake"
    second = store.search(("docs",), query="cake with cream", filter={"kind": "food"}, offset=1)
    assert keys(second) == keys(full)[1:]
    assert store.search(("docs",), query="cake", limit=1)[0].key == "cake"


def test_index_false_items_come_after_scored(store: BaseStore) -> None:
    fill(store)
    store.put(("docs",), "hidden", {"text": "green tea with jasmine"}, index=False)
    results = store.search(("docs",), query="green tea with jasmine", limit=10)
    assert keys(results)[0] == "tea"
    assert keys(results)[-1] == "hidden" and results[-1].score is None
    top = store.search(("docs",), query="green tea with jasmine", limit=2)
    assert "hidden" not in key_set(top)


def test_index_paths_with_wildcards(open_store: StoreFactory) -> None:
    store = open_store(index=index_config(["title"]))
    store.put(("w",), "a", {"title": "weather report", "search_keys": ["penguin", "iceberg"]},
              index=["search_keys[*]"])
    store.put(("w",), "b", {"title": "penguin colony", "search_keys": ["weather"]})
    hit = store.search(("w",), query="iceberg", limit=1)[0]
    assert hit.key == "a"
    # default fields index "title" only: "b" is found through its title
    assert store.search(("w",), query="penguin colony", limit=1)[0].key == "b"
    exact = store.search(("w",), query="penguin", limit=2)
    assert {r.key for r in exact} == {"a", "b"}


def test_whole_document_default_field(open_store: StoreFactory) -> None:
    store = open_store(index=index_config())  # fields default ["$"]
    store.put(("d",), "a", {"title": "zebra crossing"})
    store.put(("d",), "b", {"title": "apple pie"})
    assert store.search(("d",), query="zebra crossing", limit=1)[0].key == "a"


def test_overwrite_replaces_vectors(store: BaseStore) -> None:
    store.put(("o",), "k", {"text": "quantum physics lecture"})
    store.put(("o",), "j", {"text": "cooking pasta at home"})
    store.put(("o",), "k", {"text": "baking bread at home"})
    assert store.search(("o",), query="baking bread at home", limit=1)[0].key == "k"


def test_query_without_index_is_plain_search(open_store: StoreFactory) -> None:
    store = open_store(index=None)
    store.put(("x",), "a", {"text": "hello"})
    results = store.search(("x",), query="hello")
    assert key_set(results) == {"a"} and results[0].score is None


# ---------------------------------------------------------------- list_namespaces


def _fill_namespaces(store: BaseStore) -> None:
    for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("b", "c"), ("c",), ("a", "b", "c", "v1")]:
        store.put(ns, "k", {"v": 1})


def test_list_namespaces_variants(store: BaseStore) -> None:
    _fill_namespaces(store)
    everything = [("a", "b", "c"), ("a", "b", "c", "v1"), ("a", "b", "d"), ("a", "x"), ("b", "c"), ("c",)]
    assert store.list_namespaces() == everything
    assert store.list_namespaces(prefix=("a", "b")) == everything[:3]
    assert store.list_namespaces(suffix=("c",)) == [("a", "b", "c"), ("b", "c"), ("c",)]
    assert store.list_namespaces(prefix=("a", "*", "c")) == [("a", "b", "c"), ("a", "b", "c", "v1")]
    assert store.list_namespaces(suffix=("*", "c")) == [("a", "b", "c"), ("b", "c")]
    assert store.list_namespaces(prefix=("a",), suffix=("d",)) == [("a", "b", "d")]
    assert store.list_namespaces(max_depth=2) == [("a", "b"), ("a", "x"), ("b", "c"), ("c",)]
    assert store.list_namespaces(limit=2, offset=1) == everything[1:3]
    assert store.list_namespaces(prefix=("zzz",)) == []


def test_list_namespaces_forgets_deleted(store: BaseStore) -> None:
    store.put(("gone",), "k", {"v": 1})
    store.put(("kept",), "k", {"v": 1})
    store.delete(("gone",), "k")
    if is_hy(store):  # InMemoryStore keeps empty namespaces around
        assert store.list_namespaces() == [("kept",)]
    else:
        assert ("kept",) in store.list_namespaces()


# ---------------------------------------------------------------- async twins


async def test_async_twins(store: BaseStore) -> None:
    await store.aput(("as", "1"), "a", {"text": "async green tea", "kind": "drink"})
    await store.aput(("as", "2"), "b", {"text": "async coffee", "kind": "drink"})
    item = await store.aget(("as", "1"), "a")
    assert item is not None and item.value["kind"] == "drink"
    hits = await store.asearch(("as",), query="green tea", limit=1)
    assert hits[0].key == "a"
    assert key_set(await store.asearch(("as",), filter={"kind": "drink"})) == {"a", "b"}
    assert await store.alist_namespaces(prefix=("as",)) == [("as", "1"), ("as", "2")]
    await store.adelete(("as", "1"), "a")
    assert await store.aget(("as", "1"), "a") is None
    results = await store.abatch([GetOp(("as", "2"), "b"), SearchOp(("as",))])
    assert results[0].key == "b" and key_set(results[1]) == {"b"}


# ---------------------------------------------- filters users write for LangGraph's stores


@pytest.mark.parametrize(("flt", "expected"), [
    ({"score": {"$lt": float("inf")}}, {"tea", "coffee", "bread", "cake"}),
    ({"score": {"$gt": float("-inf")}}, {"tea", "coffee", "bread", "cake"}),
    ({"score": {"$gt": float("inf")}}, set()),
    ({"score": {"$lte": 4.0, "$gt": float("-inf")}}, {"coffee", "bread", "cake"}),
])
def test_infinite_range_bounds_behave_like_langgraph_stores(open_store: StoreFactory,
                                                            flt: dict, expected: set[str]) -> None:
    store = open_store()
    for key, value in DOCS.items():
        store.put(("docs",), key, value)
    assert key_set(store.search(("docs",), filter=flt, limit=10)) == expected


def test_injection_shaped_filter_key_is_an_invalid_filter_key(open_store: StoreFactory,
                                                              backend: str) -> None:
    store = open_store()
    store.put(("docs",), "a", {"text": "x", "n": 1})
    hostile = {"n') OR 1=1 --": 1}
    if backend == "memory":  # LangGraph's in-memory store simply matches nothing
        assert store.search(("docs",), filter=hostile) == []
        return
    with pytest.raises(ValueError, match="Invalid filter key"):
        store.search(("docs",), filter=hostile)


def test_integers_beyond_64_bits_compare_like_langgraph_stores(open_store: StoreFactory) -> None:
    store = open_store()
    store.put(("docs",), "a", {"text": "x", "n": 1})
    assert [i.key for i in store.search(("docs",), filter={"n": {"$lt": 10**100}})] == ["a"]
    assert store.search(("docs",), filter={"n": {"$gt": 2**70}}) == []


@pytest.mark.parametrize(("flt", "expected"), [
    ({"score": float("nan")}, set()),
    ({"score": {"$eq": float("nan")}}, set()),
    ({"score": {"$gt": float("nan")}}, set()),
    ({"score": {"$ne": float("nan")}}, {"tea", "coffee", "bread", "cake"}),
])
def test_nan_matches_nothing_and_never_raises(open_store: StoreFactory, flt: dict,
                                              expected: set[str]) -> None:
    store = open_store()
    for key, value in DOCS.items():
        store.put(("docs",), key, value)
    assert key_set(store.search(("docs",), filter=flt, limit=10)) == expected
