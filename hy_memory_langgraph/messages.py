"""Message handling for the write pipelines: one internal format and pure helpers on it.

Every message format the public API accepts (OpenAI dicts, Anthropic content blocks,
LangChain ``BaseMessage``s, bare strings) is turned into :class:`Msg` by
:func:`normalize_messages`; everything else in this module works on ``Msg`` lists:
tool-trace detection and stripping, user-turn windows, prompt compression, transcripts,
the bounded scene-judge summary, language routing, file extraction and a JSON round-trip.

Example:
    >>> msgs = normalize_messages(["Fix the timeout in search.py"])
    >>> has_tool_trace(msgs), detect_language(msgs)
    (False, 'en')
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal, cast

from hy_memory_langgraph._msg_compression import (
    compress_for_prompt,
    truncate_bytes_head_tail,
    truncate_chars_head_tail,
)
from hy_memory_langgraph._msg_files import files_from_text, files_from_tool_calls
from hy_memory_langgraph._msg_language import detect_text_language
from hy_memory_langgraph._msg_normalize import make_tool_call, normalize_messages
from hy_memory_langgraph._msg_types import ROLES, Msg, Role, ToolCall
from hy_memory_langgraph.errors import InvalidInputError

__all__ = [
    "Msg",
    "Role",
    "ToolCall",
    "compress_for_prompt",
    "detect_language",
    "files_from_text",
    "files_from_tool_calls",
    "has_tool_trace",
    "judge_summary",
    "last_user_turns",
    "messages_from_dicts",
    "messages_to_dicts",
    "normalize_messages",
    "render_transcript",
    "split_user_turns",
    "strip_tool_trace",
    "tool_names",
    "truncate_bytes_head_tail",
    "truncate_chars_head_tail",
    "user_text",
]

_WS = re.compile(r"\s+")


# ---------------------------------------------------------------------------- tool traces


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


# ---------------------------------------------------------------------------- rendering


def _args_text(call: ToolCall) -> str:
    if call.raw_arguments:
        return call.raw_arguments
    return json.dumps(call.arguments, ensure_ascii=False, default=str)


def render_transcript(msgs: Iterable[Msg]) -> str:
    """Render messages as a readable transcript, one block per message, joined by newlines.

    Format (stable; prompts and tests rely on it)::

        [system] text
        [user] text
        [assistant] text                       (omitted when the text is empty and
        [assistant → tool_name] {json args}      the message has tool calls; one line per call)
        [tool tool_name] result
        [tool tool_name · error] result        (is_error; "[tool]" when the name is unknown)
    """
    lines: list[str] = []
    for m in msgs:
        if m.role == "tool":
            label = f"tool {m.name}" if m.name else "tool"
            if m.is_error:
                label += " · error"
            lines.append(f"[{label}] {m.content}")
        elif m.role == "assistant":
            if m.content or not m.tool_calls:
                lines.append(f"[assistant] {m.content}")
            lines.extend(f"[assistant → {c.name}] {_args_text(c)}" for c in m.tool_calls)
        else:
            lines.append(f"[{m.role}] {m.content}")
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


# ---------------------------------------------------------------------------- language


def detect_language(msgs_or_text: str | Sequence[Any]) -> Literal["zh", "en"]:
    """Prompt language of the new user input: ``"zh"`` or ``"en"``.

    A string is used as is. For a message list (``Msg`` or anything
    :func:`normalize_messages` accepts), only ``role="user"`` content counts: tool
    results, assistant text and system prompts never decide the language.

    Rule: code (fenced blocks, inline code, identifiers), URLs, file paths, digits,
    punctuation and whitespace are ignored; of the first 10 remaining letters / CJK
    ideographs, ``"zh"`` when CJK make at least half, or when the first one is CJK and
    at least 2 are CJK; otherwise (including empty input) ``"en"``.
    """
    if isinstance(msgs_or_text, str):
        return detect_text_language(msgs_or_text)
    msgs = normalize_messages(list(msgs_or_text))
    return detect_text_language(user_text(msgs))


# ---------------------------------------------------------------------------- JSON round-trip


def messages_to_dicts(msgs: Iterable[Msg]) -> list[dict[str, Any]]:
    """JSON-able dicts (all fields, always present) for storage; see :func:`messages_from_dicts`."""
    return [
        {
            "role": m.role,
            "content": m.content,
            "tool_calls": [
                {
                    "id": c.id,
                    "name": c.name,
                    "arguments": c.arguments,
                    "raw_arguments": c.raw_arguments,
                }
                for c in m.tool_calls
            ],
            "tool_call_id": m.tool_call_id,
            "name": m.name,
            "is_error": m.is_error,
        }
        for m in msgs
    ]


def messages_from_dicts(items: Iterable[Mapping[str, Any]]) -> list[Msg]:
    """Rebuild messages written by :func:`messages_to_dicts`.

    Raises:
        InvalidInputError: an item is not such a dict (the message names index and field).
    """
    if items is None or isinstance(items, (str, bytes, Mapping)):
        raise InvalidInputError("stored messages must be a list of dicts from messages_to_dicts")
    out: list[Msg] = []
    for i, d in enumerate(items):
        where = f"stored_messages[{i}]"
        if not isinstance(d, Mapping):
            raise InvalidInputError(f"{where} must be a dict produced by messages_to_dicts")
        role = d.get("role")
        if role not in ROLES:
            raise InvalidInputError(
                f"{where}.role={role!r} is not one of user/assistant/tool/system; "
                "store messages with messages_to_dicts"
            )
        content = d.get("content") or ""
        if not isinstance(content, str):
            raise InvalidInputError(f"{where}.content must be a string")
        calls = tuple(_call_from_dict(c, f"{where}.tool_calls[{j}]")
                      for j, c in enumerate(d.get("tool_calls") or []))
        out.append(
            Msg(
                role=cast(Role, role),
                content=content,
                tool_calls=calls,
                tool_call_id=d.get("tool_call_id"),
                name=d.get("name"),
                is_error=bool(d.get("is_error", False)),
            )
        )
    return out


def _call_from_dict(c: Any, where: str) -> ToolCall:
    if not isinstance(c, Mapping) or not isinstance(c.get("name"), str):
        raise InvalidInputError(f"{where} must be a dict with a string 'name'")
    args = c.get("arguments")
    raw = c.get("raw_arguments")
    if isinstance(args, Mapping) and isinstance(raw, str):
        return ToolCall(id=str(c.get("id") or ""), name=c["name"], arguments=dict(args),
                        raw_arguments=raw)
    return make_tool_call(str(c.get("id") or ""), c["name"], raw if raw else args,
                          f"{where}.arguments")
