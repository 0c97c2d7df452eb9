"""Validation of ``memory_extract`` / ``memory_prompt`` inputs (the operations' field names)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.ids import require_clean_label, require_id
from hy_memory_langgraph.workflow.credentials import refuse_credentials

ROLES = ("user", "assistant")


@dataclass(frozen=True)
class Message:
    role: str
    text: str


@dataclass(frozen=True)
class ExtractRequest:
    """A validated ``memory_extract`` call."""

    user_id: str
    messages: tuple[Message, ...]
    workflow_id: str | None = None
    dynamic_context: dict[str, Any] = field(default_factory=dict)
    memory_app_id: str | None = None


def workflow_scope_id(value: Any, name: str) -> str | None:
    """``None`` or a non-empty id (ints accepted: JSON numbers; whitespace around it
    dropped), checked as every id is (:func:`~hy_memory_langgraph.ids.require_id`: no
    invisible or control character, at most 512 bytes) and refused when it carries a
    credential (a workflow or app id names a stored scope)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(
            f"{name} must be a non-empty string or omitted (got {value!r}), e.g. "
            f"{name}='1003655203465764898'"
        )
    return require_clean_label(require_id(value.strip(), name), name)


def _msg_list(value: Any) -> list[Message]:
    if not isinstance(value, list):
        raise InvalidInputError(
            f"msg_list (msgList) must be a list of {{'msgRole': 'user'|'assistant', 'msgValue': str}} "
            f"objects, got {type(value).__name__}"
        )
    out: list[Message] = []
    for i, item in enumerate(value):
        where = f"msg_list[{i}] (msgList[{i}])"
        if not isinstance(item, dict):
            raise InvalidInputError(f"{where} must be an object {{'msgRole': ..., 'msgValue': ...}}, "
                                    f"got {type(item).__name__}")
        if ("role" in item or "content" in item) and not ("msgRole" in item or "msgValue" in item):
            raise InvalidInputError(
                f"{where} uses 'role'/'content'; the field names are fixed: rename them to "
                "'msgRole' / 'msgValue'"
            )
        role, text = item.get("msgRole"), item.get("msgValue")
        if role not in ROLES:
            raise InvalidInputError(f"{where}.msgRole must be 'user' or 'assistant' (got {role!r})")
        if not isinstance(text, str):
            raise InvalidInputError(f"{where}.msgValue must be a string (got {type(text).__name__})")
        out.append(Message(role, text))
    return out


def _string_list(value: Any, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInputError(f"{name} must be a list of strings (got {value!r:.80})")
    return value


def _pairs(user: Any, assistant: Any) -> list[Message]:
    if user is None or assistant is None:
        missing = "user_message (userMessage)" if user is None else "assistant_message (assistantMessage)"
        raise InvalidInputError(
            f"{missing} is missing: user_message and assistant_message go together (two lists of "
            "strings; assistant_message may be []), or pass msg_list instead"
        )
    users = _string_list(user, "user_message (userMessage)")
    assistants = _string_list(assistant, "assistant_message (assistantMessage)")
    out: list[Message] = []
    for i in range(max(len(users), len(assistants))):
        if i < len(users):
            out.append(Message("user", users[i]))
        if i < len(assistants):
            out.append(Message("assistant", assistants[i]))
    return out


def validate_extract(user_id: Any, msg_list: Any = None, user_message: Any = None,
                     assistant_message: Any = None, workflow_id: Any = None,
                     dynamic_context: Any = None, memory_app_id: Any = None) -> ExtractRequest:
    """Check every argument; raise :class:`InvalidInputError` naming the field and the fix.

    Credentials anywhere (messages, dynamic context keys or values) raise
    :class:`~hy_memory_langgraph.workflow.errors.CredentialsRefusedError`.
    """
    user_id = require_id(user_id, "user_id")
    has_list = msg_list is not None
    has_pair = user_message is not None or assistant_message is not None
    if has_list and has_pair:
        raise InvalidInputError(
            "pass exactly one of msg_list (msgList) or user_message + assistant_message "
            "(userMessage + assistantMessage), not both"
        )
    if not has_list and not has_pair:
        raise InvalidInputError(
            "no messages: pass msg_list (msgList: [{'msgRole': 'user', 'msgValue': '...'}]) or "
            "user_message + assistant_message (userMessage + assistantMessage: lists of strings)"
        )
    messages = _msg_list(msg_list) if has_list else _pairs(user_message, assistant_message)
    if not any(m.text.strip() for m in messages):
        raise InvalidInputError("the messages hold no text: give at least one non-empty msgValue")
    if dynamic_context is not None and not isinstance(dynamic_context, dict):
        raise InvalidInputError(
            f"dynamic_context (dynamicContext) must be an object/dict or omitted "
            f"(got {type(dynamic_context).__name__})"
        )
    request = ExtractRequest(
        user_id=user_id,
        messages=tuple(messages),
        workflow_id=workflow_scope_id(workflow_id, "workflow_id (workflowId)"),
        dynamic_context=dict(dynamic_context or {}),
        memory_app_id=workflow_scope_id(memory_app_id, "memory_app_id (memoryAppId)"),
    )
    refuse_credentials({
        **{f"messages[{i}] ({m.role})": m.text for i, m in enumerate(request.messages)},
        "dynamicContext": request.dynamic_context,
    })
    return request
