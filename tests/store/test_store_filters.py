"""HyMemoryStore filter language: extended operators, missing fields, safety."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from store_helpers import key_set

from hy_memory_langgraph.store import FilterError, HyMemoryStore
from hy_memory_langgraph.store.schema.tables import items
from hy_memory_langgraph.store.sql.filters import compile_filter
from hy_memory_langgraph.store.sql.json_fields import PostgresJson, SqliteJson

ROWS = {
    "x": {"branch": "x", "n": 1, "tags": ["a", "b"], "meta": {"lang": "en", "deep": {"v": 3}}},
    "y": {"branch": "y", "n": 2.5, "tags": [], "meta": {"lang": "fr"}, "flag": True},
    "null": {"branch": None, "n": "2", "flag": False},
    "absent": {"n": None, "flag": 1},
}


@pytest.fixture
def filled(hy_factory: Callable[..., HyMemoryStore]) -> HyMemoryStore:
    store = hy_factory(index=None)
    for key, value in ROWS.items():
        store.put(("f",), key, value)
    return store


def found(store: HyMemoryStore, flt: dict) -> set[str]:
    return key_set(store.search(("f",), filter=flt, limit=100))


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        # equality / None / missing (documented table in filters.py)
        ({"branch": "x"}, {"x"}),
        ({"branch": None}, {"null", "absent"}),
        ({"branch": {"$eq": None}}, {"null", "absent"}),
        ({"branch": {"$ne": "x"}}, {"y", "null", "absent"}),
        ({"branch": {"$ne": None}}, {"x", "y"}),
        ({"$or": [{"branch": "x"}, {"branch": None}]}, {"x", "null", "absent"}),
        ({"branch": {"$in": ["x", "y"]}}, {"x", "y"}),
        ({"branch": {"$in": ["x", None]}}, {"x", "null", "absent"}),
        ({"branch": {"$in": []}}, set()),
        ({"branch": {"$nin": ["x"]}}, {"y", "null", "absent"}),
        ({"branch": {"$nin": ["x", None]}}, {"y"}),
        ({"branch": {"$nin": []}}, set(ROWS)),
        ({"branch": {"$exists": True}}, {"x", "y", "null"}),
        ({"branch": {"$exists": False}}, {"absent"}),
        # ranges: numbers with numbers, strings with strings; missing/null never match
        ({"n": {"$gt": 1}}, {"y"}),
        ({"n": {"$gte": 1}}, {"x", "y"}),
        ({"n": {"$lt": 3}}, {"x", "y"}),
        ({"n": {"$lte": 1.0}}, {"x"}),
        ({"n": {"$gte": "1"}}, {"null"}),
        ({"branch": {"$gt": "x"}}, {"y"}),
        ({"missing": {"$gt": 0}}, set()),
        ({"missing": {"$lt": 0}}, set()),
        # strict types: booleans are not numbers
        ({"flag": True}, {"y"}),
        ({"flag": False}, {"null"}),
        ({"flag": 1}, {"absent"}),
        ({"flag": {"$in": [True, 1]}}, {"y", "absent"}),
        ({"flag": 0}, set()),
        ({"flag": {"$in": [0, 2]}}, set()),
        ({"tags": '["a","b"]'}, set()),  # a string never equals an array's JSON text
        ({"meta": '{"lang":"fr"}'}, set()),
        ({"n": {"$ne": 1}}, {"y", "null", "absent"}),
        ({"n": 2}, set()),  # the string "2" is not the number 2
        ({"n": "2"}, {"null"}),
        ({"n": {"$in": [2.5, "2"]}}, {"y", "null"}),
        # dotted paths and nested structures
        ({"meta.lang": "en"}, {"x"}),
        ({"meta.deep.v": {"$gte": 3}}, {"x"}),
        ({"meta.deep.v": None}, {"y", "null", "absent"}),
        ({"meta": {"deep": {"v": 3}}}, {"x"}),
        ({"tags": []}, {"y"}),
        ({"tags": ["a", "b"]}, {"x"}),
        ({"tags": ["a"]}, set()),
        # logical nesting
        ({"$and": [{"n": {"$gt": 0}}, {"$or": [{"branch": "y"}, {"meta.lang": "en"}]}]}, {"x", "y"}),
        ({"$or": [{"$and": [{"branch": "x"}, {"n": 1}]}, {"flag": False}]}, {"x", "null"}),
        ({"branch": "x", "$or": [{"n": 1}, {"n": 2}]}, {"x"}),
    ],
)
def test_filter_semantics(filled: HyMemoryStore, flt: dict, expected: set[str]) -> None:
    assert found(filled, flt) == expected


@pytest.mark.parametrize(
    ("flt", "needle"),
    [
        ({"a'; DROP TABLE hy_store_items;--": 1}, "a'; DROP TABLE"),
        ({'a"b': 1}, 'a"b'),
        ({"a b": 1}, "a b"),
        ({"a..b": 1}, "a..b"),
        ({"": 1}, "''"),
        ({"x": {"$regex": ".*"}}, "$regex"),
        ({"x": {"$gt": 1, "y": 2}}, "mixes operators"),
        ({"$not": {"x": 1}}, "$not"),
        ({"$or": []}, "$or"),
        ({"$or": {"x": 1}}, "$or"),
        ({"x": {"$in": "abc"}}, "$in"),
        ({"x": {"$exists": "yes"}}, "$exists"),
        ({"x": {"$gt": None}}, "$gt"),
        ({"x": {"$gt": True}}, "$gt"),
        ({"x": {"$eq": [1]}}, "$eq"),
        ({"x": {"nested key": 1}}, "nested key"),
        ({1: 2}, "strings"),
    ],
)
def test_bad_filters_raise_value_error(filled: HyMemoryStore, flt: dict, needle: str) -> None:
    with pytest.raises(ValueError) as info:
        filled.search(("f",), filter=flt)
    assert isinstance(info.value, FilterError)
    assert needle.strip("'") in str(info.value)


def test_injection_attempts_leave_tables_intact(filled: HyMemoryStore) -> None:
    with pytest.raises(ValueError):
        filled.search(("f",), filter={"x'); DELETE FROM hy_store_items; --": 1})
    # values are bound, so hostile strings are just strings
    assert found(filled, {"branch": "x'; DROP TABLE hy_store_items;--"}) == set()
    assert found(filled, {"branch": {"$in": ["' OR 1=1 --", "x"]}}) == {"x"}
    hostile = ("it's", 'quo"te', "semi;colon", "per%cent", "under_score", "back\\slash")
    for label in hostile:
        filled.put(("inj", label), "k", {"v": label})
    assert filled.list_namespaces(prefix=("inj",)) == sorted(("inj", lab) for lab in hostile)
    for label in hostile:
        assert key_set(filled.search(("inj", label))) == {"k"}
        assert filled.get(("inj", label), "k").value == {"v": label}
    # "per%cent" / "under_score" must not act as LIKE wildcards
    assert filled.search(("inj", "per_cent")) == []
    assert len(filled.search((), limit=100)) == len(ROWS) + len(hostile)


def _compiled(flt: dict, dialect: sa.Dialect, access: type) -> str:
    expr = compile_filter(flt, access(items.c.value))
    return str(sa.select(items.c.id).where(expr).compile(dialect=dialect))


@pytest.mark.parametrize(
    "flt",
    [
        {"secret_key": "secret_value", "n": {"$gt": 41}},
        {"$or": [{"secret_key": None}, {"secret_key": {"$in": ["secret_value", 41]}}]},
        {"secret_key": {"deep": ["secret_value"]}, "flag": {"$exists": True}},
    ],
)
@pytest.mark.parametrize(
    ("dialect", "access"),
    [(sqlite.dialect(), SqliteJson), (postgresql.dialect(), PostgresJson)],
)
def test_compiled_sql_is_parameterised(flt: dict, dialect: sa.Dialect, access: type) -> None:
    text = _compiled(flt, dialect, access)
    assert "secret_key" not in text and "secret_value" not in text and "41" not in text


def test_integers_beyond_float_range_compare_as_infinities(filled: HyMemoryStore) -> None:
    assert found(filled, {"n": {"$lt": 10**400}}) == {"x", "y"}
    assert found(filled, {"n": {"$gt": -(10**400)}}) == {"x", "y"}
    assert found(filled, {"n": {"$gt": 10**400}}) == set()
