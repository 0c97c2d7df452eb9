"""Which function / class a hunk belongs to (the thread's ``symbol``).

For each change group of a hunk the *anchor* is its first non-blank changed line. The
symbol is, in order:

1. the anchor itself when it is a definition line (``def``, ``class``, ``function``,
   ``func``, ``fn``, …: a signature change, a new function);
2. the nearest preceding definition line whose indentation is smaller than the
   anchor's (walking back over the context / new-side lines before it, or over the
   full file text when it is known); a non-definition line at column 0 in between
   (module code, ``if __name__ …``) means the anchor is not in a function;
3. the hunk header's function context (``@@ … @@ def foo(``) when the anchor is
   indented;
4. :data:`FILE_SYMBOL` (``"<file>"``): the file as a whole.

Only the innermost name is kept (``bar``, not ``Foo.bar``) so every source names a
method the same way.

Example:
    >>> symbol_at(["class A:", "    def run(self):", "        return 1"], 2)
    'run'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from hy_memory_langgraph.chain.diffs import RawHunk

FILE_SYMBOL: Final = "<file>"
_MODIFIERS: Final = (r"(?:(?:export|default|public|private|protected|internal|static|async|"
                     r"override|abstract|final|sealed|open|pub(?:\([^)]*\))?|unsafe|extern|"
                     r"inline|virtual|const|suspend|data)\s+)*")
_DEF: Final = re.compile(
    r"^\s*" + _MODIFIERS
    + r"(?:def|class|function\*?|func|fn|fun|interface|struct|trait|enum|module|impl)\s+"
    r"(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)")
_CALL_LIKE: Final = re.compile(r"([A-Za-z_$][\w$]*)\s*\(")
_COMMENT: Final = ("#", "//", "/*", "*", "--", '"""', "'''")


def _definition_name(line: str) -> str | None:
    """The name defined by ``line`` (``def foo(`` → ``foo``), else ``None``."""
    match = _DEF.match(line)
    return match.group(1) if match else None


def _header_symbol(header: str) -> str | None:
    """The name in a hunk header's function context (``int main(void)`` → ``main``)."""
    text = header.strip()
    if not text:
        return None
    name = _definition_name(text)
    if name:
        return name
    call = _CALL_LIKE.search(text)
    return call.group(1) if call else None


def _indent(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip())


def _enclosing(before: Sequence[str], anchor: str) -> str | None:
    """Walk back from the anchor: the nearest less-indented definition, else ``None``."""
    name = _definition_name(anchor)
    if name:
        return name
    threshold = _indent(anchor)
    if threshold == 0:
        return None
    for line in reversed(before):
        stripped = line.strip()
        if not stripped or stripped.startswith((*_COMMENT, "@")):
            continue
        ind = _indent(line)
        if ind >= threshold:
            continue
        name = _definition_name(line)
        if name:
            return name
        if ind == 0:
            return FILE_SYMBOL
        threshold = ind
    return None


def symbol_at(lines: Sequence[str], index: int) -> str:
    """Symbol of ``lines[index]`` given the full text ``lines`` (see module doc)."""
    if not 0 <= index < len(lines):
        return FILE_SYMBOL
    return _enclosing(lines[:index], lines[index]) or FILE_SYMBOL


def split_hunk(hunk: RawHunk, *, prefix: Sequence[str] = ()) -> list[tuple[str, list[str], list[str]]]:
    """``(symbol, removed, added)`` pieces of a hunk, one per run of same-symbol groups.

    ``prefix`` is the file text before the hunk when known (full-text location).
    """
    pieces: list[tuple[str, list[str], list[str]]] = []
    before: list[str] = list(prefix)
    i, lines = 0, hunk.lines
    while i < len(lines):
        tag, text = lines[i]
        if tag == " ":
            before.append(text)
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j][0] != " ":
            j += 1
        group = lines[i:j]
        removed = [t for g, t in group if g == "-"]
        added = [t for g, t in group if g == "+"]
        anchor = next((t for _, t in group if t.strip()), group[0][1])
        symbol = _enclosing(before, anchor)
        if symbol is None:
            fallback = _header_symbol(hunk.header) if _indent(anchor) > 0 else None
            symbol = fallback or FILE_SYMBOL
        if pieces and pieces[-1][0] == symbol:
            pieces[-1][1].extend(removed)
            pieces[-1][2].extend(added)
        else:
            pieces.append((symbol, removed, added))
        before.extend(added)
        i = j
    return pieces
