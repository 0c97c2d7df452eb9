"""Hypothesis: random op sequences give the same answers as the oracles.

1. ``InMemoryStore`` (langgraph) for put/delete/get/search/list_namespaces, on
   the filter subset it supports. Two upstream quirks are normalised in the
   oracle wrapper: it keeps vectors of a previous version of an item (we
   replace them), and it keeps empty namespaces after deletes or gets.
   No-query result order is upstream-undefined: we expect newest first and
   check it against the oracle's own ``updated_at``.
2. A tiny Python reference of our documented filter semantics, for the
   extended operators InMemoryStore lacks ($in, $nin, $exists, $or, $and,
   dotted paths, strict types).
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import Item, SearchItem
from langgraph.store.memory import InMemoryStore
from store_helpers import index_config

from hy_memory_langgraph.store import HyMemoryStore

NAMESPACES = [("a",), ("a", "b"), ("a", "c"), ("b",), ("a", "b", "d")]
PREFIXES = [(), ("a",), ("a", "b"), ("b",), ("c",)]
KEYS = [f"k{i}" for i in range(6)]
WORDS = ["tea", "green", "coffee", "bread", "mountain", "river", "code", "cake"]
TAGS = ["red", "green", "blue"]

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)


@st.composite
def item_values(draw: st.DrawFn) -> dict[str, Any]:
    value: dict[str, Any] = {
        "text": draw(words),
        "tag": draw(st.sampled_from(TAGS)),
        "n": draw(st.integers(-3, 3)),
    }
    if draw(st.booleans()):
        value["opt"] = draw(st.one_of(st.none(), st.sampled_from(["x", "y"])))
    if draw(st.booleans()):
        value["meta"] = {"k": draw(st.sampled_from(["p", "q"])), "w": "about " + draw(words)}
    if draw(st.booleans()):
        # unique: InMemoryStore crashes when one put embeds the same text twice
        value["tags"] = draw(st.lists(st.sampled_from(WORDS), max_size=3, unique=True))
    return value


oracle_filters = st.one_of(
    st.fixed_dictionaries({"tag": st.sampled_from(TAGS)}),
    st.fixed_dictionaries({"tag": st.fixed_dictionaries({"$ne": st.sampled_from(TAGS)})}),
    st.fixed_dictionaries({"opt": st.one_of(st.none(), st.sampled_from(["x", "y"]))}),
    st.fixed_dictionaries({"opt": st.fixed_dictionaries({"$ne": st.sampled_from(["x", "y"])})}),
    st.fixed_dictionaries(
        {"n": st.dictionaries(st.sampled_from(["$gt", "$gte", "$lt", "$lte", "$eq", "$ne"]),
                              st.integers(-3, 3), min_size=1, max_size=2)}
    ),
    st.fixed_dictionaries({"meta": st.fixed_dictionaries({"k": st.sampled_from(["p", "q"])})}),
    st.fixed_dictionaries({"tag": st.sampled_from(TAGS), "n": st.integers(-3, 3)}),
)

INDEX_CHOICES = [None, False, ["text"], ["tags[*]"], ["text", "meta.w"]]

put_ops = st.tuples(st.just("put"), st.sampled_from(NAMESPACES), st.sampled_from(KEYS), item_values(),
                    st.sampled_from(range(len(INDEX_CHOICES))))
search_ops = st.tuples(st.just("search"), st.sampled_from(PREFIXES), st.one_of(st.none(), words),
                       st.one_of(st.none(), oracle_filters), st.integers(1, 6), st.integers(0, 3))
any_ops = st.one_of(
    put_ops,
    st.tuples(st.just("delete"), st.sampled_from(NAMESPACES), st.sampled_from(KEYS)),
    st.tuples(st.just("get"), st.sampled_from(NAMESPACES), st.sampled_from(KEYS)),
    search_ops,
    search_ops,
    st.tuples(st.just("list"), st.sampled_from([None, ("a",), ("a", "*")]),
              st.sampled_from([None, ("b",), ("*", "d")]), st.sampled_from([None, 1, 2]),
              st.integers(1, 5), st.integers(0, 2)),
)
# a populated store first, then anything (searches twice as likely)
ops = st.tuples(st.lists(put_ops, min_size=4, max_size=14), st.lists(any_ops, min_size=4, max_size=20)).map(
    lambda parts: parts[0] + parts[1]
)


class Oracle:
    """InMemoryStore with the two documented quirks normalised away."""

    def __init__(self) -> None:
        self.store = InMemoryStore(index=index_config(["text"]))

    def _prune(self) -> None:
        data = self.store._data
        for ns in [ns for ns, entries in data.items() if not entries]:
            del data[ns]

    def put(self, ns: tuple[str, ...], key: str, value: dict, index: Any) -> None:
        self.store.delete(ns, key)
        self.store.put(ns, key, value, index=index)
        self._prune()

    def delete(self, ns: tuple[str, ...], key: str) -> None:
        self.store.delete(ns, key)
        self._prune()

    def get(self, ns: tuple[str, ...], key: str) -> Item | None:
        item = self.store.get(ns, key)
        self._prune()
        return item


def _ident(item: Item) -> tuple[tuple[str, ...], str]:
    return item.namespace, item.key


def _expected_page(full: list[SearchItem], offset: int, limit: int) -> list[SearchItem]:
    scored = [r for r in full if r.score is not None]
    scoreless = sorted((r for r in full if r.score is None), key=lambda r: r.updated_at, reverse=True)
    return (scored + scoreless)[offset : offset + limit]


def _check_search(ours: list[SearchItem], full: list[SearchItem], offset: int, limit: int) -> None:
    expected = _expected_page(full, offset, limit)
    assert len(ours) == len(expected), (ours, expected)
    by_id = {_ident(r): r for r in full}
    assert len({_ident(r) for r in ours}) == len(ours)
    for mine, want in zip(ours, expected, strict=True):
        truth = by_id[_ident(mine)]  # KeyError = an item the oracle does not match
        assert mine.value == truth.value
        assert (mine.score is None) == (want.score is None)
        if want.score is None:
            assert truth.score is None and truth.updated_at == want.updated_at
        else:
            assert math.isclose(mine.score, want.score, abs_tol=1e-4)
            assert math.isclose(mine.score, truth.score, abs_tol=1e-4)


def _run(steps: list[tuple], hy: HyMemoryStore, oracle: Oracle) -> None:
    for step in steps:
        kind = step[0]
        if kind == "put":
            _, ns, key, value, choice = step
            index = INDEX_CHOICES[choice]
            hy.put(ns, key, value, index=index)
            oracle.put(ns, key, value, index)
        elif kind == "delete":
            hy.delete(step[1], step[2])
            oracle.delete(step[1], step[2])
        elif kind == "get":
            mine, truth = hy.get(step[1], step[2]), oracle.get(step[1], step[2])
            assert (mine is None) == (truth is None)
            if mine is not None and truth is not None:
                assert (mine.namespace, mine.key, mine.value) == (truth.namespace, truth.key, truth.value)
        elif kind == "search":
            _, prefix, query, flt, limit, offset = step
            ours = hy.search(prefix, query=query, filter=flt, limit=limit, offset=offset)
            full = oracle.store.search(prefix, query=query, filter=flt, limit=1000)
            _check_search(ours, full, offset, limit)
        else:
            _, prefix, suffix, depth, limit, offset = step
            kwargs = {"prefix": prefix, "suffix": suffix, "max_depth": depth,
                      "limit": limit, "offset": offset}
            assert hy.list_namespaces(**kwargs) == oracle.store.list_namespaces(**kwargs)


PROBES = [
    ("search", prefix, query, None, limit, offset)
    for prefix in [(), ("a",), ("a", "b")]
    for query in [None, "green tea"]
    for limit, offset in [(2, 0), (3, 1), (10, 0)]
] + [("list", None, None, None, 10, 0), ("list", ("a",), None, 1, 10, 0)]


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=ops)
def test_random_ops_agree_with_in_memory_store(steps: list[tuple]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with HyMemoryStore(Path(tmp) / "p.db", index=index_config(["text"])) as hy:
            # random steps, then a fixed battery of probes over the resulting state
            _run(steps + PROBES, hy, Oracle())


# ---------------------------------------------------------------- extended filter reference

MISSING = object()
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([0.5, 1.0]),
                    st.sampled_from(["x", "y", "1"]))
ext_values = st.fixed_dictionaries(
    {},
    optional={
        "a": scalars,
        "b": scalars,
        "o": st.fixed_dictionaries({}, optional={"p": scalars, "q": st.lists(scalars, max_size=2)}),
        "l": st.lists(scalars, max_size=2),
    },
)
paths = st.sampled_from(["a", "b", "o.p", "o", "l", "o.q", "zz"])
leaf_conditions = st.one_of(
    scalars,
    st.dictionaries(st.sampled_from(["$eq", "$ne"]), scalars, min_size=1, max_size=1),
    st.dictionaries(st.sampled_from(["$gt", "$gte", "$lt", "$lte"]),
                    st.one_of(st.integers(-2, 2), st.sampled_from(["x", "1"])), min_size=1, max_size=2),
    st.dictionaries(st.sampled_from(["$in", "$nin"]), st.lists(scalars, max_size=3), min_size=1, max_size=1),
    st.dictionaries(st.just("$exists"), st.booleans(), min_size=1),
    st.lists(scalars, max_size=2),
    st.fixed_dictionaries({}, optional={"p": scalars}),
)
ext_filters = st.recursive(
    st.dictionaries(paths, leaf_conditions, min_size=1, max_size=2),
    lambda inner: st.dictionaries(st.sampled_from(["$and", "$or"]), st.lists(inner, min_size=1, max_size=3),
                                  min_size=1, max_size=1),
    max_leaves=4,
)


def _at(value: Any, path: str) -> Any:
    for seg in path.split("."):
        if not isinstance(value, dict) or seg not in value:
            return MISSING
        value = value[seg]
    return value


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _eq(v: Any, x: Any) -> bool:
    if x is None:
        return v is MISSING or v is None
    if isinstance(x, bool):
        return isinstance(v, bool) and v == x
    if _is_num(x):
        return _is_num(v) and v == x
    return isinstance(v, str) and v == x


def _range(v: Any, op: str, x: Any) -> bool:
    if not ((_is_num(x) and _is_num(v)) or (isinstance(x, str) and isinstance(v, str))):
        return False
    return {"$gt": v > x, "$gte": v >= x, "$lt": v < x, "$lte": v <= x}[op]


def _cond(v: Any, c: Any) -> bool:
    if isinstance(c, dict) and c and all(k.startswith("$") for k in c):
        checks = {
            "$eq": lambda x: _eq(v, x), "$ne": lambda x: not _eq(v, x),
            "$in": lambda x: any(_eq(v, i) for i in x), "$nin": lambda x: not any(_eq(v, i) for i in x),
            "$exists": lambda x: (v is not MISSING) == x,
        }
        return all(checks[k](x) if k in checks else _range(v, k, x) for k, x in c.items())
    if isinstance(c, dict):
        return isinstance(v, dict) and all(_cond(_at(v, k), sub) for k, sub in c.items())
    if isinstance(c, list):
        same_length = isinstance(v, list) and len(v) == len(c)
        return same_length and all(_cond(a, b) for a, b in zip(v, c, strict=True))
    return _eq(v, c)


def reference_match(value: dict, flt: dict) -> bool:
    for key, cond in flt.items():
        if key == "$and" and not all(reference_match(value, f) for f in cond):
            return False
        if key == "$or" and not any(reference_match(value, f) for f in cond):
            return False
        if not key.startswith("$") and not _cond(_at(value, key), cond):
            return False
    return True


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(ext_values, min_size=1, max_size=8),
    filters=st.lists(ext_filters, min_size=1, max_size=6),
)
def test_extended_filters_match_reference(values: list[dict], filters: list[dict]) -> None:
    with tempfile.TemporaryDirectory() as tmp, HyMemoryStore(Path(tmp) / "f.db") as store:
        for i, value in enumerate(values):
            store.put(("f",), f"k{i}", value)
        for flt in filters:
            got = {r.key for r in store.search(("f",), filter=flt, limit=100)}
            want = {f"k{i}" for i, v in enumerate(values) if reference_match(v, flt)}
            assert got == want, flt
