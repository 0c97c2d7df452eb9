"""Scoping rules of the productivity memory (seed 1 §5), shared by write and search.

* :func:`scope_filter`: no ``workspace_id`` → no filter; ``workspace_id`` → exact
  match; ``branch`` only together with a workspace, and rows whose branch is NULL stay
  visible (``{"workspace_id": ws, "$or": [{"branch": b}, {"branch": None}]}``). The
  store applies it before its top-k, for search and for reconcile candidates alike.
* :func:`subject_key`: facts may only supersede facts with the same key.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["scope_filter", "in_scope", "subject_key"]

_PATH_HEAD: Final = re.compile(r"^([^\s:#]*[/.][^\s:#]*)[:#]")


def scope_filter(workspace_id: str | None, branch: str | None) -> dict[str, Any]:
    """The store filter of a workspace/branch scope (seed 1 §5).

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


def in_scope(value: dict[str, Any], workspace_id: str | None, branch: str | None) -> bool:
    """Python twin of :func:`scope_filter` for one stored value."""
    if not workspace_id:
        return True
    if value.get("workspace_id") != workspace_id:
        return False
    return not branch or value.get("branch") in (branch, None)


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
