"""Applying a background run's writes exactly once, across crashes.

A background run (``run_id`` in the write's state) is checkpointed after every node, but a
worker may die after a node wrote to a memory store and before LangGraph saved that the
node finished; the resumed run would run the node again. So every node that writes to a
memory store writes, in the same store batch (one transaction), a journal entry holding
the state update it returns; when it runs again in the same run it finds the entry and
returns that update, writing nothing. Outside a background run there is no ``run_id``:
no entry is read or written.

Entries live in the store they guard, under ``("applied", user)`` / ``"<run>.<node>.<part>"``,
and go when the run ends or the user's memory is erased (:func:`forget_entries`).

Example:
    >>> from langgraph.store.memory import InMemoryStore
    >>> store = InMemoryStore()
    >>> journal = Journal.of(store, {"user_id": "u", "run_id": "job-1"}, "insert_fact")
    >>> journal.replay() is None
    True
    >>> store.batch(journal.ops({"fact_id": "f1"}))
    [None]
    >>> journal.replay()
    {'fact_id': 'f1'}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from langgraph.store.base import BaseStore, PutOp

from hy_memory_langgraph.repos.namespaces import encode_label

#: Namespace label of journal entries.
JOURNAL: Final = "applied"
_SCAN: Final = 100_000


def _namespace(user_id: str) -> tuple[str, str]:
    return (JOURNAL, encode_label(user_id))


@dataclass(frozen=True)
class Journal:
    """The journal of one node of one run, in ``store``.

    Attributes:
        store: The store the node writes to (the entry goes in the same batch).
        user_id: The write's user.
        run_id: The background run (``None``: not a background run; no journal).
        node: The node's name.
    """

    store: BaseStore
    user_id: str
    run_id: str | None
    node: str

    @classmethod
    def of(cls, store: BaseStore, state: Mapping[str, Any], node: str) -> Journal:
        """The journal of ``node`` for the write in ``state``."""
        return cls(store, str(state["user_id"]), state.get("run_id"), node)

    def _key(self, part: str) -> str:
        return f"{self.run_id}.{self.node}.{part}" if part else f"{self.run_id}.{self.node}"

    def replay(self, part: str = "") -> dict[str, Any] | None:
        """The update this node (``part``) already applied in this run, or ``None``."""
        if self.run_id is None:
            return None
        item = self.store.get(_namespace(self.user_id), self._key(part))
        return None if item is None else dict(item.value["update"])

    def ops(self, update: Mapping[str, Any], part: str = "") -> list[PutOp]:
        """The put recording ``update`` (to write in the batch that applies it; none
        outside a background run)."""
        if self.run_id is None:
            return []
        return [PutOp(_namespace(self.user_id), self._key(part),
                      {"run": self.run_id, "update": dict(update)}, index=False)]


def forget_entries(stores: Iterable[BaseStore], user_id: str, run_id: str | None = None) -> None:
    """Delete from ``stores`` the journal entries of ``user_id``'s finished run ``run_id``,
    or with no ``run_id`` every entry of ``user_id`` (erasure)."""
    where = None if run_id is None else {"run": run_id}
    for store in stores:
        items = store.search(_namespace(user_id), filter=where, limit=_SCAN)
        if items:
            store.batch([PutOp(i.namespace, i.key, None) for i in items])
