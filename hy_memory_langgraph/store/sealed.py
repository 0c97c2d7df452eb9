"""SealedStore: a LangGraph store whose every write passes the privacy gate.

The client opens each of its memory stores through :class:`SealedStore` (with redaction
on, the default), so every value any code path puts (records, history events, traces,
session windows, id entries, imported rows, a model's output) is sealed
(:func:`~hy_memory_langgraph.redact.gate.seal`) on its way to the database, and every
namespace label and key is checked to carry no secret. Derived data follows the sealed
value: the store embeds the sealed text, and a lexical document (:class:`LexicalOp`,
terms the caller derived from the value it put) is kept only for an item whose value
passed the gate unchanged; an item the gate had to change is written without one (the
store drops its old document), so no term of a secret reaches the lexical index.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from langgraph.store.base import BaseStore, Op, PutOp, Result

from hy_memory_langgraph.ids import require_clean_label
from hy_memory_langgraph.redact.gate import seal
from hy_memory_langgraph.store.extensions import IndexedStore
from hy_memory_langgraph.store.postings.ops import KeyHit, LexicalOp, LexicalStatus
from hy_memory_langgraph.store.postings.read import TimeRange

#: The capability flags (:class:`~hy_memory_langgraph.store.CapabilityFlags`) a sealed store
#: declares when the wrapped store does.
_FLAGS: Final = ("supports_or_filters", "replaces_vectors_on_put", "supports_guards", "lists_newest_first",
                 "supports_lexical_index")


class SealedStore(BaseStore):
    """``store`` with one privacy gate in front of every write (reads pass through).

    Everything else the wrapped store offers (``close``, TTL, its own methods) is reached
    through this object unchanged. Its capability flags are declared on this object, and
    :meth:`around` also declares its ranked-key searches
    (:class:`~hy_memory_langgraph.store.IndexedStore`): protocol checks read attributes
    statically (Python 3.12 and later), so forwarding alone would hide them.

    Args:
        store: Any LangGraph store.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> store = SealedStore(InMemoryStore())
        >>> store.put(("notes",), "n1", {"text": "db password: Hunter2!x"})
        >>> store.get(("notes",), "n1").value
        {'text': 'db password: [REDACTED:password]'}
    """

    def __init__(self, store: BaseStore) -> None:
        self.store = store
        self.supports_ttl = store.supports_ttl
        self.ttl_config = store.ttl_config
        for flag in _FLAGS:
            if hasattr(store, flag):
                setattr(self, flag, getattr(store, flag))

    @staticmethod
    def around(store: BaseStore) -> SealedStore:
        """``store`` behind the gate, declaring the ranked-key searches it has."""
        return _SealedIndexedStore(store) if isinstance(store, IndexedStore) else SealedStore(store)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return self.store.batch(_sealed(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await self.store.abatch(_sealed(ops))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


class _SealedIndexedStore(SealedStore):
    """A :class:`SealedStore` over a store with ranked-key searches, which it declares."""

    store: Any

    def lexical_status(self, namespace: tuple[str, ...]) -> LexicalStatus:
        return self.store.lexical_status(namespace)

    def lexical_search(self, namespace: tuple[str, ...], terms: Mapping[str, float], *, limit: int,
                       k1: float, b: float, ts_range: TimeRange | None = None) -> list[KeyHit]:
        return self.store.lexical_search(namespace, terms, limit=limit, k1=k1, b=b, ts_range=ts_range)

    def vector_search_keys(self, namespace: tuple[str, ...], query: str, *, limit: int,
                           ts_range: TimeRange | None = None) -> list[KeyHit]:
        return self.store.vector_search_keys(namespace, query, limit=limit, ts_range=ts_range)


def _sealed(ops: Iterable[Op]) -> list[Op]:
    """``ops`` with each put's value sealed and its place checked; the lexical documents
    of items whose value the gate changed left out."""
    out: list[Op] = []
    changed: set[tuple[tuple[str, ...], str]] = set()
    for op in ops:
        if isinstance(op, PutOp):
            for label in op.namespace:
                require_clean_label(label, "a namespace label")
            require_clean_label(op.key, "a key")
            if op.value is not None:
                value = seal(op.value)
                if value != op.value:
                    changed.add((op.namespace, op.key))
                    op = PutOp(op.namespace, op.key, value, op.index, op.ttl)
        out.append(op)
    if not changed:
        return out
    return [op for op in out if not (isinstance(op, LexicalOp) and (op.namespace, op.key) in changed)]
