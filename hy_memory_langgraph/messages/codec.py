"""JSON round-trip of normalised messages (how traces are stored)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.messages.normalize import make_tool_call
from hy_memory_langgraph.messages.types import ROLES, Msg, Role, ToolCall


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
