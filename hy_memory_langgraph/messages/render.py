"""Messages as rows for prompts: the transcript and the bounded judge summary.

Each row is one JSON-ready value (a dict), written one per line inside a prompt's data
section (:mod:`hy_memory_langgraph.prompts`), so a message's text can neither end its
section nor pass for another message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

from hy_memory_langgraph.messages.turns import split_user_turns, tool_names
from hy_memory_langgraph.messages.types import Msg, ToolCall

_WS = re.compile(r"\s+")
#: Turns the judge summary lists at most (the first JUDGE_HEAD_TURNS of them, then the last).
JUDGE_TURNS: Final = 20
JUDGE_HEAD_TURNS: Final = 3
#: Characters of a turn's user text in the judge summary.
JUDGE_USER_CHARS: Final = 400


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


def judge_summary(msgs: Iterable[Msg]) -> list[dict[str, Any]]:
    """Bounded per-turn summary of a trace for the scene judge, one row per user turn::

        {"turn": 3, "user": "fix the login bug", "tools": ["read_file", "apply_patch"], "results": "yes"}

    The user text is flattened to one line and cut head+tail to :data:`JUDGE_USER_CHARS`. A
    turn without user text (leading assistant/tool messages) has ``"assistant"`` with at
    most 120 characters of the assistant text instead. ``tools`` is empty when no tool was
    called; ``results`` says whether a tool result came back (``yes (error)`` when one
    reported failure). At most :data:`JUDGE_TURNS` turns are listed: the first
    :data:`JUDGE_HEAD_TURNS` and the last ones, with ``{"omitted_turns": N}`` between them.
    """
    numbered = list(enumerate(split_user_turns(msgs), start=1))
    if len(numbered) > JUDGE_TURNS:
        omitted = len(numbered) - JUDGE_TURNS
        listed = numbered[:JUDGE_HEAD_TURNS] + numbered[JUDGE_HEAD_TURNS + omitted:]
    else:
        omitted, listed = 0, numbered
    rows = [_turn_row(number, turn) for number, turn in listed]
    if omitted:
        rows.insert(JUDGE_HEAD_TURNS, {"omitted_turns": omitted})
    return rows


def _turn_row(number: int, turn: list[Msg]) -> dict[str, Any]:
    user = " ".join(m.content for m in turn if m.role == "user" and m.content.strip())
    if user.strip():
        who = {"user": _one_line_cut(user, JUDGE_USER_CHARS)}
    else:
        said = " ".join(m.content for m in turn if m.role == "assistant" and m.content.strip())
        who = {"assistant": _one_line_cut(said, 120)}
    results = [m for m in turn if m.role == "tool"]
    if not results:
        got = "no"
    else:
        got = "yes (error)" if any(m.is_error for m in results) else "yes"
    return {"turn": number, **who, "tools": tool_names(turn), "results": got}
