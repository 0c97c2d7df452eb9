"""Secrets in indented blocks of configuration text (YAML and its kin).

Structured data is judged by its names (:mod:`.values`), but a configuration pasted as text
is only text. Two blocks hold secrets whatever their members are called:

* a block under a group of secrets (``secrets:``, ``credentials:``, ``creds:``,
  ``passwords:``): each member's value, except members whose names say they are none
  (``username``, ``host``, ``expires_in``; :func:`~.rules.describes_member`);
* the ``data:`` and ``stringData:`` blocks of a Kubernetes Secret (a text that says
  ``kind: Secret``): each value, base64 or plain.

A member's value is its scalar after ``key:``, quotes excluded, or the lines of a block
scalar (``key: |``). References are not values (``${STRIPE_KEY}``, ``{{ .Values.key }}``,
``!vault``), nor are empty or null ones.

Example:
    >>> text = "secrets:\\n  stripe: sk9Xq2Lm7Pw4\\n  host: db.local\\n"
    >>> [text[s:e] for s, e, _ in block_spans(text)]
    ['sk9Xq2Lm7Pw4']
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from hy_memory_langgraph.redact.rules import GROUP_WORDS, describes_member

Span = tuple[int, int, str]

#: The header of a block of secrets, alone on its line.
_GROUP_HEADER: Final = re.compile(r"(?im)^(?P<indent>[ \t]*)-?[ \t]*(?:[\w.-]*[_.-])?"
                                  r"(?:" + "|".join(GROUP_WORDS) + r")[ \t]*:[ \t]*$")
_SECRET_KIND: Final = re.compile(r"(?m)^[ \t]*kind[ \t]*:[ \t]*[\"']?Secret[\"']?[ \t]*$")
_DATA_HEADER: Final = re.compile(r"(?m)^(?P<indent>[ \t]*)(?:data|stringData)[ \t]*:[ \t]*$")
#: A member line: its indentation, name and value.
_MEMBER: Final = re.compile(r"(?P<indent>[ \t]*)(?P<name>[\"']?[\w.-]{1,80}[\"']?)[ \t]*:"
                            r"(?:[ \t]+(?P<value>.*?))?[ \t]*$")
_BLOCK_SCALAR: Final = re.compile(r"[|>][+-]?\d?")
_REFERENCE: Final = re.compile(r"^(?:\$\{|\{\{|!|\[REDACTED:|<)|^(?:null|~|none|true|false)$", re.IGNORECASE)
#: Words one of which a text must hold (case-folded) before it is read for blocks.
_HINTS: Final = (*GROUP_WORDS, "kind: secret", "kind:secret")
_KIND: Final = "secret_value"


def may_hold_blocks(folded: str) -> bool:
    """Whether a case-folded text can hold a block of secrets (a cheap test first)."""
    return ":" in folded and any(hint in folded for hint in _HINTS)


def block_spans(text: str) -> list[Span]:
    """``(start, end, "secret_value")`` of each member value in the text's blocks of secrets."""
    headers = [(m, True) for m in _GROUP_HEADER.finditer(text)]
    if _SECRET_KIND.search(text):  # a Secret's data: every value (base64 tells nothing)
        headers += [(m, m.group().strip().startswith("stringData")) for m in _DATA_HEADER.finditer(text)]
    spans: list[Span] = []
    covered = 0  # a header inside a block already read is not read again (linear time)
    for header, judged in sorted(headers, key=lambda h: h[0].start()):
        if header.start() >= covered:
            covered = _members(text, header.end() + 1, len(header.group("indent").expandtabs()), judged, spans)
    return spans


def _lines(text: str, pos: int) -> Iterator[tuple[int, int, str, int]]:
    """``(start, end, line, indent)`` of each line of ``text`` from ``pos`` on."""
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line = text[pos:end]
        yield pos, end, line, len(line) - len(line.lstrip(" \t"))
        pos = end + 1


def _members(text: str, pos: int, outer: int, judged: bool, spans: list[Span]) -> int:
    """Add the values of the block's direct members, from ``pos`` (the line after the
    header) until a line indented no deeper than the header, to ``spans``; with ``judged``,
    not those whose names say they are no secret. Returns where the block ends."""
    depth: int | None = None
    skip_to = pos
    for start, end, line, indent in _lines(text, pos):
        if start < skip_to or not line.strip():
            continue
        if len(line[:indent].expandtabs()) <= outer:
            return start
        depth = indent if depth is None else depth
        member = _MEMBER.fullmatch(line) if indent == depth else None
        if member is not None and not (judged and describes_member(member.group("name").strip("\"'"))):
            skip_to = _member(text, start, end, member, spans)
    return len(text)


def _member(text: str, pos: int, end: int, member: re.Match[str], spans: list[Span]) -> int:
    """Add one member's value to ``spans``; where the next line to read starts."""
    value = member.group("value") or ""
    if not value:
        return end + 1
    start = pos + member.start("value")
    if _BLOCK_SCALAR.fullmatch(value):  # key: | and the deeper lines after it
        return _block_scalar(text, end + 1, member.end("indent"), spans)
    quoted = value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1
    inner = value[1:-1] if quoted else value.split(" #", 1)[0].rstrip()
    if inner and not _REFERENCE.search(inner):
        offset = start + (1 if quoted else 0)
        spans.append((offset, offset + len(inner), _KIND))
    return end + 1


def _block_scalar(text: str, first: int, indent: int, spans: list[Span]) -> int:
    """Add the lines of a block scalar (deeper than ``indent``, from ``first``) as one span,
    from their first character to their last; where the next line to read starts."""
    stop = next((start for start, _, line, deeper in _lines(text, first) if line.strip() and deeper <= indent),
                len(text))
    body = text[first:stop]
    if body.strip():
        spans.append((first + len(body) - len(body.lstrip()), first + len(body.rstrip()), _KIND))
    return max(stop, first)
