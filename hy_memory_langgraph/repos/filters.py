"""Store filters over record fields, shared by the write and search nodes.

* :func:`time_filter`: ``memory_at`` within a range (on ``memory_ts``).
* :func:`scope_filter`: the workspace / branch scope of productivity records
  (``docs/design.md#storage-and-scoping``): no ``workspace_id`` → no filter;
  ``workspace_id`` → exact match; ``branch`` only together with a workspace, and rows
  whose branch is NULL stay visible. The store applies filters before its top-k.
* :func:`subject_key`: facts may only supersede facts with the same key.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Final

_PATH_HEAD: Final = re.compile(r"^([^\s:#]*[/.][^\s:#]*)[:#]")


def time_filter(after: datetime | None, before: datetime | None) -> dict[str, Any]:
    """A store filter on ``memory_ts`` for ``after <= memory_at <= before``.

    Example:
        >>> time_filter(None, None)
        {}
    """
    bounds: dict[str, float] = {}
    if after is not None:
        bounds["$gte"] = after.timestamp()
    if before is not None:
        bounds["$lte"] = before.timestamp()
    return {"memory_ts": bounds} if bounds else {}


def scope_filter(workspace_id: str | None, branch: str | None) -> dict[str, Any]:
    """The store filter of a workspace/branch scope.

    No workspace → no filter; workspace → exact match; branch (only together with a
    workspace) keeps rows of that branch and rows whose branch is NULL.

    Example:
        >>> scope_filter("ws", "b")
        {'workspace_id': 'ws', '$or': [{'branch': 'b'}, {'branch': None}]}
        >>> scope_filter(None, "b")
        {}
    """
    if not workspace_id:
        return {}
    if not branch:
        return {"workspace_id": workspace_id}
    return {"workspace_id": workspace_id, "$or": [{"branch": branch}, {"branch": None}]}


def in_scope(record: Any, workspace_id: str | None, branch: str | None) -> bool:
    """Python twin of :func:`scope_filter` for one record (anything with
    ``workspace_id`` and ``branch`` attributes)."""
    if not workspace_id:
        return True
    if record.workspace_id != workspace_id:
        return False
    return not branch or record.branch in (branch, None)


def subject_key(subject: str) -> str:
    """Normalised identity of a fact subject: facts may only supersede same-key facts.

    Case and whitespace are folded; ``path:symbol`` / ``path#anchor`` subjects keep
    the path part, so ``src/a.py:Client.get`` and ``src/a.py`` share a key.

    Example:
        >>> subject_key(" Src/A.py:Client.get ")
        'src/a.py'
    """
    text = " ".join(subject.split()).strip("`'\" ").casefold()
    match = _PATH_HEAD.match(text)
    return match.group(1) if match else text
