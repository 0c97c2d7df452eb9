"""Tolerant parsing of model output and value coercion helpers."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hy_memory_langgraph.models.parsing import (
    as_choice,
    as_float,
    as_list,
    as_str,
    as_str_list,
    parse_json_object,
)

# --- parse_json_object ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
        ('Here it is:\n```JSON\n{"a": 1}\n```\nHope that helps!', {"a": 1}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('Sure, the result is {"ops": [{"op": "ADD"}]} as requested.', {"ops": [{"op": "ADD"}]}),
        ("{'task': 'deploy', 'ok': True, 'x': None, 'n': False}",
         {"task": "deploy", "ok": True, "x": None, "n": False}),
        ("{'a': \"it's\", 'b': 'say \"hi\"'}", {"a": "it's", "b": 'say "hi"'}),
        ('{"a": [1, 2,], "b": {"c": 3,},}', {"a": [1, 2], "b": {"c": 3}}),
        ("{\u201ca\u201d: \u201cb\u201d}", {"a": "b"}),
        ('{"s": "he said \u201chi\u201d"}', {"s": "he said \u201chi\u201d"}),
        ('{task: "x", // a comment\n confidence: 0.8}', {"task": "x", "confidence": 0.8}),
        ('{"a": "line\nbreak"}', {"a": "line\nbreak"}),
        ('<think>maybe {"draft": 1}</think>{"final": 2}', {"final": 2}),
        ('use {name} placeholders; answer: {"a": 1}', {"a": 1}),
        ("{1, 2} then {\"a\": 1}", {"a": 1}),
        ("{}}}", {}),
        ('[{"a": 1}, {"b": 2}]', {"a": 1}),
        ('{"url": "http://x.y/z", "p": "C:\\\\tmp"}', {"url": "http://x.y/z", "p": "C:\\tmp"}),
        ('{"x": true, "y": null}', {"x": True, "y": None}),
        ("{'t': (1, 2)}", {"t": [1, 2]}),
    ],
)
def test_parse_json_object_tolerates(text: str, expected: dict[str, Any]) -> None:
    assert parse_json_object(text) == expected


def test_truncated_output_is_closed() -> None:
    assert parse_json_object('{"facts": [{"x": 1}, {"y": 2') == {"facts": [{"x": 1}, {"y": 2}]}
    assert parse_json_object('```json\n{"a": "unfinished str') == {"a": "unfinished str"}
    assert parse_json_object('{"a": 1, "b":') == {"a": 1}


@pytest.mark.parametrize(
    "text",
    ["", "no json here", "{", "{[", "{not: valid: at all}", "[1, 2]", "```json\n```", "{name}",
     "null", "42", '"just a string"'],
)  # fmt: skip
def test_parse_json_object_returns_none_when_unusable(text: str) -> None:
    assert parse_json_object(text) is None


def test_parse_json_object_accepts_non_strings() -> None:
    assert parse_json_object(None) is None
    assert parse_json_object(42) is None
    assert parse_json_object({"a": 1}) == {"a": 1}
    assert parse_json_object([{"a": 1}]) is None
    assert parse_json_object(b'{"a": 1}') == {"a": 1}


def test_never_eval() -> None:
    text = "{'a': __import__('os').system('echo pwned')}"
    assert parse_json_object(text) is None


def test_large_and_deep_inputs_are_bounded() -> None:
    assert parse_json_object("[" * 5000 + "]" * 5000) is None
    assert parse_json_object("{" * 300_000) is None
    big = {"items": list(range(20_000))}
    assert parse_json_object("prefix " + json.dumps(big)) == big


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(), kids, max_size=4),
    max_leaves=12,
)  # fmt: skip
_prose = st.text(
    alphabet=st.characters(blacklist_characters="{}[]`'\"\u201c\u201d\u2018\u2019<"), max_size=40
)


@settings(max_examples=120, deadline=None)
@given(st.dictionaries(st.text(), _json, max_size=5), _prose, _prose, st.booleans())
def test_json_object_roundtrip_in_prose(
    obj: dict[str, Any], before: str, after: str, fenced: bool
) -> None:
    body = json.dumps(obj, ensure_ascii=False)
    text = f"{before}\n```json\n{body}\n```\n{after}" if fenced else f"{before} {body} {after}"
    assert parse_json_object(text) == obj


_py = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
    max_leaves=10,
)


@settings(max_examples=120, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _py, max_size=4))
def test_python_repr_roundtrip(obj: dict[str, Any]) -> None:
    assert parse_json_object(repr(obj)) == obj


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    obj = parse_json_object(text)
    assert obj is None or isinstance(obj, dict)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="{}[]\"':,\\ \n`aTNtrue1.-/", max_size=60))
def test_bracket_soup_never_raises(text: str) -> None:
    assert parse_json_object(text) is None or isinstance(parse_json_object(text), dict)


# --- helpers --------------------------------------------------------------------------------


def test_as_list() -> None:
    assert as_list(None) == []
    assert as_list("a") == ["a"]
    assert as_list(3) == [3]
    assert as_list({"a": 1}) == [{"a": 1}]
    assert as_list((1, 2)) == [1, 2]
    assert as_list({"b", "a"}) == ["a", "b"]
    original = [1]
    assert as_list(original) == [1] and as_list(original) is not original


def test_as_str() -> None:
    assert as_str(None) == ""
    assert as_str(None, "x") == "x"
    assert as_str("  hi ") == "hi"
    assert as_str("   ", "d") == "d"
    assert as_str(3) == "3"
    assert as_str(True) == "true"
    assert as_str({"a": "é"}) == '{"a": "é"}'
    assert as_str(b"bytes") == "bytes"


def test_as_float() -> None:
    assert as_float("0.8", 0.5) == 0.8
    assert as_float(" 85% ", 0.5) == pytest.approx(0.85)
    assert as_float(2, 0.5, lo=0, hi=1) == 1.0
    assert as_float(-3.0, 0.5, lo=0, hi=1) == 0.0
    assert as_float("high", 0.5) == 0.5
    assert as_float(None, 0.5) == 0.5
    assert as_float("nan", 0.5) == 0.5
    assert as_float(float("inf"), 0.5) == 0.5
    assert as_float(10**400, 0.5) == 0.5
    assert as_float([1], 0.5) == 0.5
    assert as_float(True, 0.0) == 1.0


def test_as_choice() -> None:
    ops = ("ADD", "UPDATE", "DELETE", "SKIP")
    assert as_choice("update", ops, "ADD") == "UPDATE"
    assert as_choice(' "Skip". ', ops, "ADD") == "SKIP"
    assert as_choice("merge", ops, "ADD") == "ADD"
    assert as_choice(None, ops, "ADD") == "ADD"
    assert as_choice(1, ops, "ADD") == "ADD"
    assert as_choice("Coding", ["chat", "working", "coding"], "chat") == "coding"


def test_as_str_list() -> None:
    assert as_str_list(None) == []
    assert as_str_list("a") == ["a"]
    messy = [" a ", "a", "", None, "b", {"x": 1}, 3, ["c", ["d"]]]
    assert as_str_list(messy) == ["a", "b", "3", "c", "d"]
    assert as_str_list(["a", "b", "c"], limit=2) == ["a", "b"]
    assert as_str_list(["a", "a", "b"], limit=2) == ["a", "b"]
    assert as_str_list(["a"], limit=0) == []


_anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary(),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3)
    | st.tuples(c, c) | st.frozensets(st.integers(), max_size=3),
    max_leaves=8,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_anything, st.floats(allow_nan=False, allow_infinity=False) | st.none())
def test_helpers_never_raise(value: Any, bound: float | None) -> None:
    assert isinstance(as_list(value), list)
    assert isinstance(as_str(value), str)
    result = as_float(value, 0.5, lo=bound, hi=None)
    assert math.isfinite(result)
    assert isinstance(as_choice(value, ("a", "b"), "a"), str)
    out = as_str_list(value, limit=3)
    assert len(out) <= 3 and len(set(out)) == len(out) and all(out)
    parse_json_object(value)
