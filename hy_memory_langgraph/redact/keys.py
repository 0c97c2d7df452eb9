"""Private key blocks, whole or in pieces, drawn with any dash, or base64-encoded.

A PEM private key is a ``BEGIN … PRIVATE KEY`` line, a base64 body and an ``END`` line.
People paste them as they find them, so the block is recognised by its structure, not by
one spelling:

* the marker lines drawn with any dash-like character (``-``, en and em dashes, the minus
  sign, box drawing, full-width and small hyphen-minus, …), three or more, in any case,
  with spaces or without (``–––––BEGIN RSA PRIVATE KEY–––––``);
* a ``BEGIN`` line and the body after it, up to the ``END`` line or, when the key was split
  over two messages, up to the body's last line (the text after it stays);
* an ``END`` line and the body lines right before it (the second half of a split key);
* a key encoded once more in base64 (``LS0tLS1CRUdJTi…``, as Kubernetes secrets and
  environment variables hold them), when its decoded start names a private key.

A marker with no body (``paste the -----BEGIN PRIVATE KEY----- block here``), certificates
and public keys stay. Body lines are runs of base64 of 16 characters or more (a short
padded last line too), also separated by escaped line breaks (``\\n`` in JSON).

Example:
    >>> text = "key:\\n–––––BEGIN EC PRIVATE KEY–––––\\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBn\\nthanks"
    >>> [text[s:e][-8:] for s, e, _ in private_key_blocks(text)]
    ['xZpYRTBn']
    >>> private_key_blocks("paste the -----BEGIN PRIVATE KEY----- block into the field")
    []
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

KIND: Final = "private_key"
#: Characters that draw a marker line's dashes.
_DASH: Final = "[-\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u2500\u2501\u2796\u02d7\ufe58\ufe63\uff0d\u23af]"
_MARKER: Final = re.compile(
    _DASH + r"{3,}[ \t]*(?P<edge>BEGIN|END)[ \t]+(?:[A-Z0-9]{1,12}[ \t]+){0,4}PRIVATE[ \t]+KEY(?:[ \t]+BLOCK)?[ \t]*"
    + _DASH + "{3,}", re.IGNORECASE)
#: What separates body lines: line breaks, spaces, escaped line breaks of JSON text.
_SEPARATOR: Final = re.compile(r"(?:\s|\\[rn])*")
#: A header line of an encrypted or PGP key (``Proc-Type: 4,ENCRYPTED``, ``Comment: …``).
_HEADER: Final = re.compile(r"[A-Za-z][A-Za-z-]{1,30}:[^\n\\]{0,200}")
#: A chunk of body: 16 or more base64 characters, a short padded end, a PGP checksum.
_CHUNK: Final = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}|[A-Za-z0-9+/]{1,15}={1,2}|=[A-Za-z0-9+/]{4}")
_LONG_CHUNK: Final = re.compile(r"[A-Za-z0-9+/]{16,}")
#: A line of body (seen from its end: the second half of a split key).
_BODY_LINE: Final = re.compile(r"[ \t]*(?:[A-Za-z0-9+/]{4,}={0,2}|=[A-Za-z0-9+/]{4})[ \t]*")
_LINE_BREAK: Final = re.compile(r"\r?\n|\\r?\\n")
#: A key encoded again in base64: ``-----BEGIN`` encodes as ``LS0tLS1CRUdJTi``.
_ENCODED: Final = re.compile(r"(?<![A-Za-z0-9+/])LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}"
                            r"(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/]{16,}={0,2})*")


def may_hold_keys(text: str, folded: str) -> bool:
    """Whether ``text`` (``folded``: its ASCII letters in lower case) can hold a key block."""
    return "private" in folded or "LS0tLS1CRUdJTi" in text


def private_key_blocks(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, "private_key")`` of each private key block or piece in ``text``."""
    found: list[tuple[int, int, str]] = []
    markers = list(_MARKER.finditer(text))
    floor = 0  # where the last marker or block ended: each stretch of text is read once
    for i, marker in enumerate(markers):
        if marker.start() < floor:
            continue
        if marker.group("edge").upper() == "BEGIN":
            closing = markers[i + 1] if i + 1 < len(markers) else None
            if closing is not None and closing.group("edge").upper() == "END" \
                    and _LONG_CHUNK.search(text, marker.end(), closing.start()):
                end = closing.end()
            else:
                end = _body_end(text, marker.end())
            if end > marker.end():
                found.append((marker.start(), end, KIND))
            floor = end
        else:
            start = _body_start(text, floor, marker.start())
            if start < marker.start():
                found.append((start, marker.end(), KIND))
            floor = marker.end()
    found += [(m.start(), m.end(), KIND) for m in _ENCODED.finditer(text) if _names_private_key(m.group())]
    return found


def _body_end(text: str, pos: int) -> int:
    """Where the body that starts at ``pos`` (after a ``BEGIN`` line) ends, headers and
    blank lines skipped; ``pos`` when no chunk of 16 or more characters follows."""
    origin, end, long_seen, headers = pos, pos, False, True
    while True:
        pos = _SEPARATOR.match(text, pos).end()  # type: ignore[union-attr]
        header = _HEADER.match(text, pos) if headers else None
        if header is not None and not _LONG_CHUNK.fullmatch(header.group()):
            pos = header.end()
            continue
        headers = False
        chunk = _CHUNK.match(text, pos)
        if chunk is None or not _ends_chunk(text, chunk.end()):
            return end if long_seen else origin
        long_seen = long_seen or _LONG_CHUNK.match(chunk.group()) is not None
        end = pos = chunk.end()


def _ends_chunk(text: str, pos: int) -> bool:
    """Whether a chunk may end at ``pos``: the text ends, or a separator follows."""
    return pos == len(text) or text[pos].isspace() or text.startswith(("\\n", "\\r"), pos)


def _body_start(text: str, floor: int, end: int) -> int:
    """Where the body lines right before an ``END`` line at ``end`` start (not before
    ``floor``); ``end`` when the lines before it hold no body (a line with a chunk of 16
    or more characters at least)."""
    start, long_seen = end, False
    for line_start, line_end in reversed(_lines(text, floor, end)):
        line = text[line_start:line_end]
        if not line.strip():
            if start == end:
                continue  # blank lines between the body and the END line
            break
        if not all(_BODY_LINE.fullmatch(part) for part in line.split(" ") if part):
            break
        long_seen = long_seen or _LONG_CHUNK.search(line) is not None
        start = line_start + len(line) - len(line.lstrip())
    return start if long_seen else end


def _lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``(start, end)`` of the lines of ``text[start:end]``, split at line breaks and
    escaped ones."""
    lines, pos = [], start
    for brk in _LINE_BREAK.finditer(text, start, end):
        lines.append((pos, brk.start()))
        pos = brk.end()
    lines.append((pos, end))
    return lines


def _names_private_key(encoded: str) -> bool:
    """Whether base64 ``encoded`` decodes to a text that begins a private key block."""
    head = re.sub(r"\s", "", encoded)[:120]
    head = head[: len(head) // 4 * 4]
    try:
        decoded = base64.b64decode(head).decode("ascii", "replace")
    except (binascii.Error, ValueError):
        return False
    return "PRIVATE KEY" in decoded.upper()
