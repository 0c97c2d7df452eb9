"""Head+tail truncation of message text (bytes for tool results, chars for assistant text).

Two uses: prompt compression (:func:`compress_for_prompt`, ``…[truncated N bytes]…``)
and the size cap every stored message passes (:func:`cap_message_bytes`,
``…[cut 4,200,000 bytes]…``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.messages.types import Msg, ToolCall

# "surrogatepass" keeps lone surrogates (which str allows) round-tripping instead of raising.
_ERRORS = "surrogatepass"

Marker = Callable[[int], str]


def _truncated_marker(omitted: int) -> str:
    return f"\n…[truncated {omitted} bytes]…\n"


def cut_marker(omitted: int) -> str:
    """The visible marker of a message cut to the size cap: ``…[cut 4,200,000 bytes]…``."""
    return f"\n…[cut {omitted:,} bytes]…\n"


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def truncate_bytes_head_tail(text: str, max_bytes: int, marker: Marker = _truncated_marker) -> str:
    """Cut ``text`` to at most ``max_bytes`` UTF-8 bytes, keeping its head and tail.

    Text whose UTF-8 encoding fits is returned unchanged. Otherwise the result is
    ``head + "\\n…[truncated N bytes]…\\n" + tail`` where head and tail take about half
    of the remaining budget each, both cut on character boundaries (never a broken
    character), and N is the number of original bytes left out. The whole result,
    marker included, never exceeds ``max_bytes``.

    Tiny limits: when ``max_bytes`` leaves no room for the marker plus one byte on each
    side (below about 30 bytes), the result is the longest head prefix that fits, without
    a marker; ``max_bytes=0`` gives ``""``.

    Args:
        text: Text to shorten.
        max_bytes: Byte budget of the result (``>= 0``).
        marker: Renders the marker from the number of bytes left out (its width must not
            grow when the number shrinks).

    Returns:
        The text, unchanged or shortened.

    Raises:
        InvalidInputError: ``max_bytes`` is negative.
    """
    if max_bytes < 0:
        raise InvalidInputError(f"max_bytes={max_bytes} must be >= 0")
    if len(text) * 4 <= max_bytes:  # a character is at most 4 bytes: it fits
        return text
    data = text.encode("utf-8", _ERRORS)
    total = len(data)
    if total <= max_bytes:
        return text
    budget = max_bytes - len(marker(total).encode())  # N <= total: widest marker
    if budget < 2:
        return _decode(data[: _head_cut(data, max_bytes)])
    head_end = _head_cut(data, budget - budget // 2)
    tail_start = _tail_cut(data, total - budget // 2)
    omitted = tail_start - head_end
    return _decode(data[:head_end] + marker(omitted).encode() + data[tail_start:])


def _head_cut(data: bytes, end: int) -> int:
    """Largest index ``<= end`` that starts a character (so ``data[:index]`` is whole)."""
    while 0 < end < len(data) and _is_continuation(data[end]):
        end -= 1
    return end


def _tail_cut(data: bytes, start: int) -> int:
    """Smallest index ``>= start`` that starts a character (or ``len(data)``)."""
    while start < len(data) and _is_continuation(data[start]):
        start += 1
    return start


def _decode(data: bytes) -> str:
    return data.decode("utf-8", _ERRORS)


def truncate_chars_head_tail(text: str, max_chars: int = 6000, keep: int = 3000) -> str:
    """Keep the first and last ``keep`` characters of text longer than ``max_chars``.

    The result is ``text[:keep] + "\\n…[truncated N chars]…\\n" + text[-keep:]``.
    Text of at most ``max_chars`` characters, or text where the two kept parts would
    overlap (``2 * keep >= len(text)``), is returned unchanged.

    Args:
        text: Text to shorten.
        max_chars: Length above which the text is cut.
        keep: Characters kept at each end.

    Returns:
        The text, unchanged or shortened.

    Raises:
        InvalidInputError: ``max_chars`` or ``keep`` is negative.
    """
    if max_chars < 0 or keep < 0:
        raise InvalidInputError(f"max_chars={max_chars} and keep={keep} must be >= 0")
    length = len(text)
    if length <= max_chars or 2 * keep >= length:
        return text
    omitted = length - 2 * keep
    return f"{text[:keep]}\n…[truncated {omitted} chars]…\n{text[length - keep:]}"


def compress_for_prompt(msgs: Iterable[Msg], *, tool_result_max_bytes: int = 2048) -> list[Msg]:
    """Shorten tool results, tool-call arguments and long assistant text for a prompt.

    JSON tool results and argument texts are first written compactly (:func:`compact_json`).
    Tool results are cut to ``tool_result_max_bytes`` UTF-8 bytes (head + tail), assistant
    text longer than 6,000 characters keeps 3,000 at each end (:func:`truncate_chars_head_tail`),
    and tool-call ``raw_arguments`` longer than ``tool_result_max_bytes`` bytes are cut the
    same way as tool results; in the parsed ``arguments`` each long string value is cut,
    so short keys such as paths stay intact. User and system messages are unchanged.

    Args:
        msgs: Normalised messages.
        tool_result_max_bytes: Byte budget per tool result / argument text.

    Returns:
        New messages; the input is not modified.
    """
    out: list[Msg] = []
    for m in msgs:
        if m.role == "tool":
            m = replace(m, content=truncate_bytes_head_tail(compact_json(m.content), tool_result_max_bytes))
        elif m.role == "assistant":
            content = truncate_chars_head_tail(m.content)
            calls = tuple(_shrink_call(c, tool_result_max_bytes) for c in m.tool_calls)
            m = replace(m, content=content, tool_calls=calls)
        out.append(m)
    return out


def compact_json(text: str) -> str:
    """``text`` in a compact flow notation when it is one JSON object or array, any other
    text unchanged.

    A prompt pays for every quote, space and indent of a JSON tool result, and for every
    key again in each record of a list. The notation keeps the structure and every value:
    ``{key:value,...}`` and ``[a,b]``; a list of two or more objects with the same keys in
    the same order is a table, its keys once, then one row of values per object:
    ``[{k1,k2}: a,b; c,d]``. Keys and strings are bare unless a bare form could be misread
    (empty, surrounded by spaces, holding one of ``,:;{}[]"`` or a line break, or spelling
    a number, ``true``/``false``/``null``), then JSON-quoted.

    Example:
        >>> compact_json('{"id": 7, "name": "Ada Lovelace", "tags": ["a", "b, c"], "n": "7"}')
        '{id:7,name:Ada Lovelace,tags:[a,"b, c"],n:"7"}'
        >>> compact_json('[{"flight": "HAT028", "price": 1859}, {"flight": "HAT277", "price": 101}]')
        '[{flight,price}: HAT028,1859; HAT277,101]'
        >>> compact_json("total: 3 rows")
        'total: 3 rows'
    """
    head = text.lstrip()[:1]
    if head not in ("{", "[") or len(text) > _COMPACT_MAX_CHARS:
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return _flow(value)


#: Larger texts are cut for the prompt anyway; parsing them whole would only cost time.
_COMPACT_MAX_CHARS = 1_000_000
_NEEDS_QUOTES = re.compile(r'[,:;{}\[\]"\n\r]|^\s|\s$|^$')
_LITERAL = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null", re.IGNORECASE)


def _flow_str(text: str) -> str:
    if _NEEDS_QUOTES.search(text) or _LITERAL.fullmatch(text):
        return json.dumps(text, ensure_ascii=False)
    return text


def _is_table(value: list[Any]) -> bool:
    """Two or more non-empty objects with the same keys in the same order."""
    if len(value) < 2 or not all(isinstance(v, dict) and v for v in value):
        return False
    keys = list(value[0])
    return all(list(v) == keys for v in value[1:])


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{_flow_str(str(k))}:{_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        if _is_table(value):
            keys = list(value[0])
            rows = "; ".join(",".join(_flow(row[k]) for k in keys) for row in value)
            return "[{" + ",".join(_flow_str(str(k)) for k in keys) + "}: " + rows + "]"
        return "[" + ",".join(_flow(v) for v in value) + "]"
    if isinstance(value, str):
        return _flow_str(value)
    return json.dumps(value, ensure_ascii=False)


def _shrink_call(call: ToolCall, max_bytes: int, marker: Marker = _truncated_marker) -> ToolCall:
    if call.raw_arguments:
        call = replace(call, raw_arguments=compact_json(call.raw_arguments))
    raw = call.raw_arguments
    if len(raw) <= max_bytes // 4 or len(raw.encode("utf-8", _ERRORS)) <= max_bytes:
        return call
    return replace(
        call,
        raw_arguments=truncate_bytes_head_tail(raw, max_bytes, marker),
        arguments=_shrink_value(call.arguments, max_bytes, marker),
    )


def _shrink_value(value: Any, max_bytes: int, marker: Marker) -> Any:
    if isinstance(value, str):
        return truncate_bytes_head_tail(value, max_bytes, marker)
    if isinstance(value, dict):
        return {k: _shrink_value(v, max_bytes, marker) for k, v in value.items()}
    if isinstance(value, list):
        return [_shrink_value(v, max_bytes, marker) for v in value]
    return value


def cap_message_bytes(msgs: Iterable[Msg], max_bytes: int) -> list[Msg]:
    """Cut every message to the stored-size cap, head and tail kept, with a visible marker.

    A message whose content exceeds ``max_bytes`` UTF-8 bytes becomes ``head +
    "…[cut N bytes]…" + tail`` (both cuts on character boundaries, at most ``max_bytes``
    bytes in all). Tool-call arguments are held to the same cap: the argument text, and
    each string value of the parsed arguments. Nothing is dropped silently.

    Args:
        msgs: Normalised messages.
        max_bytes: Cap per message content (and per tool-call argument text or value).

    Returns:
        The messages, the small ones unchanged (the same objects).

    Example:
        >>> [m] = cap_message_bytes([Msg(role="user", content="x" * 5000)], 1000)
        >>> len(m.content.encode()) <= 1000 and "…[cut 4,0" in m.content
        True
    """
    out: list[Msg] = []
    for m in msgs:
        content = truncate_bytes_head_tail(m.content, max_bytes, cut_marker)
        calls = tuple(_shrink_call(c, max_bytes, cut_marker) for c in m.tool_calls)
        if content is not m.content or any(a is not b for a, b in zip(calls, m.tool_calls)):
            m = replace(m, content=content, tool_calls=calls)
        out.append(m)
    return out
