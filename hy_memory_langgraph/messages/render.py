"""Messages as rows for prompts: the transcript and the bounded judge summary.

Each row is one JSON-ready value (a dict), written one per line inside a prompt's data
section (:mod:`hy_memory_langgraph.prompts`), so a message's text can neither end its
section nor pass for another message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from hy_memory_langgraph.messages.turns import split_user_turns, tool_names
from hy_memory_langgraph.messages.types import Msg, ToolCall

_WS = re.compile(r"\s+")


def _arguments(call: ToolCall) -> Any:
    """The call's argument text as sent (compacted in prompts), else its parsed arguments."""
    return call.raw_arguments or call.arguments


def transcript_rows(msgs: Iterable[Msg]) -> list[dict[str, Any]]:
    """The messages as transcript rows, in order (stable; prompts and tests rely on it)::

        {"system": text}
        {"user": text}
        {"assistant": text}                      (omitted when the text is empty and
        {"tool_call": name, "arguments": "..."}   the message has tool calls; one per call)
        {"tool": name, "result": text}
        {"tool": name, "error": text}            (a result that reported failure)

    Example:
        >>> transcript_rows([Msg("user", "fix it"), Msg("tool", "ok", name="bash")])
        [{'user': 'fix it'}, {'tool': 'bash', 'result': 'ok'}]
    """
    rows: list[dict[str, Any]] = []
    for m in msgs:
        if m.role == "tool":
            rows.append({"tool": m.name or "", "error" if m.is_error else "result": m.content})
        elif m.role == "assistant":
            if m.content or not m.tool_calls:
                rows.append({"assistant": m.content})
            rows.extend({"tool_call": c.name, "arguments": _arguments(c)} for c in m.tool_calls)
        else:
            rows.append({m.role: m.content})
    return rows


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
) -> list[dict[str, Any]]:
    """Bounded per-turn summary of a trace for the scene judge, one row per user turn::

        {"turn": 3, "user": "fix the login bug", "tools": ["read_file", "apply_patch"], "results": "yes"}

    The user text is flattened to one line and cut head+tail to ``max_user_chars``. A turn
    without user text (leading assistant/tool messages) has ``"assistant"`` with at most
    120 characters of the assistant text instead. ``tools`` is empty when no tool was
    called; ``results`` says whether a tool result came back (``yes (error)`` when one
    reported failure). At most ``max_turns`` turns are listed: the first ``head_turns`` and
    the last ``max_turns - head_turns``, with ``{"omitted_turns": N}`` between them.
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
    rows = [_turn_row(number, turn, max_user_chars) for number, turn in listed]
    if omitted:
        rows.insert(head_turns, {"omitted_turns": omitted})
    return rows


def _turn_row(number: int, turn: list[Msg], max_user_chars: int) -> dict[str, Any]:
    user = " ".join(m.content for m in turn if m.role == "user" and m.content.strip())
    if user.strip():
        who = {"user": _one_line_cut(user, max_user_chars)}
    else:
        said = " ".join(m.content for m in turn if m.role == "assistant" and m.content.strip())
        who = {"assistant": _one_line_cut(said, 120)}
    results = [m for m in turn if m.role == "tool"]
    if not results:
        got = "no"
    else:
        got = "yes (error)" if any(m.is_error for m in results) else "yes"
    return {"turn": number, **who, "tools": tool_names(turn), "results": got}
