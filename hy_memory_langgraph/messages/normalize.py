"""Conversion of OpenAI / Anthropic / LangChain messages into :class:`Msg` lists."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.messages.types import Msg, ToolCall
from hy_memory_langgraph.values import without_nul

_FIX = "pass OpenAI, Anthropic or LangChain messages"
_ROLE_ALIASES: dict[str, str] = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
}
#: An unescaped ``\u0000`` in JSON text (an even run of backslashes before it is text).
_NUL_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")
_TEXT_BLOCKS = frozenset({"text", "input_text", "output_text"})
_CALL_BLOCKS = frozenset({"tool_use", "tool_call"})


def normalize_messages(messages: Any) -> list[Msg]:
    """Turn a list of OpenAI / Anthropic / LangChain messages (or strings) into ``Msg``s.

    Accepted items, freely mixed: OpenAI dicts (``content`` str or text parts; assistant
    ``tool_calls`` with JSON-string arguments, legacy ``function_call``; ``role="tool"``),
    Anthropic dicts (``text`` / ``tool_use`` / ``tool_result`` blocks; a user message
    carrying ``tool_result`` blocks becomes tool messages followed by a user message for
    any remaining text), LangChain ``BaseMessage``s, bare strings (one user message) and
    ``Msg`` (kept). Roles ``human``→user, ``ai``→assistant, ``developer``→system,
    ``function``→tool. Tool-call arguments that are not a JSON object are kept as
    ``raw_arguments`` with ``arguments={"_raw": ...}``; calls without an id get a
    deterministic one (``call_<msg>_<n>``). Tool results without a name get the name of
    the call they answer. Image, thinking and other non-text blocks are ignored.

    Args:
        messages: A list (or tuple) of messages; ``[]`` gives ``[]``.

    Returns:
        The normalised messages, in order.

    Raises:
        InvalidInputError: ``messages`` is not a list, or an item is malformed; the
            message names the index and field, e.g. ``messages[2].role='robot' is not
            one of user/assistant/tool/system; pass OpenAI, Anthropic or LangChain
            messages``.

    Example:
        >>> normalize_messages([{"role": "human", "content": "hi"}])[0].role
        'user'
    """
    if messages is None:
        raise InvalidInputError(
            "messages is None; pass a list of messages, e.g. [{'role': 'user', 'content': 'hi'}]"
        )
    if not isinstance(messages, (list, tuple)):
        raise InvalidInputError(
            f"messages must be a list, got {type(messages).__name__}; wrap a single message "
            f"or string in a list and {_FIX}"
        )
    out: list[Msg] = []
    for i, item in enumerate(messages):
        out.extend(_one(item, i))
    _check_encodable(out)
    return _resolve_tool_names([_without_nul(m) if _holds_nul(m) else m for m in out])


def _holds_nul(m: Msg) -> bool:
    """Whether ``m`` holds U+0000 anywhere, a JSON escape of it in a tool call's arguments
    included."""
    texts = [m.content, m.tool_call_id or "", m.name or ""]
    for c in m.tool_calls:
        texts += [c.id, c.name, c.raw_arguments.replace("\\u0000", "\x00")]
    return any("\x00" in t for t in texts)


def _raw_without_nul(raw: str) -> str:
    """Tool-call argument text without U+0000, neither as a character nor as the JSON escape
    (an escaped backslash before ``u0000`` is text and stays)."""
    return _NUL_ESCAPE.sub(r"\1", raw.replace("\x00", ""))


def _without_nul(m: Msg) -> Msg:
    """``m`` without U+0000 (see :mod:`hy_memory_langgraph.values`): PostgreSQL cannot store
    it, so both backends store the text without it."""
    calls = tuple(replace(c, id=without_nul(c.id), name=without_nul(c.name), arguments=without_nul(c.arguments),
                          raw_arguments=_raw_without_nul(c.raw_arguments)) for c in m.tool_calls)
    return replace(m, content=without_nul(m.content), tool_call_id=without_nul(m.tool_call_id),
                   name=without_nul(m.name), tool_calls=calls)


def _check_encodable(msgs: list[Msg]) -> None:
    """Refuse text that is not valid Unicode (lone surrogates cannot be stored or embedded)."""
    for i, m in enumerate(msgs):
        texts = [("content", m.content), ("tool_call_id", m.tool_call_id), ("name", m.name)]
        for j, c in enumerate(m.tool_calls):
            texts += [(f"tool_calls[{j}].{key}", value) for key, value in
                      (("id", c.id), ("name", c.name), ("arguments", c.raw_arguments))]
        for field, text in texts:
            try:
                (text or "").encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidInputError(
                    f"messages[{i}].{field} contains a lone surrogate (not valid Unicode); "
                    "decode your text with errors='replace' or remove the broken characters"
                ) from None


def make_tool_call(call_id: str, name: str, args: Any, where: str) -> ToolCall:
    """Build a :class:`ToolCall` from arguments given as a JSON string, a dict or None."""
    if args is None or (isinstance(args, str) and not args.strip()):
        return ToolCall(id=call_id, name=name, arguments={}, raw_arguments=args or "")
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except ValueError:
            parsed = None
        arguments = parsed if isinstance(parsed, dict) else {"_raw": args}
        return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=args)
    if isinstance(args, Mapping):
        arguments = dict(args)
        raw = json.dumps(arguments, ensure_ascii=False, default=str)
        return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=raw)
    raise InvalidInputError(
        f"{where} has type {type(args).__name__}; tool-call arguments must be a JSON string "
        f"or an object; {_FIX}"
    )


# ---------------------------------------------------------------------------- dispatch


def _one(item: Any, i: int) -> list[Msg]:
    where = f"messages[{i}]"
    if isinstance(item, Msg):
        return [item]
    if isinstance(item, str):
        return [Msg(role="user", content=item)]
    if isinstance(item, BaseMessage):
        return _from_langchain(item, where)
    if isinstance(item, Mapping):
        return _from_dict(item, where)
    raise InvalidInputError(
        f"{where} has type {type(item).__name__}; {_FIX} (dicts, BaseMessage) or plain strings"
    )


def _role(value: Any, where: str, field: str = "role") -> str:
    if value is None:
        raise InvalidInputError(f"{where}.{field} is missing; {_FIX}")
    if not isinstance(value, str) or value.lower() not in _ROLE_ALIASES:
        raise InvalidInputError(
            f"{where}.{field}={value!r} is not one of user/assistant/tool/system; {_FIX}"
        )
    return value.lower()


def _auto_id(prefix: str, where: str, *more: int) -> str:
    """Deterministic id for a call that came without one, e.g. ``call_3_0``."""
    digits = re.findall(r"\d+", where) + [str(n) for n in more]
    return "_".join([prefix, *digits])


def _opt_str(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InvalidInputError(f"{where} must be a string, got {type(value).__name__}; {_FIX}")


# ---------------------------------------------------------------------------- dicts


def _from_dict(d: Mapping[str, Any], where: str) -> list[Msg]:
    raw_role = d.get("role")
    field = "role"
    if raw_role is None and isinstance(d.get("type"), str):
        raw_role, field = d["type"], "type"  # serialised LangChain dict: {"type": "human", ...}
    source_role = _role(raw_role, where, field)
    role = _ROLE_ALIASES[source_role]
    content = d.get("content")
    texts, calls, results = _blocks(content, f"{where}.content", role)
    text = "\n".join(texts)
    if role == "system":
        return [Msg(role="system", content=text)]
    if role == "user":
        return results + ([Msg(role="user", content=text)] if text or not results else [])
    if role == "assistant":
        calls = _merge_calls(calls, _dict_tool_calls(d, where))
        return [Msg(role="assistant", content=text, tool_calls=tuple(calls))]
    return [
        Msg(
            role="tool",
            content=text,
            tool_call_id=_opt_str(d.get("tool_call_id"), f"{where}.tool_call_id"),
            name=_opt_str(d.get("name"), f"{where}.name"),
            is_error=bool(d.get("is_error")) or d.get("status") == "error",
        )
    ]


def _dict_tool_calls(d: Mapping[str, Any], where: str) -> list[ToolCall]:
    calls: list[ToolCall] = []
    raw_calls = d.get("tool_calls")
    if raw_calls is not None:
        if not isinstance(raw_calls, (list, tuple)):
            raise InvalidInputError(f"{where}.tool_calls must be a list; {_FIX}")
        for j, tc in enumerate(raw_calls):
            calls.append(_dict_call(tc, f"{where}.tool_calls[{j}]", _auto_id("call", where, j)))
    legacy = d.get("function_call")
    if legacy is not None:
        if not isinstance(legacy, Mapping):
            raise InvalidInputError(f"{where}.function_call must be an object; {_FIX}")
        name = _required_name(legacy.get("name"), f"{where}.function_call.name")
        args = legacy.get("arguments")
        call_id = _auto_id("fc", where)
        calls.append(make_tool_call(call_id, name, args, f"{where}.function_call.arguments"))
    return calls


def _dict_call(tc: Any, where: str, default_id: str) -> ToolCall:
    if not isinstance(tc, Mapping):
        raise InvalidInputError(f"{where} must be an object with 'function' or 'name'; {_FIX}")
    call_id = _opt_str(tc.get("id"), f"{where}.id") or default_id
    fn = tc.get("function")
    if fn is not None:  # OpenAI: {"id", "type": "function", "function": {"name", "arguments"}}
        if not isinstance(fn, Mapping):
            raise InvalidInputError(f"{where}.function must be an object; {_FIX}")
        name = _required_name(fn.get("name"), f"{where}.function.name")
        return make_tool_call(call_id, name, fn.get("arguments"), f"{where}.function.arguments")
    # LangChain dict form {"name", "args", "id"} or Anthropic-like {"name", "input"}
    name = _required_name(tc.get("name"), f"{where}.function.name")
    args = tc.get("args", tc.get("input", tc.get("arguments")))
    return make_tool_call(call_id, name, args, f"{where}.args")


def _required_name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidInputError(f"{where} is missing or not a string; every tool call needs a name")
    return value


# ---------------------------------------------------------------------------- content blocks


def _blocks(content: Any, where: str, role: str) -> tuple[list[str], list[ToolCall], list[Msg]]:
    """Split message content into text parts, tool calls and tool results."""
    if content is None:
        return [], [], []
    if isinstance(content, str):
        return ([content] if content else []), [], []
    if not isinstance(content, (list, tuple)):
        raise InvalidInputError(
            f"{where} has type {type(content).__name__}; content must be a string or a list of "
            f"content blocks; {_FIX}"
        )
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[Msg] = []
    for j, block in enumerate(content):
        bw = f"{where}[{j}]"
        if isinstance(block, str):
            texts.append(block)
            continue
        if not isinstance(block, Mapping):
            raise InvalidInputError(f"{bw} must be a string or a content block object; {_FIX}")
        btype = block.get("type")
        if btype in _TEXT_BLOCKS or (btype is None and "text" in block):
            text = block.get("text")
            if not isinstance(text, str):
                raise InvalidInputError(f"{bw}.text must be a string; {_FIX}")
            texts.append(text)
        elif btype in _CALL_BLOCKS:
            if role != "assistant":
                raise InvalidInputError(
                    f"{bw}.type={btype!r} is only allowed in assistant messages; {_FIX}"
                )
            call_id = _opt_str(block.get("id"), f"{bw}.id") or _auto_id("call", bw)
            name = _required_name(block.get("name"), f"{bw}.name")
            args = block.get("input", block.get("args"))
            calls.append(make_tool_call(call_id, name, args, f"{bw}.input"))
        elif btype == "tool_result":
            results.append(_tool_result(block, bw))
        elif btype is None:
            raise InvalidInputError(f"{bw}.type is missing; content blocks need a 'type'; {_FIX}")
        # other block types (image, thinking, document, ...) carry no text: ignored
    return texts, calls, results


def _tool_result(block: Mapping[str, Any], where: str) -> Msg:
    call_id = _opt_str(block.get("tool_use_id"), f"{where}.tool_use_id")
    if not call_id:
        raise InvalidInputError(f"{where}.tool_use_id is missing; tool_result blocks need it")
    texts, _, _ = _blocks(block.get("content"), f"{where}.content", "tool")
    return Msg(
        role="tool",
        content="\n".join(texts),
        tool_call_id=call_id,
        is_error=bool(block.get("is_error")),
    )


# ---------------------------------------------------------------------------- LangChain


def _from_langchain(m: BaseMessage, where: str) -> list[Msg]:
    """A LangChain message read as the dict it stands for (:func:`_from_dict`): its role,
    content, tool calls (invalid ones too, kept with their raw arguments) and tool fields."""
    d: dict[str, Any] = {"content": m.content, "name": m.name,
                         "tool_call_id": getattr(m, "tool_call_id", None), "status": getattr(m, "status", None)}
    if isinstance(m, (ToolMessage, FunctionMessage)):
        d["role"] = "tool"
    elif isinstance(m, AIMessage):
        invalid = [{"id": bad.get("id") or _auto_id("invalid", where, j), "name": bad.get("name") or "unknown",
                    "args": bad.get("args")} for j, bad in enumerate(m.invalid_tool_calls)]
        d.update(role="assistant", tool_calls=[*m.tool_calls, *invalid])
    elif isinstance(m, ChatMessage):
        d["role"] = m.role
    elif isinstance(m, (HumanMessage, SystemMessage)):
        d["role"] = "user" if isinstance(m, HumanMessage) else "system"
    else:
        d["type"] = m.type
    return _from_dict(d, where)


# ---------------------------------------------------------------------------- post-processing


def _merge_calls(first: list[ToolCall], second: list[ToolCall]) -> list[ToolCall]:
    """Concatenate two call lists, dropping calls of ``second`` whose id is already present."""
    seen = {c.id for c in first}
    return first + [c for c in second if c.id not in seen]


def _resolve_tool_names(msgs: list[Msg]) -> list[Msg]:
    """Fill missing tool names from call ids, and link legacy function results to calls."""
    by_id: dict[str, str] = {}
    last_by_name: dict[str, str] = {}
    out: list[Msg] = []
    for m in msgs:
        for c in m.tool_calls:
            by_id.setdefault(c.id, c.name)
            last_by_name[c.name] = c.id
        if m.role == "tool":
            name = m.name if m.name is not None else by_id.get(m.tool_call_id or "")
            call_id = m.tool_call_id
            if call_id is None and name is not None:
                call_id = last_by_name.get(name)
            if name != m.name or call_id != m.tool_call_id:
                m = replace(m, tool_call_id=call_id, name=name)
        out.append(m)
    # a result may precede its call only in malformed traces; resolve those too
    return [
        replace(m, name=by_id[m.tool_call_id])
        if m.role == "tool" and m.name is None and m.tool_call_id in by_id
        else m
        for m in out
    ]
