"""Tool traces and user-turn windows over normalised messages."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from hy_memory_langgraph.messages.types import Msg
from hy_memory_langgraph.redact import carried_spans, redact_json_text, redact_value, replace_spans, split_spans


def has_tool_trace(msgs: Iterable[Msg]) -> bool:
    """Whether any message is a tool result or an assistant message with tool calls."""
    return any(m.role == "tool" or (m.role == "assistant" and m.tool_calls) for m in msgs)


def strip_tool_trace(msgs: Iterable[Msg]) -> list[Msg]:
    """Drop tool results and tool calls, keep assistant text.

    Assistant messages left without text (whitespace only) are dropped too.
    """
    out: list[Msg] = []
    for m in msgs:
        if m.role == "tool":
            continue
        if m.role == "assistant":
            if not m.content.strip():
                continue
            if m.tool_calls:
                m = replace(m, tool_calls=())
        out.append(m)
    return out


def tool_names(msgs: Iterable[Msg]) -> list[str]:
    """Names of the tools called or answered, deduplicated, in order of first appearance."""
    seen: dict[str, None] = {}
    for m in msgs:
        for call in m.tool_calls:
            seen.setdefault(call.name, None)
        if m.role == "tool" and m.name:
            seen.setdefault(m.name, None)
    return list(seen)


def user_text(msgs: Iterable[Msg]) -> str:
    """Text of the user messages joined with ``"\\n"`` (empty user messages skipped)."""
    return "\n".join(m.content for m in msgs if m.role == "user" and m.content)


# ---------------------------------------------------------------------------- user turns


def split_user_turns(msgs: Iterable[Msg]) -> list[list[Msg]]:
    """Group messages into user-turns.

    A user-turn is a user message plus the assistant/tool messages up to the next user
    message. Non-user messages before the first user message form their own first turn.
    System messages are ignored (they belong to no turn).
    """
    turns: list[list[Msg]] = []
    for m in msgs:
        if m.role == "system":
            continue
        if m.role == "user" or not turns:
            turns.append([m])
        else:
            turns[-1].append(m)
    return turns


def last_user_turns(msgs: Iterable[Msg], n: int) -> list[Msg]:
    """The messages of the last ``n`` user-turns, flattened (``n <= 0`` gives ``[]``)."""
    if n <= 0:
        return []
    return [m for turn in split_user_turns(msgs)[-n:] for m in turn]


def redact_messages(msgs: Iterable[Msg]) -> list[Msg]:
    """The messages with every secret in text and tool-call arguments replaced by a typed
    placeholder (see :mod:`hy_memory_langgraph.redact`): arguments as values (a key such
    as ``password`` redacts what it holds), JSON held in text (OpenAI's argument strings,
    tool results) as values too, other text scanned; a value whose label ends the message
    before it ("my new PIN is" / "4821") too, and a seed phrase cut in two messages from both."""
    out: list[Msg] = []
    previous = ""  # the previous message as written: what it asked or began is read there
    for m in msgs:
        calls = tuple(replace(c, arguments=redact_value(c.arguments),
                              raw_arguments=redact_json_text(c.raw_arguments)) for c in m.tool_calls)
        content = redact_json_text(m.content)
        if out and previous and content:  # a label ending the previous message
            before, spans = split_spans(previous, content)
            if before and out[-1].content == previous:
                out[-1] = replace(out[-1], content=replace_spans(previous, before))
            content = replace_spans(content, spans)
        previous = m.content
        out.append(replace(m, content=content, tool_calls=calls))
    return out


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
