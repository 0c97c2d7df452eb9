"""Tolerant parsing of model output, and coercion helpers for the values found in it.

Models wrap JSON in prose or fenced blocks, emit Python-style dicts (single quotes,
``True/False/None``), trailing commas, smart quotes, ``//`` comments, bare keys, or stop
mid-object when they run out of tokens. :func:`parse_json_object` recovers what is usable and return ``None`` otherwise. Nothing in
this module raises, whatever the input; it never calls ``eval`` (``ast.literal_eval`` only,
on bounded input).

Example:
    >>> parse_json_object("Sure! ```json\\n{'task': 'deploy', 'ok': True,}\\n```")
    {'task': 'deploy', 'ok': True}
    >>> as_float("85%", 0.5, lo=0, hi=1)
    0.85
"""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

_MAX_CHARS = 200_000  # longer model output is cut before parsing
_MAX_STARTS = 16  # candidate opening brackets tried per text variant
_MAX_CUTS = 3  # cut-back points tried for output truncated mid-value
_MAX_TRUNCATED = 3  # truncated candidates decoded per text variant
_MAX_LITERAL_CHARS = 100_000  # ast.literal_eval only on slices up to this size
_FENCE = re.compile(r"```[ \t]*[\w+-]*[ \t]*\r?\n?(.*?)```", re.S)
_THINK = re.compile(r"\A\s*<think>.*?</think>", re.S | re.I)
_SMART = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'"})
_PY_WORDS = {"True": "true", "False": "false", "None": "null"}
_JSON_WORDS = {"true": "True", "false": "False", "null": "None"}
_CLOSE = {"{": "}", "[": "]"}
_STRUCT = re.compile(r"[\"'{}\[\],]")
_STRING_STOP = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_ESCAPE = re.compile(r"\\(.)", re.S)
_SQ_BODY = re.compile(r'\\(.)|"', re.S)
_PY_ESCAPES = frozenset("\\\n'\"abfnrtvxNuU01234567")
_JSON_ESCAPES = frozenset('"\\/bfnrtu')
_TOKEN = re.compile(
    r"""
      "(?:[^"\\]|\\.)*"                        # double-quoted string: escapes fixed
    | '(?:[^'\\]|\\.)*'                        # single-quoted string: re-quoted
    | //[^\n]*                                  # line comment: dropped
    | ,(?=\s*[}\]])                             # trailing comma: dropped
    | (?<![\w.])(?:True|False|None)(?![\w:])   # Python literal: JSON literal
    | (?<![\w.])[A-Za-z_]\w*(?=\s*:)           # bare key: quoted
    """,
    re.S | re.X,
)


def _variants(text: str) -> Iterator[str]:
    """Texts to search, most specific first: fenced blocks, the text, the raw text.

    A leading ``<think>…</think>`` block (reasoning models) is skipped unless nothing else
    is found.
    """
    text = text.lstrip("\ufeff")
    answer = _THINK.sub("", text, count=1)
    for block in _FENCE.findall(answer):
        if block.strip():
            yield block
    yield answer
    if answer != text:
        yield text


def _scan(text: str, start: int, budget: list[int]) -> tuple[list[str], bool] | None:
    """Slices to try for the bracket at ``start``; ``None`` once the work budget is spent.

    A balanced (or mismatched) slice is returned alone, with ``True`` (complete). When the
    text runs out first, the tail is closed as is, then cut back to each of the last few
    commas and closed (drops a dangling key or half value); these come with ``False``.
    """
    stack: list[str] = []
    commas: list[tuple[int, str]] = []
    quote = ""
    i, n = start, len(text)
    while i < n:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        match = _STRUCT.search(text, i)
        if match is None:
            break
        i = match.start()
        ch = text[i]
        if ch in "\"'":
            end = _string_end(text, i, budget)
            if end < 0:
                quote, i = ch, n
                break
            i = end
            continue
        if ch in "{[":
            stack.append(_CLOSE[ch])
        elif ch in "}]":
            if not stack or stack[-1] != ch:
                return [text[start : i + 1]], True
            stack.pop()
            if not stack:
                return [text[start : i + 1]], True
        else:
            commas.append((i, "".join(reversed(stack))))
            del commas[:-_MAX_CUTS]
        i += 1
    tail = (text[start:].rstrip() + quote).rstrip(",: \t\r\n") + "".join(reversed(stack))
    return [tail] + [text[start:pos] + closers for pos, closers in reversed(commas)], False


def _string_end(text: str, i: int, budget: list[int]) -> int:
    """Index just past the string whose quote is at ``i``; -1 when it never closes."""
    pattern = _STRING_STOP[text[i]]
    j = i + 1
    while budget[0] > 0:
        budget[0] -= 1
        match = pattern.search(text, j)
        if match is None:
            return -1
        if text[match.start()] == "\\":
            j = match.start() + 2
            continue
        return match.start() + 1
    return -1


def _requote(match: re.Match[str]) -> str:
    """One escape or bare double quote of a string body, made valid JSON."""
    char = match.group(1)
    if char is None:
        return '\\"'
    if char == "'":
        return "'"
    return match.group() if char in _JSON_ESCAPES else "\\\\" + char


def _fix_string(token: str) -> str:
    """A quoted string token (either quote) as a JSON string literal."""
    escapes = _ESCAPE.findall(token)
    if token[0] == '"' and all(c in _JSON_ESCAPES for c in escapes):
        return token
    if escapes and all(c in _PY_ESCAPES for c in escapes):
        try:  # Python escapes such as \x1f or \N{...}: decode the literal, a string only
            value = ast.literal_eval(token)
        except Exception:  # noqa: BLE001 - e.g. a malformed \u escape
            value = None
        if isinstance(value, str):
            return json.dumps(value, ensure_ascii=False)
    body = (_ESCAPE if token[0] == '"' else _SQ_BODY).sub(_requote, token[1:-1])
    return '"' + body + '"'


def _fix_token(match: re.Match[str]) -> str:
    token = match.group()
    first = token[0]
    if first in "\"'":
        return _fix_string(token)
    if first in "/,":
        return ""
    return _PY_WORDS.get(token) or json.dumps(token)


def _repair(src: str) -> str:
    """Rewrite JSON-ish text as JSON: quotes, literals, trailing commas, comments, bare keys."""
    return _TOKEN.sub(_fix_token, src)


def _literal(src: str) -> Any:
    """``ast.literal_eval`` (never ``eval``) on small slices without odd escapes, quietly."""
    if len(src) > _MAX_LITERAL_CHARS or any(c not in _PY_ESCAPES for c in _ESCAPE.findall(src)):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _jsonable(ast.literal_eval(src))
        except Exception:  # noqa: BLE001 - retry with JSON literals spelled the Python way
            py = re.sub(r"\b(true|false|null)\b", lambda m: _JSON_WORDS[m[1]], src)
            return _jsonable(ast.literal_eval(py))


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else str(k)): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bytes, complex)):
        return str(value)
    return value


def _decode(src: str) -> Any:
    """Parse one candidate slice, strict first, then repaired, then as a Python literal."""
    attempts = (
        lambda: json.loads(src),
        lambda: json.loads(_repair(src), strict=False),
        lambda: _literal(src),
    )
    for attempt in attempts:
        try:
            value = attempt()
        except Exception:  # noqa: BLE001 - anything a parser can throw means "not this way"
            continue
        if isinstance(value, (dict, list)):
            return value
    return None


_OPENER = re.compile(r"\{")


def _find(text: Any) -> Any:
    if isinstance(text, dict):
        return text
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if not isinstance(text, str) or not text:
        return None
    text = text[:_MAX_CHARS]
    for variant in _variants(text):
        smart = variant.translate(_SMART)
        for candidate in (variant, smart) if smart != variant else (variant,):
            value = _first_in(candidate)
            if value is not None:
                return value
    return None


def _first_in(text: str) -> Any:
    """The first object that decodes at a ``{``.

    A non-empty value cut off by the end of the text is closed and returned when it decodes:
    it contains any complete value that starts after it.
    """
    budget = [2 * len(text) + 1000]
    truncated = 0
    for starts, match in enumerate(_OPENER.finditer(text)):
        if starts >= _MAX_STARTS:
            break
        scanned = _scan(text, match.start(), budget)
        if scanned is None:
            break
        slices, complete = scanned
        if not complete:
            truncated += 1
            if truncated > _MAX_TRUNCATED:
                continue
        for chunk in slices:
            value = _decode(chunk)
            if isinstance(value, dict) and (value or complete):
                return value
    return None


def parse_json_object(text: Any) -> dict[str, Any] | None:
    """The first JSON object (``dict``) in model output, or ``None``.

    Tolerates fenced blocks, surrounding prose, single quotes, ``True/False/None``, trailing
    commas, smart quotes, ``//`` comments, bare keys and output cut off mid-object (closed
    and returned when what remains decodes).
    """
    try:
        value = _find(text)
    except Exception:  # noqa: BLE001 - never raise on model output
        return None
    return _valid_unicode(value) if isinstance(value, dict) else None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_unicode(value: Any) -> Any:
    """``value`` with lone surrogates in keys and strings replaced by U+FFFD (such text
    cannot be stored or embedded; a model may still produce it)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_valid_unicode(k): _valid_unicode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_valid_unicode(v) for v in value]
    return value


def as_list(value: Any) -> list[Any]:
    """``None`` -> ``[]``; list/tuple/set -> list; anything else (str, dict...) -> ``[value]``."""
    if value is None:
        return []
    if isinstance(value, list):
        return list(value)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, (set, frozenset)):
        try:
            return sorted(value)
        except TypeError:
            return list(value)
    return [value]


def as_str(value: Any, default: str = "") -> str:
    """A stripped string; ``default`` for ``None`` or blank. Containers become compact JSON."""
    try:
        if value is None:
            return default
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, str):
            text = value
        elif isinstance(value, (dict, list, tuple)):
            text = json.dumps(value, ensure_ascii=False, default=str)
        elif isinstance(value, (bytes, bytearray)):
            text = bytes(value).decode("utf-8", "replace")
        else:
            text = str(value)
        text = text.strip()
        return text or default
    except Exception:  # noqa: BLE001
        return default


def as_float(
    value: Any, default: float, *, lo: float | None = None, hi: float | None = None
) -> float:
    """A finite float from a number or numeric string (``"0.8"``, ``"85%"``), clamped to [lo, hi].

    ``default`` (returned as given) when the value is missing or not a finite number.
    """
    try:
        if isinstance(value, str):
            text = value.strip().rstrip(".")
            number = float(text[:-1]) / 100.0 if text.endswith("%") else float(text)
        elif isinstance(value, (int, float)):
            number = float(value)
        else:
            return default
    except (ValueError, OverflowError):
        return default
    if not math.isfinite(number):
        return default
    if lo is not None and number < lo:
        number = float(lo)
    if hi is not None and number > hi:
        number = float(hi)
    return number


def as_choice(value: Any, choices: Iterable[str], default: str) -> str:
    """The member of ``choices`` equal to ``value`` ignoring case, quotes and edge punctuation.

    Returns the choice as spelled in ``choices``, else ``default``.
    """
    if not isinstance(value, str):
        return default
    key = value.strip().strip("\"'`.,;:!*()[] \t\r\n").casefold()
    for choice in choices:
        if isinstance(choice, str) and choice.casefold() == key:
            return choice
    return default


def as_str_list(value: Any, limit: int | None = None) -> list[str]:
    """Strings from a scalar or (nested) list: stripped, blanks and dicts dropped, deduplicated.

    Args:
        value: ``None``, a string, a number or a list of those (nested lists are flattened).
        limit: Keep at most this many (``None``: all).
    """
    if limit is not None and limit <= 0:
        return []
    out: list[str] = []
    seen: set[str] = set()
    for item in _flatten(value, 0):
        text = as_str(item)
        if text and text not in seen:
            seen.add(text)
            out.append(text)
            if limit is not None and len(out) >= limit:
                break
    return out


def _flatten(value: Any, depth: int) -> Iterator[Any]:
    for item in as_list(value):
        if isinstance(item, (list, tuple, set, frozenset)):
            if depth < 8:
                yield from _flatten(item, depth + 1)
        elif not isinstance(item, dict):
            yield item
