"""HyMemoryKVStore: a LangChain key-value store (``BaseStore[str, bytes]``) on a LangGraph store.

LangChain's byte stores (the cache of ``CacheBackedEmbeddings``, document stores of
multi-vector retrievers, ...) speak ``mget`` / ``mset`` / ``mdelete`` / ``yield_keys``
over ``str -> bytes``. This adapter keeps such a map in ONE namespace of any LangGraph
``BaseStore`` (by default a :class:`HyMemoryStore` file), so it is durable, shared by
every process that opens the same file, and never embedded (items are put with
``index=False``). Bytes are stored base64-encoded under ``{"b64": ...}``. The async
methods are LangChain's: the sync ones, run in a worker thread.

Example:
    >>> import os, tempfile
    >>> kv = HyMemoryKVStore(os.path.join(tempfile.mkdtemp(), "kv.db"))
    >>> kv.mset([("a", b"1"), ("b", b"2")])
    >>> kv.mget(["a", "zz"]), sorted(kv.yield_keys())
    ([b'1', None], ['a', 'b'])
    >>> kv.close()
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from langchain_core.stores import BaseStore as KeyValueStore
from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.store.store import HyMemoryStore

_PAGE = 1000


def _encode(value: bytes) -> dict[str, str]:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise InvalidInputError(
            f"HyMemoryKVStore values must be bytes, got {type(value).__name__}; "
            "encode it first (e.g. json.dumps(x).encode())")
    return {"b64": base64.b64encode(bytes(value)).decode("ascii")}


def _decode(item: Item | None) -> bytes | None:
    return None if item is None else base64.b64decode(item.value["b64"])


def _check_key(key: str) -> str:
    if not isinstance(key, str):
        raise InvalidInputError(f"HyMemoryKVStore keys must be str, got {type(key).__name__}")
    return key


class HyMemoryKVStore(KeyValueStore[str, bytes]):
    """A durable ``str -> bytes`` store in one namespace of a LangGraph store.

    Args:
        store: A LangGraph ``BaseStore`` (e.g. a :class:`HyMemoryStore` shared with other
            data), or a path: a :class:`HyMemoryStore` without a vector index is opened
            there and closed by :meth:`close`.
        namespace: The namespace holding the keys (one store may hold many maps).

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> kv = HyMemoryKVStore(InMemoryStore(), namespace=("cache", "v1"))
        >>> kv.mset([("k", b"v")]); kv.mget(["k"])
        [b'v']
    """

    def __init__(self, store: BaseStore | str | os.PathLike[str], *,
                 namespace: tuple[str, ...] = ("kv",)) -> None:
        if isinstance(store, BaseStore):
            self.store, self._owned = store, False
        elif isinstance(store, (str, os.PathLike)):
            self.store, self._owned = HyMemoryStore(store), True
        else:
            raise InvalidInputError(
                f"store={store!r} is invalid: pass a LangGraph BaseStore or a file path")
        if not namespace or not all(isinstance(label, str) and label for label in namespace):
            raise InvalidInputError(f"namespace={namespace!r} is invalid: a tuple of non-empty strings")
        self.namespace = tuple(namespace)

    def mget(self, keys: Sequence[str]) -> list[bytes | None]:
        """The values of ``keys`` (``None`` for a missing key), in order."""
        found = self.store.batch(self._gets(keys)) if keys else []
        return [_decode(item) for item in found]  # type: ignore[arg-type]

    def mset(self, key_value_pairs: Sequence[tuple[str, bytes]]) -> None:
        """Set every pair in one store batch (the last value of a repeated key wins)."""
        if key_value_pairs:
            self.store.batch(self._puts(key_value_pairs))

    def mdelete(self, keys: Sequence[str]) -> None:
        """Delete ``keys``; missing keys are ignored."""
        if keys:
            self.store.batch(self._puts((k, None) for k in keys))

    def _gets(self, keys: Sequence[str]) -> list[GetOp]:
        return [GetOp(self.namespace, _check_key(k)) for k in keys]

    def _puts(self, pairs: Iterable[tuple[str, bytes | None]]) -> list[PutOp]:
        """The puts of ``pairs`` (a ``None`` value deletes its key)."""
        return [PutOp(self.namespace, _check_key(k), None if v is None else _encode(v), index=False)
                for k, v in pairs]

    def yield_keys(self, *, prefix: str | None = None) -> Iterator[str]:
        """Every key of this namespace (starting with ``prefix`` when given), page by page;
        keys of namespaces below it belong to other maps and are not listed."""
        offset = 0
        while True:
            page = self.store.search(self.namespace, limit=_PAGE, offset=offset)
            yield from self._own_keys(page, prefix)
            if len(page) < _PAGE:
                return
            offset += _PAGE

    def _own_keys(self, page: Sequence[Item], prefix: str | None) -> list[str]:
        """The keys of ``page`` in exactly this namespace (a search also lists the
        namespaces below it, which other maps own)."""
        return [item.key for item in page if tuple(item.namespace) == self.namespace
                and (prefix is None or item.key.startswith(prefix))]

    # -- lifecycle ------------------------------------------------------------------
    def close(self) -> None:
        """Close the store when this object opened it (a store passed in stays open)."""
        close = getattr(self.store, "close", None)
        if self._owned and callable(close):
            close()

    def __enter__(self) -> HyMemoryKVStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
