"""File paths touched by a trace: tool-call argument keys and patch / diff headers."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from hy_memory_langgraph.messages.types import Msg

_PATH_KEYS: frozenset[str] = frozenset(
    {
        "path",
        "file_path",
        "filepath",
        "filename",
        "file",
        "notebook_path",
        "target_file",
        "source_path",
        "destination_path",
    }
)
_LIST_KEYS = frozenset({"paths"})
_MAX_DEPTH = 6
_MAX_PATH_LEN = 1024
_TRIVIAL = frozenset({".", "..", "/", "./", "~", "-"})

_PATCH_HEADER = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$", re.M)
_PATCH_MOVE = re.compile(r"^\*\*\* Move to: (.+?)\s*$", re.M)
_GIT_DIFF = re.compile(r"^diff --git (\"?a/.+?\"?) (\"?b/.+?\"?)\s*$", re.M)
# "--- x" immediately followed by "+++ y": a unified-diff file header pair
_UNIFIED = re.compile(r"^--- ([^\n]+)\n\+\+\+ ([^\n]+)$", re.M)


def files_from_tool_calls(msgs: Iterable[Msg]) -> list[str]:
    """List file paths from tool-call arguments and patch/diff text, first-seen order.

    Sources, in message order: the message content (patch / diff headers), then each
    tool call's arguments in key order (path keys give paths; any other string value is
    scanned for patch / diff headers). Nested objects and lists are walked.
    """
    seen: dict[str, None] = {}
    for m in msgs:
        for path in files_from_text(m.content):
            seen.setdefault(path, None)
        for call in m.tool_calls:
            for path in _from_value(call.arguments, None, 0):
                seen.setdefault(path, None)
    return list(seen)


def files_from_text(text: str) -> list[str]:
    """Paths named by apply_patch headers and unified / git diff headers in ``text``."""
    if not text or ("***" not in text and "---" not in text and "diff --git" not in text):
        return []
    hits: list[tuple[int, str]] = []
    for rx in (_PATCH_HEADER, _PATCH_MOVE):
        hits.extend((m.start(), m.group(1)) for m in rx.finditer(text))
    for rx in (_GIT_DIFF, _UNIFIED):
        for m in rx.finditer(text):
            hits.append((m.start(1), diff_path(m.group(1))))
            hits.append((m.start(2), diff_path(m.group(2))))
    hits.sort(key=lambda hit: hit[0])
    out: dict[str, None] = {}
    for _, path in hits:
        if path and path != "/dev/null" and _looks_like_path(path):
            out.setdefault(path, None)
    return list(out)


def diff_path(raw: str) -> str:
    """The file of a diff header's path (``a/`` or ``b/`` and a trailing tab part dropped)."""
    path = raw.split("\t", 1)[0].strip().strip('"')
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return path


def _looks_like_path(value: str) -> bool:
    v = value.strip()
    return (
        bool(v)
        and len(v) <= _MAX_PATH_LEN
        and "\n" not in v
        and "://" not in v
        and v not in _TRIVIAL
        and any(ch.isalnum() for ch in v)
    )


def _from_value(value: Any, key: str | None, depth: int) -> Iterator[str]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, str):
        if key in _PATH_KEYS:
            if _looks_like_path(value):
                yield value.strip()
        else:
            yield from files_from_text(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _from_value(v, k if isinstance(k, str) else None, depth + 1)
    elif isinstance(value, (list, tuple)):
        item_key = "path" if key in _LIST_KEYS else key
        for item in value:
            yield from _from_value(item, item_key, depth + 1)
