"""Lite mode: one deterministic fact per productivity write, zero LLM calls.

The statement lists, one labelled line each (labels in the language of the new user
messages; empty sections are left out, except the request):

* Request: the user text of this write, flattened, cut head + tail;
* Tools: the tools called, in order of first use, with the call count;
* Files: files touched (tool-call arguments, patch / diff headers);
* Commands: ``command``/``cmd``/``script`` arguments, or the arguments of shell tools;
* Errors: tool results flagged as errors, and error-looking lines of tool results;
* Outcome: the last assistant text, cut; when the trace ends with a tool result (no
  assistant text after it), the first non-empty line of that result, cut.

The subject is the first file touched, else the first line of the request (see
:func:`default_subject`). The details hold the
commands and error lines verbatim. No experiences are written in lite mode.
"""

from __future__ import annotations

import re
from typing import Any, Final

from langgraph.runtime import Runtime

from hy_memory_langgraph.flows.productivity.input import default_subject, work_messages
from hy_memory_langgraph.flows.productivity.state import ProductivityWriteState
from hy_memory_langgraph.messages.turns import tool_names, user_text
from hy_memory_langgraph.messages.types import Msg, ToolCall
from hy_memory_langgraph.services.context import MemoryContext

_LABELS: Final = {
    "en": ("Request", "Tools", "Files", "Commands", "Errors", "Outcome"),
    "zh": ("请求", "工具", "文件", "命令", "错误", "结果"),
}
_COMMAND_KEYS: Final = frozenset({"command", "cmd", "commands", "script", "shell_command"})
_SHELL_TOOLS: Final = frozenset({
    "bash", "sh", "shell", "zsh", "terminal", "powershell", "exec", "run", "run_command",
    "execute_command", "run_terminal_cmd", "run_shell_command", "shell_exec", "local_shell",
})
_ERROR_LINE: Final = re.compile(
    r"(?i)(\b(error|exception|traceback|failed|failure|fatal|panic|denied|refused|timed? ?out|"
    r"not found|invalid)\b|错误|失败|异常|报错|超时)")
_REQUEST_CHARS: Final = 600
_OUTCOME_CHARS: Final = 400
_ITEM_CHARS: Final = 200
_MAX_ITEMS: Final = 5
_MAX_FILES: Final = 20


def _flat(text: str, limit: int) -> str:
    """Whitespace collapsed; head and tail kept around `` … `` when longer than ``limit``."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head = (limit - 3) - (limit - 3) // 2
    return f"{flat[:head]} … {flat[len(flat) - (limit - 3) // 2:]}"


def _argv(value: Any) -> str:
    return " ".join(str(p) for p in value) if isinstance(value, list) else str(value)


def _call_commands(call: ToolCall) -> list[str]:
    """``commands: [...]`` is a list of commands; any other list value is one argv."""
    out: list[str] = []
    for key, value in call.arguments.items():
        if key == "commands" and isinstance(value, list):
            out.extend(_argv(v) for v in value)
        elif key in _COMMAND_KEYS:
            out.append(_argv(value))
    if not out and call.name.lower() in _SHELL_TOOLS:
        out.append(str(call.arguments.get("_raw") or call.raw_arguments))
    return [c for c in out if c.strip()]


def commands_of(msgs: list[Msg]) -> list[str]:
    """Commands run through tools, first-seen order, each flattened and cut."""
    seen: dict[str, None] = {}
    for m in msgs:
        for call in m.tool_calls:
            for command in _call_commands(call):
                seen.setdefault(_flat(command, _ITEM_CHARS), None)
    return list(seen)[:_MAX_ITEMS]


def errors_of(msgs: list[Msg]) -> list[str]:
    """Error lines of tool results (flagged results give their first non-empty line)."""
    seen: dict[str, None] = {}
    for m in msgs:
        if m.role != "tool":
            continue
        lines = [line.strip() for line in m.content.splitlines() if line.strip()]
        hits = [line for line in lines if _ERROR_LINE.search(line)]
        if m.is_error and not hits and lines:
            hits = lines[:1]
        for line in hits[:2]:
            label = f"{m.name}: " if m.name else ""
            seen.setdefault(_flat(label + line, _ITEM_CHARS), None)
    return list(seen)[:_MAX_ITEMS]


def _call_counts(msgs: list[Msg]) -> str:
    counts: dict[str, int] = {}
    for m in msgs:
        for call in m.tool_calls:
            counts[call.name] = counts.get(call.name, 0) + 1
    return ", ".join(f"{name} ×{counts[name]}" if counts.get(name, 0) > 1 else name
                     for name in tool_names(msgs))


def _outcome(work: list[Msg]) -> str:
    """The last assistant text, or the first line of a tool result that ends the trace."""
    for m in reversed(work):
        if not m.content.strip():
            continue
        if m.role == "assistant":
            return m.content
        if m.role == "tool":
            first = next(line.strip() for line in m.content.splitlines() if line.strip())
            return _flat(first, _ITEM_CHARS)
    return ""


def deterministic_fact(msgs: list[Msg], files: list[str], lang: str) -> dict[str, Any]:
    """The lite fact of a trace (pure: same messages, same fact)."""
    work = work_messages(msgs)
    request, tools, files_l, commands_l, errors_l, outcome = _LABELS.get(lang, _LABELS["en"])
    commands, errors = commands_of(work), errors_of(work)
    last = _outcome(work)
    sections = [
        (request, _flat(user_text(work), _REQUEST_CHARS) or "-"),
        (tools, _call_counts(work)),
        (files_l, ", ".join(files[:_MAX_FILES])),
        (commands_l, "; ".join(f"`{c}`" for c in commands)),
        (errors_l, "; ".join(errors)),
        (outcome, _flat(last, _OUTCOME_CHARS)),
    ]
    statement = "\n".join(f"{label}: {text}" for label, text in sections if text)
    details = "\n".join([*(f"$ {c}" for c in commands), *errors])
    return {"subject": default_subject(work, files), "statement": statement,
            "files": list(files), "details": details, "source": "lite"}


def lite_fact(state: ProductivityWriteState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Lite mode node: the deterministic fact, no experiences."""
    return {"experience_drafts": [],
            "fact_draft": deterministic_fact(state["msgs"], state["touched_files"], state["lang"])}
