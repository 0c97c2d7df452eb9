"""Secrets taken out of normalised messages, within a write and across two writes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from hy_memory_langgraph.messages.types import Msg
from hy_memory_langgraph.redact import carried_spans, redact_json_text, redact_value, replace_spans, split_spans


def redact_messages(msgs: Iterable[Msg]) -> list[Msg]:
    """The messages with every secret in text and tool-call arguments replaced by a typed
    placeholder (see :mod:`hy_memory_langgraph.redact`): arguments as values (a key such
    as ``password`` redacts what it holds), JSON held in text (OpenAI's argument strings,
    tool results) as values too, other text scanned; a value whose label ends the message
    before it ("my new PIN is" / "4821") too, and a seed phrase cut in two messages from both;
    across another's reply, the writer's own last message gives a phrase's first half or a
    label that awaits its value ("the PIN, next message:" / "Okay, waiting." / "4821")."""
    out: list[Msg] = []
    written: list[str] = []  # each message as written: what it asked or began is read there
    own: dict[str, int] = {}  # each role's last message
    for m in msgs:
        calls = tuple(replace(c, arguments=redact_value(c.arguments),
                              raw_arguments=redact_json_text(c.raw_arguments)) for c in m.tool_calls)
        content = redact_json_text(m.content)
        for i in _before(out, own.get(m.role), m.role, written) if content else ():
            before, spans = split_spans(written[i], content)
            if i < len(out) - 1 and not before and not _awaits(written[i]):
                continue  # across a reply only a phrase's second half, or the value a label awaits
            if before:  # the first half, taken from the message as written, and what else it held
                out[i] = replace(out[i], content=redact_json_text(replace_spans(written[i], before)))
            content = replace_spans(content, spans)
        own[m.role] = len(out)
        written.append(m.content)
        out.append(replace(m, content=content, tool_calls=calls))
    return out


def _before(out: list[Msg], own: int | None, role: str, written: list[str]) -> list[int]:
    """The messages a message of ``role`` continues: the one before it, unless an assistant
    replies to a user's label that awaits the user's own value ("the router password:" /
    "Okay, go on"), and its writer's own last one (``own``) when another spoke in between."""
    last = len(out) - 1
    adjacent = last >= 0 and not (role == "assistant" and out[last].role == "user" and _awaits(written[last]))
    return [last] * adjacent + ([own] if own is not None and own != last else [])


def _awaits(text: str) -> bool:
    """Whether a message ends in a colon: a label that awaits its value in the next message."""
    return text.rstrip().endswith((":", "："))


def redact_after(history: Sequence[Msg], msgs: Sequence[Msg]) -> list[Msg]:
    """``msgs`` (already redacted) with a value whose label ends ``history`` taken out of the
    first of them: a conversation written one message per write ("What's the wifi
    password?" in one, "Tr0ub4dor&3" in the next) is read across the writes as
    :func:`redact_messages` reads it within one."""
    out = list(msgs)
    previous = next((m.content for m in reversed(history) if m.content), "")
    first = next((i for i, m in enumerate(out) if m.content), None)
    if previous and first is not None:
        spans = carried_spans(previous, out[first].content)
        if spans:
            out[first] = replace(out[first], content=replace_spans(out[first].content, spans))
    return out
