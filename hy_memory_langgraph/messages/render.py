"""Text views of messages for prompts: the transcript and the bounded judge summary."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from hy_memory_langgraph.messages.turns import split_user_turns, tool_names
from hy_memory_langgraph.messages.types import Msg, ToolCall

__all__ = ["judge_summary", "render_transcript"]

_WS = re.compile(r"\s+")
#: A line of a message's text that starts like a transcript line of its own (``[assistant] …``).
_ROLE_LINE = re.compile(r"(?m)^([ \t]*)\[((?:system|user|assistant|tool)\b[^\]\n]{0,60})\]", re.IGNORECASE)


def _as_content(text: str) -> str:
    """A message's text inside the transcript: a line of it that starts like a transcript
    line (``[assistant] I promised …``) gets round brackets, so only real messages start
    with ``[role]`` and no message can speak for another."""
    return _ROLE_LINE.sub(r"\1(\2)", text) if "[" in text else text


def _args_text(call: ToolCall) -> str:
    if call.raw_arguments:
        return call.raw_arguments
    return json.dumps(call.arguments, ensure_ascii=False, default=str, separators=(",", ":"))


def render_transcript(msgs: Iterable[Msg]) -> str:
    """Render messages as a readable transcript, one block per message, joined by newlines.

    Format (stable; prompts and tests rely on it)::

        [system] text
        [user] text
        [assistant] text                       (omitted when the text is empty and
        [assistant → tool_name] {json args}      the message has tool calls; one line per call)
        [tool tool_name] result
        [tool tool_name · error] result        (is_error; "[tool]" when the name is unknown)

    A line inside a message's text that starts like one of these is written with round
    brackets (``(assistant) …``): only messages start lines with ``[role]``.
    """
    lines: list[str] = []
    for m in msgs:
        if m.role == "tool":
            label = f"tool {m.name}" if m.name else "tool"
            if m.is_error:
                label += " · error"
            lines.append(f"[{label}] {_as_content(m.content)}")
        elif m.role == "assistant":
            if m.content or not m.tool_calls:
                lines.append(f"[assistant] {_as_content(m.content)}")
            lines.extend(f"[assistant → {c.name}] {_args_text(c)}" for c in m.tool_calls)
        else:
            lines.append(f"[{m.role}] {_as_content(m.content)}")
    return "\n".join(lines)


def _one_line_cut(text: str, max_chars: int) -> str:
    """Collapse whitespace and keep head + tail of text longer than ``max_chars``."""
    flat = _WS.sub(" ", text).strip()
    if len(flat) <= max_chars:
        return flat
    keep = max(max_chars - 3, 2)
    head = keep - keep // 2
    return f"{flat[:head]} … {flat[len(flat) - keep // 2:]}"


def judge_summary(
    msgs: Iterable[Msg],
    *,
    max_turns: int = 20,
    head_turns: int = 3,
    max_user_chars: int = 400,
) -> str:
    """Bounded per-turn summary of a trace for the scene judge.

    One line per user-turn::

        turn 3: user: "fix the login bug" | tools: read_file, apply_patch | results: yes

    The user text is flattened to one line and cut head+tail to ``max_user_chars``. A turn
    without user text (leading assistant/tool messages) shows ``assistant: "…"`` with at
    most 120 characters of the assistant text instead. ``tools`` is ``none`` when no tool
    was called; ``results`` says whether a tool result came back (``yes (error)`` when one
    reported failure). At most ``max_turns`` turns are listed: the first ``head_turns`` and
    the last ``max_turns - head_turns``, with ``… N turns omitted …`` between them.
    """
    max_turns = max(max_turns, 1)
    head_turns = min(max(head_turns, 0), max_turns)
    turns = split_user_turns(msgs)
    numbered = list(enumerate(turns, start=1))
    if len(numbered) > max_turns:
        tail = max_turns - head_turns
        omitted = len(numbered) - max_turns
        listed = numbered[:head_turns] + numbered[len(numbered) - tail:]
    else:
        omitted, listed = 0, numbered
    lines = [_turn_line(number, turn, max_user_chars) for number, turn in listed]
    if omitted:
        lines.insert(head_turns, f"… {omitted} turns omitted …")
    return "\n".join(lines)


def _turn_line(number: int, turn: list[Msg], max_user_chars: int) -> str:
    user = " ".join(m.content for m in turn if m.role == "user" and m.content.strip())
    if user.strip():
        who = f"user: {json.dumps(_one_line_cut(user, max_user_chars), ensure_ascii=False)}"
    else:
        said = " ".join(m.content for m in turn if m.role == "assistant" and m.content.strip())
        who = f"assistant: {json.dumps(_one_line_cut(said, 120), ensure_ascii=False)}"
    names = tool_names(turn)
    results = [m for m in turn if m.role == "tool"]
    if not results:
        got = "no"
    else:
        got = "yes (error)" if any(m.is_error for m in results) else "yes"
    return f"turn {number}: {who} | tools: {', '.join(names) or 'none'} | results: {got}"
