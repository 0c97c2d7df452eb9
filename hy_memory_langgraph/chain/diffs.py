"""Patch text → hunks: unified / git diffs, ``apply_patch`` envelopes, line diffs.

Pure functions, no I/O. A :class:`RawHunk` keeps its lines tagged ``" "`` (context),
``"-"`` (removed) or ``"+"`` (added), plus the hunk-header text after ``@@ … @@``
(git's function context, or the ``@@ def foo`` line of an ``apply_patch`` hunk), which
:mod:`hy_memory_langgraph.chain.symbols` uses to name the enclosing function.

Example:
    >>> patch = parse_unified_diff("--- a/x.py\\n+++ b/x.py\\n@@ -1 +1 @@ def f():\\n-a\\n+b\\n")
    >>> patch[0].file, patch[0].hunks[0].header, patch[0].hunks[0].lines
    ('x.py', 'def f():', [('-', 'a'), ('+', 'b')])
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Final

from hy_memory_langgraph.messages.files import diff_path

_HUNK: Final = re.compile(r"^@@+ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@+ ?(.*)$")
_GIT: Final = re.compile(r'^diff --git ("?a/.+?"?) ("?b/.+?"?)\s*$')
_PATCH_FILE: Final = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+?)\s*$")
_PATCH_MOVE: Final = re.compile(r"^\*\*\* Move to: (.+?)\s*$")
_MAX_LINES: Final = 20_000


@dataclass
class RawHunk:
    """One hunk: header context text and tagged lines (``" "``, ``"-"``, ``"+"``)."""

    header: str = ""
    lines: list[tuple[str, str]] = field(default_factory=list)
    new_start: int = 0  # index of the first new-side line (diff_lines only)

    @property
    def changed(self) -> bool:
        return any(tag != " " for tag, _ in self.lines)


@dataclass
class FilePatch:
    """The hunks of one file. ``whole`` marks a file added in full (no old text)."""

    file: str
    hunks: list[RawHunk] = field(default_factory=list)
    whole: bool = False


def _looks_like_patch(text: str) -> bool:
    """Cheap test: does ``text`` hold a unified diff or an ``apply_patch`` envelope?"""
    if not text:
        return False
    return ("@@" in text and "+++ " in text) or "*** Update File:" in text or (
        "*** Add File:" in text)


def parse_unified_diff(text: str) -> list[FilePatch]:
    """Every file section of unified (or ``git diff``) text, with their hunks.

    Hunk bodies are read by the line counts of their ``@@`` header (an empty line
    inside a hunk counts as blank context, as chat UIs strip trailing spaces); a
    line that cannot belong to a hunk ends it early. Sections without a file name
    (bare ``@@`` hunks) are skipped: they cannot be attributed.
    """
    out: list[FilePatch] = []
    lines = text.splitlines()[:_MAX_LINES]
    current: FilePatch | None = None
    git_path: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        git = _GIT.match(line)
        if git:
            git_path = diff_path(git.group(2))
            current = None
            i += 1
            continue
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old, new = diff_path(line[4:]), diff_path(lines[i + 1][4:])
            name = new if new != "/dev/null" else old
            if name == "/dev/null" and git_path:
                name = git_path
            current = FilePatch(name, whole=old == "/dev/null")
            if name and name != "/dev/null":
                out.append(current)
            git_path = None
            i += 2
            continue
        match = _HUNK.match(line)
        if match and current is not None:
            hunk, i = _read_hunk(lines, i + 1, match)
            if hunk.changed:
                current.hunks.append(hunk)
            continue
        i += 1
    return [p for p in out if p.hunks]


def _read_hunk(lines: list[str], i: int, match: re.Match[str]) -> tuple[RawHunk, int]:
    old_left = int(match.group(2)) if match.group(2) is not None else 1
    new_left = int(match.group(4)) if match.group(4) is not None else 1
    hunk = RawHunk(header=match.group(5).strip())
    while i < len(lines) and (old_left > 0 or new_left > 0):
        line = lines[i]
        if line.startswith("\\"):  # "\ No newline at end of file"
            i += 1
            continue
        tag = line[:1] if line else " "
        if tag == "-" and old_left > 0:
            old_left -= 1
        elif tag == "+" and new_left > 0:
            new_left -= 1
        elif tag == " " and old_left > 0 and new_left > 0:
            old_left -= 1
            new_left -= 1
        else:
            break
        hunk.lines.append((tag, line[1:]))
        i += 1
    while i < len(lines) and lines[i].startswith("\\"):
        i += 1
    return hunk, i


def parse_apply_patch(text: str) -> list[FilePatch]:
    """The files of an ``*** Begin Patch`` envelope (Update and Add sections).

    ``@@`` lines start a hunk; their text (``@@ def foo():``) is the hunk header (the
    last of consecutive ``@@`` lines wins: the innermost scope). Delete sections carry
    no lines and are skipped; ``*** Move to:`` renames the file of the section.
    """
    out: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: RawHunk | None = None
    for line in text.splitlines()[:_MAX_LINES]:
        head = _PATCH_FILE.match(line)
        if head:
            kind, name = head.groups()
            current = FilePatch(name.strip(), whole=kind == "Add") if kind != "Delete" else None
            hunk = RawHunk() if current is not None else None
            if current is not None and hunk is not None:
                current.hunks.append(hunk)
                out.append(current)
            continue
        if current is None or hunk is None:
            continue
        move = _PATCH_MOVE.match(line)
        if move:
            current.file = move.group(1).strip()
            continue
        if line.startswith("***"):  # End Patch / End of File
            if line.startswith("*** End Patch"):
                current, hunk = None, None
            continue
        if line.startswith("@@"):
            if hunk.changed:
                hunk = RawHunk()
                current.hunks.append(hunk)
            hunk.header = line[2:].strip().strip("@").strip()
            continue
        tag = line[:1] if line else " "
        if tag in (" ", "-", "+"):
            hunk.lines.append((tag, line[1:]))
    for patch in out:
        patch.hunks = [h for h in patch.hunks if h.changed]
    return [p for p in out if p.hunks]


def parse_patches(text: str) -> list[FilePatch]:
    """``apply_patch`` envelopes and unified diffs found in ``text`` (either kind)."""
    if not _looks_like_patch(text):
        return []
    if "*** Begin Patch" in text or "*** Update File:" in text or "*** Add File:" in text:
        found = parse_apply_patch(text)
        if found:
            return found
    return parse_unified_diff(text)


def diff_lines(old: list[str], new: list[str], context: int = 3) -> list[RawHunk]:
    """Hunks turning ``old`` into ``new`` (difflib groups, ``context`` lines around)."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    hunks: list[RawHunk] = []
    for group in matcher.get_grouped_opcodes(context):
        hunk = RawHunk(new_start=group[0][3])
        for op, i1, i2, j1, j2 in group:
            if op == "equal":
                hunk.lines.extend((" ", line) for line in old[i1:i2])
                continue
            hunk.lines.extend(("-", line) for line in old[i1:i2])
            hunk.lines.extend(("+", line) for line in new[j1:j2])
        if hunk.changed:
            hunks.append(hunk)
    return hunks
