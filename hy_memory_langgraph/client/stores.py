"""The composition root of a client's stores: which store lives where, opened once.

:func:`default_store_factory` decides where a store lives (``MEMORY_DB_URL`` or a SQLite
file of the data dir); :class:`StoreRegistry` opens each store by name on first use,
keeps the similarity calibration of the embedding model, and closes them together. The
nodes see it only through :class:`~hy_memory_langgraph.services.context.Stores`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, IndexConfig

from hy_memory_langgraph.chain.store import ChainStore
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import StoreError
from hy_memory_langgraph.models.calibration import Calibration, CalibrationCache
from hy_memory_langgraph.redact.gate import gate
from hy_memory_langgraph.repos.records import ChatMemory, Fact
from hy_memory_langgraph.store import ApproximateSearch, HyMemoryStore, IndexCache, SealedStore
from hy_memory_langgraph.store.db.engine import is_provisional
from hy_memory_langgraph.workflow.database import WorkflowDatabase
from hy_memory_langgraph.workflow.files import WorkflowDocuments, workflow_documents

#: Opens the store called ``name`` (``chat_memory``, ``coding_memory_cv``…) with an index config.
StoreFactory = Callable[[str, IndexConfig | None], BaseStore]


def default_store_factory(config: MemoryConfig, cache: IndexCache | None = None) -> StoreFactory:
    """The factory deciding where each store lives: ``MEMORY_DB_URL`` or a SQLite file.

    Example:
        >>> from hy_memory_langgraph.config import MemoryConfig
        >>> import tempfile
        >>> factory = default_store_factory(MemoryConfig.from_env({}, data_dir=tempfile.mkdtemp()))
        >>> store = factory("chat_memory", None); store.put(("a",), "k", {"v": 1}); store.close()
    """

    approximate = ApproximateSearch(min_vectors=config.approximate_min_vectors)
    # PostgreSQL: approximate scope indexes are saved under the data dir (SQLite: beside each file)
    on_server = ApproximateSearch(min_vectors=config.approximate_min_vectors,
                                  snapshot_dir=Path(config.data_dir) / "ann")

    timeout_s = float(config.db_timeout_s)

    def open_store(name: str, index: IndexConfig | None) -> BaseStore:
        target, schema = config.store_target(name)
        if schema is not None:
            return HyMemoryStore.from_url(target, name=schema, index=index, index_cache=cache,
                                          approximate=on_server, timeout_s=timeout_s)
        return HyMemoryStore(target, index=index, index_cache=cache, approximate=approximate,
                             timeout_s=timeout_s)

    return open_store


def workflow_documents_for(config: MemoryConfig) -> WorkflowDocuments:
    """Where a configuration keeps workflow memory: markdown files under the data dir, or
    the ``workflow_memory`` schema of ``MEMORY_DB_URL``."""
    target, schema = config.store_target(config.workflow_store)
    sealed = gate(config.redact_secrets)
    if schema is None:
        return workflow_documents(target, sealed=sealed)
    return WorkflowDatabase(target, schema=schema, sealed=sealed, timeout_s=float(config.db_timeout_s))


class StoreRegistry:
    """Opens each store once, by name, lazily, and closes them together.

    Args:
        config: Where the stores live (``MEMORY_DB_URL`` or files under the data dir).
        embeddings: The embedding model every vector index uses; ``None`` opens every
            store without its vector index (a
            :class:`~hy_memory_langgraph.client.reader.MemoryReader`'s stores: nothing is
            embedded, the stored vectors are left as they are).
        dims: The model's vector size (``None`` with no model).
        factory: Opens a store for a name and an index config; default
            :func:`default_store_factory`.
        index_cache: The scope-index cache of the default factory's stores.
    """

    def __init__(self, config: MemoryConfig, embeddings: Embeddings | None, dims: int | None,
                 factory: StoreFactory | None = None, index_cache: IndexCache | None = None) -> None:
        self.config = config
        self.embeddings = embeddings
        self.dims = dims
        self._factory = factory or default_store_factory(config, index_cache)
        self._stores: dict[str, BaseStore] = {}
        self._chain: ChainStore | None = None
        self._lock = threading.Lock()
        self._calibrations = CalibrationCache(config.calibration_path)
        # the names every write asks for, derived from the (frozen) config once
        self._chat_name, self._trace_name = config.chat_db_path.stem, config.trace_db_path.stem

    def calibration(self) -> Calibration:
        """The similarity anchors of the embedding model (measured once, then read from
        ``config.calibration_path``)."""
        if self.embeddings is None:
            raise StoreError("the stores were opened without an embedding model: open a "
                             "HyMemoryClient to compare vectors")
        return self._calibrations.get(self.embeddings)

    def index(self, fields: list[str]) -> IndexConfig | None:
        """The index config of a store indexing ``fields`` (``None`` without a model)."""
        if self.embeddings is None or self.dims is None:
            return None
        return {"dims": self.dims, "embed": self.embeddings, "fields": fields}

    def open(self, name: str, fields: list[str] | None) -> BaseStore:
        """The store called ``name`` (opened on first use): with redaction on (the
        default), behind the privacy gate (:class:`~hy_memory_langgraph.store.SealedStore`),
        so nothing any code path writes through it escapes the gate.

        A store standing in for a database that could not be opened as it is
        (``provisional``: not created in a read-only directory or on a full disk, only
        readable on a full disk) is not kept: the next call opens it again, and gets the
        database itself once it can."""
        with self._lock:
            if name in self._stores:
                return self._stores[name]
            index = self.index(fields) if fields else None
            store = self._factory(name, index)
            sealed = SealedStore.around(store) if self.config.redact_secrets else store
            if getattr(store, "provisional", False) is not True:
                self._stores[name] = sealed
            return sealed

    def chat(self) -> BaseStore:
        return self.open(self._chat_name, list(ChatMemory.index_fields))

    def trace(self) -> BaseStore:
        return self.open(self._trace_name, None)

    def productivity(self, scene: str) -> BaseStore:
        """The store of a productivity scene (``config.scene_store(scene)``).

        Its default index field is the facts' ``embed_text``; experiences pass their
        own index paths on each put.
        """
        return self.open(self.config.scene_store(scene), list(Fact.index_fields))

    def chain(self) -> ChainStore:
        """The coding version-evolution chain (``hy_code``), opened lazily."""
        with self._lock:
            if self._chain is None:
                target, schema = self.config.store_target(self.config.chain_db_path.stem)
                chain = ChainStore(target, schema=schema, sealed=gate(self.config.redact_secrets),
                                   timeout_s=float(self.config.db_timeout_s))
                if is_provisional(chain.engine):  # opened again next time (see open())
                    return chain
                self._chain = chain
            return self._chain

    def flush(self) -> None:
        """After a delete: let every opened store that keeps local files drop what it
        still holds of erased data (index files, write-ahead logs)."""
        with self._lock:
            stores = list(self._stores.values())
            chain = self._chain
        for store in stores:
            flush = getattr(store, "flush_erasure", None)
            if callable(flush):
                flush()
        if chain is not None:
            chain.flush_erasure()

    def close(self) -> None:
        with self._lock:
            if self._chain is not None:
                self._chain.close()
                self._chain = None
            for store in self._stores.values():
                close = getattr(store, "close", None)
                if callable(close):
                    close()
            self._stores.clear()
