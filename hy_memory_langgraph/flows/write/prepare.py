"""A write made ready for the write graph, once, before the graph runs.

The client calls :func:`prepare_write` on the caller's arguments: it validates them,
normalises the messages, redacts secrets and holds every message to its byte limit. The
graph is handed the result, so no callback or tracer of the run (LangSmith's, when a
deployment traces) ever sees a secret, and no node prepares anything a second time: the
graph starts at routing.
"""

from __future__ import annotations

import time
from typing import Any

from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.flows.contracts import PreparedWrite
from hy_memory_langgraph.flows.write.state import WriteArgs
from hy_memory_langgraph.ids import optional_id, random_id, require_clean_label, require_id, scope_id
from hy_memory_langgraph.limits import check_write
from hy_memory_langgraph.messages.compression import cap_message_bytes
from hy_memory_langgraph.messages.normalize import normalize_messages
from hy_memory_langgraph.messages.redaction import redact_messages
from hy_memory_langgraph.redact import redact_value
from hy_memory_langgraph.scenes import validate_scene
from hy_memory_langgraph.timeutil import coerce_datetime, utcnow
from hy_memory_langgraph.values import json_object


def prepare_write(args: WriteArgs, config: MemoryConfig) -> PreparedWrite:
    """Validate ``args``, normalise the messages, redact secrets (unless
    ``MEMORY_REDACT_SECRETS=false``) and cap each message at ``MEMORY_MAX_MESSAGE_BYTES``
    (head and tail kept around a ``…[cut N bytes]…`` marker; redaction comes first, so a
    cut never splits a secret into an unrecognisable fragment).

    Raises:
        InvalidInputError: an argument is invalid; the message names it and the fix.

    Example:
        >>> from hy_memory_langgraph.config import MemoryConfig
        >>> write = prepare_write({"messages": "token: ghp_" + "a1B2c3D4e5" * 4, "user_id": "u"},
        ...                       MemoryConfig.from_env({}))
        >>> write["msgs"][0].content, write["scene"]
        ('token: [REDACTED:github_token]', None)
    """
    check_write(config.limits, args.get("messages"), args.get("metadata"))  # sizes first, bounded
    scene = validate_scene(args.get("scene"))
    metadata = json_object(args.get("metadata"), "metadata")
    messages = args.get("messages")
    msgs = normalize_messages([messages] if isinstance(messages, str) else messages)
    if config.redact_secrets:  # before anything is stored, embedded, traced or cut
        msgs, metadata = redact_messages(msgs), redact_value(metadata)
    msgs = cap_message_bytes(msgs, config.max_message_bytes)
    if not any(m.content.strip() or m.tool_calls for m in msgs):
        raise InvalidInputError(
            "messages holds nothing to remember (no text and no tool calls); pass at least one "
            "message with content, e.g. [{'role': 'user', 'content': 'I like green tea'}]")
    return _prepared(args, scene, metadata, msgs, config.redact_secrets)


def _placing(value: str | None, field: str, redact: bool) -> str | None:
    """An id that places rows, refused when it carries a secret (with redaction on):
    ids are stored as they are, never redacted into another name."""
    return require_clean_label(value, field) if redact and value is not None else value


def _prepared(args: WriteArgs, scene: str | None, metadata: dict[str, Any], msgs: Any,
              redact: bool) -> PreparedWrite:
    return {
        "request_id": args.get("request_id") or random_id(),
        "started": time.perf_counter(),
        "scene": scene,
        "user_id": _placing(require_id(args.get("user_id"), "user_id"), "user_id", redact),
        "agent_id": _placing(optional_id(args.get("agent_id"), "agent_id"), "agent_id", redact),
        "session_id": _placing(optional_id(args.get("session_id"), "session_id"), "session_id", redact),
        "workspace_id": scope_id(args.get("workspace_id"), "workspace_id", redact),
        "branch": scope_id(args.get("branch"), "branch", redact),
        "metadata": metadata,
        "at": coerce_datetime(args.get("memory_at"), "memory_at") or utcnow(),
        "msgs": msgs,
    }
