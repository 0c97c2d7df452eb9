"""The persistent lexical index of :class:`HyMemoryStore`: operations and results.

A store announcing ``supports_lexical_index = True`` keeps BM25 postings in its
database, next to the items. Callers tokenise (the store never does): an item's
*lexical document* is written with a :class:`LexicalOp` in the same
:meth:`~HyMemoryStore.batch` as the item, and searched by namespace with
:meth:`~HyMemoryStore.lexical_search`, which reads only the postings of the query
terms and the namespace's statistics.

Rules:

* A document belongs to its item. A batch that puts the item without a
  :class:`LexicalOp` for it drops the document (like ``index=False`` drops its
  vectors); deleting or expiring the item deletes it.
* Documents may form ordered *groups* (e.g. the turns of a session). A grouped
  document is indexed with its own terms plus the ``tail`` terms (its own terms
  unless given) of up to ``window[0]`` previous and ``window[1]`` next documents
  of its group, ordered by ``(order, key)``. The store keeps these in step inside
  the write transaction: adding, changing or removing a document re-derives its
  neighbours' postings too, so deleted text never stays in anyone's postings.
* ``ts`` is a time (epoch seconds) searches can be restricted to.

Example:
    >>> op = LexicalOp(("chat", "u1"), "m1", {"tea": 1}, ts=0.0)
    >>> op.group is None, op.window
    (True, (0, 0))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple


class LexicalOp(NamedTuple):
    """Set the lexical document of the item ``namespace`` / ``key`` (batch op).

    Attributes:
        namespace: The item's namespace (documents are searched per namespace).
        key: The item's key; an op for an item that does not exist is ignored.
        terms: The document's own terms, ``{term: count}``.
        tail: What the document lends its group neighbours (``None``: ``terms``).
        ts: A time in epoch seconds searches may be restricted to.
        group: The group the document belongs to (``None``: no neighbours).
        order: Position within the group; ties are broken by ``key``.
        window: Previous and next neighbours whose tails a grouped document adds.
    """

    namespace: tuple[str, ...]
    key: str
    terms: Mapping[str, int]
    tail: Mapping[str, int] | None = None
    ts: float | None = None
    group: str | None = None
    order: tuple[str, float] = ("", 0.0)
    window: tuple[int, int] = (0, 0)


class KeyHit(NamedTuple):
    """One ranked item: its key, its score and its document's ``ts`` (if any)."""

    key: str
    score: float
    ts: float | None


@dataclass(frozen=True)
class LexicalStatus:
    """What the store holds for one namespace.

    Attributes:
        docs: Documents in the namespace.
        window: The neighbour window its grouped documents were built with
            (``None`` when it has no documents).
    """

    docs: int
    window: tuple[int, int] | None
