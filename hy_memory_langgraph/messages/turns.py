"""Tool traces and user-turn windows over normalised messages."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from hy_memory_langgraph.messages.types import Msg


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
