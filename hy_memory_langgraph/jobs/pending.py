"""What a search sees of queued writes: their turns, as pending raw memories.

A request waiting in the queue (or in a run not finished yet) has said something a search
right after it should find. :func:`pending_turns` reads the user and assistant messages
with text of the queued and running requests of some users; the chat search ranks them
beside the stored memories, marked ``pending``
(:mod:`hy_memory_langgraph.services.pending`). When the request's run ends, its rows go
and its turns are no longer pending: the memories it formed are found instead.

Example:
    >>> import tempfile, os
    >>> from hy_memory_langgraph.jobs.queue import JobQueue
    >>> pending_turns(JobQueue(os.path.join(tempfile.mkdtemp(), "q.db")), ["u1"])
    []
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hy_memory_langgraph.errors import StoreCorruptionError
from hy_memory_langgraph.jobs.codec import decode_write
from hy_memory_langgraph.jobs.queue import ACTIVE, JobQueue


@dataclass(frozen=True)
class PendingTurn:
    """One turn of a queued write.

    Attributes:
        key: ``pending-<request id>-<n>``: the turn's id while it is pending.
        request_id: The write's request id (what ``add`` returned).
        role: ``user`` or ``assistant``.
        at: The write's time (``memory_at``).
    """

    key: str
    request_id: str
    user_id: str
    session_id: str | None
    agent_id: str | None
    role: str
    content: str
    at: datetime
    metadata: dict[str, Any]


def pending_turns(queue: JobQueue, user_ids: Sequence[str]) -> list[PendingTurn]:
    """The turns of every queued or running write of ``user_ids``, in queue order (a
    write that cannot be read back is left out: its run will mark it failed)."""
    out: list[PendingTurn] = []
    for job in queue.jobs(user_ids=list(user_ids), states=ACTIVE, with_payload=True):
        if job.payload is None:
            continue
        try:
            write = decode_write(job.payload)
        except StoreCorruptionError:
            continue
        texts = [(m.role, m.content.strip()) for m in write["msgs"]
                 if m.role in ("user", "assistant") and m.content.strip()]
        out += [PendingTurn(key=f"pending-{job.request_id}-{n}", request_id=job.request_id,
                            user_id=write["user_id"], session_id=write.get("session_id"),
                            agent_id=write.get("agent_id"), role=role, content=text, at=write["at"],
                            metadata=dict(write.get("metadata") or {}))
                for n, (role, text) in enumerate(texts)]
    return out
