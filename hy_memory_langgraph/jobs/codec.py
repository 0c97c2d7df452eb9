"""A prepared write as the queue keeps it, and several of a session taken as one.

The queue stores a write exactly as the client prepared it for the write graph (validated,
normalised, redacted, capped): :func:`encode_write` turns it into JSON, :func:`decode_write`
back. :func:`merge_writes` makes one write of consecutive writes of a session (their
messages in order, the latest time), and :func:`merge_key` says which writes may be merged:
the same user, agent, session, scene, scope and metadata, all with a tool trace or all
without (a chat turn is never folded into a working trace).

Example:
    >>> from hy_memory_langgraph.messages.types import Msg
    >>> from datetime import datetime, timezone
    >>> write = {"request_id": "r1", "user_id": "u", "session_id": "s", "scene": None,
    ...          "metadata": {}, "at": datetime(2024, 5, 1, tzinfo=timezone.utc),
    ...          "msgs": [Msg(role="user", content="I moved to Lyon")]}
    >>> decode_write(encode_write(write))["msgs"][0].content
    'I moved to Lyon'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Final

from hy_memory_langgraph.errors import StoreCorruptionError
from hy_memory_langgraph.messages.codec import messages_from_dicts, messages_to_dicts
from hy_memory_langgraph.messages.turns import has_tool_trace

#: The fields of a prepared write that place it (the merge key's part besides the metadata).
_PLACE: Final = ("user_id", "agent_id", "session_id", "scene", "workspace_id", "branch")
#: Writes whose times lie further apart than this are never merged (a caller replaying
#: dated history keeps one extraction per date).
MERGE_SPAN_S: Final = 3600.0


def encode_write(write: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON form of a prepared write (``started``, a clock of the calling process, is
    left out)."""
    out = {k: write.get(k) for k in ("request_id", *_PLACE)}
    out["metadata"] = dict(write.get("metadata") or {})
    out["at"] = write["at"].astimezone(timezone.utc).isoformat()
    out["msgs"] = messages_to_dicts(write["msgs"])
    return out


def decode_write(data: Mapping[str, Any]) -> dict[str, Any]:
    """The prepared write :func:`encode_write` stored.

    Raises:
        StoreCorruptionError: ``data`` is not such a write.
    """
    try:
        write = {k: data.get(k) for k in ("request_id", *_PLACE)}
        write["metadata"] = dict(data.get("metadata") or {})
        write["at"] = datetime.fromisoformat(str(data["at"]))
        write["msgs"] = messages_from_dicts(data["msgs"])
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreCorruptionError(f"a queued write cannot be read back ({exc}); it is kept, "
                                   "marked failed") from exc
    if not isinstance(write["request_id"], str) or not isinstance(write["user_id"], str):
        raise StoreCorruptionError("a queued write has no request or user id; it is kept, marked failed")
    return write


def session_key(user_id: str, session_id: str | None) -> str:
    """What orders a queue: one user's session (or the user's writes without one)."""
    return json.dumps([user_id, session_id])


def merge_key(write: Mapping[str, Any]) -> str:
    """Writes of one session with the same key may be extracted together."""
    place = [write.get(k) for k in _PLACE]
    raw = json.dumps([place, write.get("metadata") or {}, has_tool_trace(write["msgs"])],
                     sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def merge_writes(writes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One write of ``writes`` (same :func:`merge_key`, in arrival order): the first's
    place and request id, every message in order, the latest time.

    Example:
        >>> from datetime import datetime, timezone
        >>> from hy_memory_langgraph.messages.types import Msg
        >>> at = datetime(2024, 5, 1, tzinfo=timezone.utc)
        >>> one = {"request_id": "a", "user_id": "u", "msgs": [Msg(role="user", content="hi")], "at": at}
        >>> two = {**one, "request_id": "b", "msgs": [Msg(role="user", content="I'm Ann")]}
        >>> [m.content for m in merge_writes([one, two])["msgs"]]
        ['hi', "I'm Ann"]
    """
    if not writes:
        raise ValueError("merge_writes needs at least one write")
    merged = dict(writes[0])
    merged["msgs"] = [m for w in writes for m in w["msgs"]]
    merged["at"] = max(w["at"] for w in writes)
    return merged
