"""Code edits carried by a trace, as hunks on (file, symbol) threads. Zero LLM.

Sources, in message order:

* tool-call ARGUMENTS:
  ``file_path/old_string/new_string`` (Claude Code Edit; ``edits: [{old_string,
  new_string}]`` for MultiEdit), ``path/old_str/new_str`` (``str_replace_editor``;
  its ``create`` command with ``file_text`` is a whole-file write, ``insert`` with
  ``new_str`` an addition), whole-file writes (a path key plus ``content`` /
  ``contents`` / ``file_text``), and any string argument holding an ``apply_patch``
  envelope or a unified diff (``apply_patch``'s ``input``/``patch``, a shell
  ``command`` list, …);
* unified diffs (``diff --git`` / ``--- a/ +++ b/`` + ``@@``) in message text: user and
  assistant text, and tool results (except history reads: ``git log``/``git show``…).

An edit whose tool RESULT reports failure (``Msg.is_error``, or result text that
plainly says error / failed / not found / no match) is dropped. Identical hunks found
twice in one write (a diff echoed by a tool, a pasted patch then applied) count once.

``asked`` of an edit is the last user message at or before it in the trace.

Example:
    >>> from hy_memory_langgraph.messages.normalize import normalize_messages
    >>> msgs = normalize_messages([{"role": "user", "content": "rename"}, {"role": "assistant",
    ...     "content": "", "tool_calls": [{"id": "1", "type": "function", "function": {
    ...     "name": "Edit", "arguments": '{"file_path": "a.py", "old_string": "x = 1",'
    ...     ' "new_string": "y = 1"}'}}]}])
    >>> [(e.file, e.symbol, e.removed, e.added, e.asked) for e in extract_edits(msgs)]
    [('a.py', '<file>', ('x = 1',), ('y = 1',), 'rename')]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from hy_memory_langgraph.chain.diffs import (
    FilePatch,
    RawHunk,
    diff_lines,
    parse_patches,
)
from hy_memory_langgraph.chain.symbols import FILE_SYMBOL, split_hunk
from hy_memory_langgraph.messages.types import Msg, ToolCall

#: Thread file key → the file's current lines, or ``None`` (full-text symbol location).
FileReader = Callable[[str], "list[str] | None"]

_PATH_ARG_KEYS: Final = ("file_path", "path", "target_file", "filepath", "filename", "file")
_CONTENT_KEYS: Final = ("content", "contents", "file_text")
_READ_ONLY: Final = frozenset({"read", "view", "search", "grep", "find", "glob", "list", "ls",
                               "cat", "open", "fetch", "get", "query", "lookup"})
_HISTORY_READ: Final = re.compile(r"\bgit\s+(?:log|show|blame|reflog|format-patch|stash\s+show)\b")
_FAIL_START: Final = re.compile(
    r"(?i)^\W*(?:<tool_use_error>|error\b|errors?:|failed\b|failure\b|fatal\b|exception\b|"
    r"traceback\b|patch (?:failed|rejected)|cannot\b|can't\b|could not\b|unable to\b)")
_FAIL_ANY: Final = re.compile(
    r"(?i)(no replacement|did not appear|not found|verification failed|failed to find|"
    r"no match|did not match|does not match|doesn't match|failed to apply|"
    r"no such file|does not exist|could not find|unable to apply|invalid patch|"
    r"is not unique|found \d+ matches|multiple matches|patch failed|hunk #?\d* ?failed|"
    r"未找到|找不到|失败|不存在)")
_FAIL_SCAN_CHARS: Final = 400
_MAX_STORED_LINES: Final = 400


@dataclass(frozen=True)
class Edit:
    """One hunk piece of one write on one (file, symbol) thread."""

    file: str
    symbol: str
    removed: tuple[str, ...]
    added: tuple[str, ...]
    source: str  # "edit" | "write" | "patch" | "diff" | "git"
    position: int  # index of the message carrying it (ordering, asked)
    asked: str = ""

    @property
    def key(self) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
        return (self.file, self.removed, self.added)


def normalize_path(path: str, root: str | None = None) -> str:
    """Thread file key: ``a/``/``b/``/``./`` prefixes dropped, made relative to ``root``
    when inside it, ``\\`` → ``/``."""
    p = path.strip().strip('"').replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    if root:
        r = root.rstrip("/") + "/"
        p = p.removeprefix(r)
    return p


def result_failed(result: Msg | None) -> bool:
    """Whether a tool result reports failure (flag, or plainly failing text)."""
    if result is None:
        return False
    if result.is_error:
        return True
    head = result.content.strip()[:_FAIL_SCAN_CHARS]
    if not head:
        return False
    first = head.splitlines()[0]
    return bool(_FAIL_START.search(head) or _FAIL_ANY.search(first))


def _read_only(tool: str) -> bool:
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", tool).lower()
    return any(w in _READ_ONLY for w in re.split(r"[^a-z0-9]+", words))


def _results_by_call(msgs: Sequence[Msg]) -> dict[tuple[int, int], Msg]:
    """``(message index, call index)`` → the tool result answering that call."""
    by_id: dict[str, Msg] = {}
    loose: list[tuple[int, Msg]] = []
    for i, m in enumerate(msgs):
        if m.role == "tool":
            if m.tool_call_id:
                by_id.setdefault(m.tool_call_id, m)
            else:
                loose.append((i, m))
    out: dict[tuple[int, int], Msg] = {}
    used: set[int] = set()
    for i, m in enumerate(msgs):
        for j, call in enumerate(m.tool_calls):
            if call.id and call.id in by_id:
                out[(i, j)] = by_id[call.id]
                continue
            for k, (pos, res) in enumerate(loose):  # id-less results: next one, same name
                if k not in used and pos > i and (not res.name or res.name == call.name):
                    used.add(k)
                    out[(i, j)] = res
                    break
    return out


def _text_lines(value: str) -> list[str]:
    return value.splitlines()


def _pieces(file: str, hunks: list[RawHunk], source: str, position: int,
            read: FileReader | None, root: str | None) -> Iterator[Edit]:
    name = normalize_path(file, root)
    full = read(name) if read else None
    for hunk in hunks:
        prefix = _locate_prefix(full, hunk) if full is not None else ()
        for symbol, removed, added in split_hunk(hunk, prefix=prefix):
            if removed or added:
                yield Edit(name, symbol, tuple(removed[:_MAX_STORED_LINES]),
                           tuple(added[:_MAX_STORED_LINES]), source, position)


def _locate_prefix(full: list[str], hunk: RawHunk) -> list[str]:
    """File lines before the hunk, found by its new-side text in the current file."""
    new_side = [t for tag, t in hunk.lines if tag != "-"]
    if not new_side:
        return []
    n = len(new_side)
    for start in range(len(full) - n + 1):
        if full[start:start + n] == new_side:
            return full[:start]
    return []


def _whole_file(file: str, text: str, position: int, root: str | None,
                source: str = "write") -> Edit:
    return Edit(normalize_path(file, root), FILE_SYMBOL, (),
                tuple(_text_lines(text)[:_MAX_STORED_LINES]), source, position)


def _path_of(args: dict[str, Any]) -> str | None:
    for key in _PATH_ARG_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip() and "\n" not in value:
            return value.strip()
    return None


def _replacements(args: dict[str, Any]) -> list[tuple[str, str]] | None:
    """``(old, new)`` pairs of a replacement call, ``None`` when it is not one."""
    pairs: list[tuple[str, str]] = []
    for old_key, new_key in (("old_string", "new_string"), ("old_str", "new_str")):
        old, new = args.get(old_key), args.get(new_key)
        if isinstance(old, str) and isinstance(new, str):
            pairs.append((old, new))
    edits = args.get("edits")
    if isinstance(edits, list):
        for item in edits:
            if isinstance(item, dict):
                found = _replacements(item)
                pairs.extend(found or [])
    if not pairs and args.get("command") == "insert" and isinstance(args.get("new_str"), str):
        pairs.append(("", args["new_str"]))
    return pairs or None


def _strings(value: Any, depth: int = 0) -> Iterator[str]:
    if depth > 6:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v, depth + 1)


def _call_edits(call: ToolCall, position: int, read: FileReader | None,
                root: str | None) -> list[Edit]:
    args = call.arguments if isinstance(call.arguments, dict) else {}
    path = _path_of(args)
    pairs = _replacements(args) if path else None
    if path and pairs is not None:
        out: list[Edit] = []
        for old, new in pairs:
            if old == new:
                continue
            out.extend(_pieces(path, diff_lines(_text_lines(old), _text_lines(new)), "edit",
                               position, read, root))
        return out
    if path and not _read_only(call.name):
        for key in _CONTENT_KEYS:
            text = args.get(key)
            if isinstance(text, str):
                source = "append" if "append" in call.name.lower() else "write"
                return [_whole_file(path, text, position, root, source)]
    out = []
    for text in _strings(args):
        out.extend(_from_patches(parse_patches(text), "patch", position, read, root))
    return out


def _from_patches(patches: list[FilePatch], source: str, position: int,
                  read: FileReader | None, root: str | None) -> list[Edit]:
    out: list[Edit] = []
    for patch in patches:
        if patch.whole and all(tag == "+" for h in patch.hunks for tag, _ in h.lines):
            text = "\n".join(t for h in patch.hunks for _, t in h.lines)
            out.append(_whole_file(patch.file, text, position, root, "write"))
            continue
        out.extend(_pieces(patch.file, patch.hunks, source, position, read, root))
    return out


def _command_text(call: ToolCall) -> str:
    return " ".join(_strings(call.arguments)) or call.raw_arguments


def extract_edits(msgs: Sequence[Msg], *, read: FileReader | None = None,
                  root: str | None = None) -> list[Edit]:
    """Every edit of the trace, in order, failed calls dropped, duplicates merged.

    Args:
        msgs: The messages of one write.
        read: Optional reader of a file's current lines (thread file key → lines), used
            to name the enclosing function from the full file text.
        root: Repository root; absolute paths inside it become relative.
    """
    results = _results_by_call(msgs)
    history_reads = {id(res) for (i, j), res in results.items()
                     if _HISTORY_READ.search(_command_text(msgs[i].tool_calls[j]))}
    edits: list[Edit] = []
    asked = ""
    for i, m in enumerate(msgs):
        if m.role == "user" and m.content.strip():
            asked = m.content.strip()
        found: list[Edit] = []
        if m.role != "tool" or id(m) not in history_reads:
            found.extend(_from_patches(parse_patches(m.content), "diff", i, read, root))
        for j, call in enumerate(m.tool_calls):
            if result_failed(results.get((i, j))):
                continue
            found.extend(_call_edits(call, i, read, root))
        edits.extend(replace(e, asked=asked) for e in found)
    return dedupe(edits)


def dedupe(edits: list[Edit]) -> list[Edit]:
    """Drop repeats of the same (file, removed, added); keep the most specific symbol."""
    kept: dict[tuple[str, tuple[str, ...], tuple[str, ...]], Edit] = {}
    for edit in edits:
        seen = kept.get(edit.key)
        if seen is None:
            kept[edit.key] = edit
        elif seen.symbol == FILE_SYMBOL and edit.symbol != FILE_SYMBOL:
            kept[edit.key] = replace(seen, symbol=edit.symbol)
    return list(kept.values())
