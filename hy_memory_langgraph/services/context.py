"""The run-time context every node receives as ``runtime.context``.

:class:`MemoryContext` carries the configuration, the mode, the model gateway, the stores
(anything with the :class:`Stores` methods: the client builds a
:class:`~hy_memory_langgraph.client.stores.StoreRegistry`) and the caches of a client;
its repository properties are what the nodes read and write through.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.repos.chat import ChatRepository
from hy_memory_langgraph.repos.productivity import ProductivityRepository
from hy_memory_langgraph.repos.trace import TraceRepository
from hy_memory_langgraph.retrieval.bm25 import LexicalCache
from hy_memory_langgraph.retrieval.ranking import DEFAULT_CHAT_RANKING

if TYPE_CHECKING:  # annotations only: a reader (no model, no queue, no chain) loads none of them
    from langchain_core.embeddings import Embeddings
    from langgraph.store.base import BaseStore

    from hy_memory_langgraph.chain.store import ChainStore
    from hy_memory_langgraph.jobs.pending import PendingTurn
    from hy_memory_langgraph.models import LLMGateway
    from hy_memory_langgraph.models.calibration import Calibration
    from hy_memory_langgraph.pipeline_log.recorder import PipelineRecorder
    from hy_memory_langgraph.retrieval.ranking import ChatRanking

class Stores(Protocol):
    """The stores of a client, opened on first use (the client's
    :class:`~hy_memory_langgraph.client.stores.StoreRegistry` is one)."""

    embeddings: Embeddings

    def open(self, name: str, fields: list[str] | None) -> BaseStore:
        """The store called ``name``, indexing ``fields`` (``None``: no vectors); how a
        graph family beyond the built-in ones keeps its own memories."""
        ...

    def chat(self) -> BaseStore: ...

    def trace(self) -> BaseStore: ...

    def productivity(self, scene: str) -> BaseStore: ...

    def chain(self) -> ChainStore: ...

    def calibration(self) -> Calibration: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


class _BoundedCache:
    """A small thread-safe LRU map (at most ``size`` entries).

    Example:
        >>> cache = _BoundedCache(size=1)
        >>> cache.put("a", 1); cache.put("b", 2); cache.get("a") is None
        True
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


@dataclass
class MemoryContext:
    """Everything a node needs besides its state.

    Attributes:
        config: The effective configuration.
        mode: ``"lite"`` (zero LLM calls) or ``"pro"``.
        llm: The LLM gateway (``None`` in lite mode).
        stores: The opened stores.
        lexical: BM25 indexes kept warm between searches.
        recorder: Where the pipeline log of each request goes (``None``: no log).
        chat_ranking: The settings of chat search (fusion, BM25, time boost, weight of
            question-only turns); default the shipped choice.
        pending: The turns of the queued writes of some users (read your writes: chat
            search ranks them as pending memories); ``None``: no queue.
    """

    config: MemoryConfig
    mode: Literal["lite", "pro"]
    llm: LLMGateway | None
    stores: Stores
    lexical: LexicalCache = field(default_factory=LexicalCache)
    search_cache: _BoundedCache = field(default_factory=_BoundedCache)
    recorder: PipelineRecorder | None = None
    chat_ranking: ChatRanking = DEFAULT_CHAT_RANKING
    pending: Callable[[Sequence[str]], list[PendingTurn]] | None = None
    _chat_repo: ChatRepository | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def chat_repo(self) -> ChatRepository:
        """The chat repository over the chat store (made once per store: asking a store
        for its capabilities costs more than a lite write's planning)."""
        store = self.stores.chat()
        repo = self._chat_repo
        if repo is None or repo.store is not store:
            repo = self._chat_repo = ChatRepository(store)
        return repo

    @property
    def chat_traces(self) -> TraceRepository:
        return TraceRepository(self.stores.chat())

    @property
    def productivity_traces(self) -> TraceRepository:
        return TraceRepository(self.stores.trace())

    @property
    def chain_store(self) -> ChainStore:
        """The coding version-evolution chain store."""
        return self.stores.chain()

    def productivity_repo(self, scene: str) -> ProductivityRepository:
        """Experiences and facts of a productivity scene."""
        return ProductivityRepository(self.stores.productivity(scene), self.config, scene)
