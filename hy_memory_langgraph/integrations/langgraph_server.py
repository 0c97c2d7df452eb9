"""``HyMemoryStore`` as the long-term store of the LangGraph API server (``langgraph dev``,
``langgraph up``).

Point ``store.path`` of ``langgraph.json`` at :func:`langgraph_store`; the ``index`` and
``ttl`` of the same section are honoured::

    {"graphs": {...},
     "store": {"path": "hy_memory_langgraph.integrations.langgraph_server.langgraph_store",
               "index": {"dims": 384, "embed": "./embed.py:embed", "fields": ["text"]},
               "ttl": {"default_ttl": 60, "refresh_on_read": true, "sweep_interval_minutes": 5}}}

The server opens the store on its first use, and on shutdown the store's TTL sweeper stops
and the store closes (the server starts no sweeper for a store of its own: this one
starts when the section has a ``ttl``). Where the store lives: ``HY_MEMORY_SERVER_STORE``
(a SQLite path, ``":memory:"``, a PostgreSQL URL or libpq DSN), else
``{MEMORY_DATA_DIR}/data/langgraph_store.db``; on PostgreSQL the tables live in the schema
``HY_MEMORY_SERVER_STORE_SCHEMA`` (default ``langgraph_store``).

``index`` (the server requires its ``embed`` once the section is there): ``embed`` is
resolved as the server resolves it for its own store (a ``provider:model`` name, or
``./file.py:function``), ``dims`` must match it, ``fields`` are the value fields embedded.
Without an ``index`` section, the package's embedding model is used (embedded e5 by
default, OpenAI with a key; ``HY_MEMORY_EMBEDDING_MODEL``) on the fields of
``HY_MEMORY_SERVER_STORE_FIELDS`` (comma-separated, default ``$``: the whole value). So
``client.store.search_items(..., query=...)`` of the SDK ranks by meaning.

Example:
    >>> store = server_store({"HY_MEMORY_SERVER_STORE": ":memory:"}, embeddings=lambda t: [[1.0, 0.0] for _ in t],
    ...                      config={"ttl": {"default_ttl": 60}})
    >>> store.index_config["fields"], store.url, store.ttl_config["default_ttl"]
    (['$'], 'sqlite://', 60)
    >>> store.close()
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings

from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import ConfigError
from hy_memory_langgraph.models import embedding_dims, resolve_embeddings
from hy_memory_langgraph.store import HyMemoryStore

_DEFAULT_SCHEMA = "langgraph_store"
_TTL_KEYS = ("default_ttl", "refresh_on_read", "sweep_interval_minutes")


def _server_config() -> Mapping[str, Any]:
    """The ``store`` section of the running server's ``langgraph.json`` (``{}`` outside a
    server: the server's config module is only read once the server loaded it)."""
    module = sys.modules.get("langgraph_api.config")
    return dict(getattr(module, "STORE_CONFIG", None) or {})


def _embed_of(index: Mapping[str, Any]) -> Embeddings:
    """The ``embed`` of an index section, resolved as the server resolves its own."""
    embed = index["embed"]
    if isinstance(embed, Embeddings):
        return embed
    graph = sys.modules.get("langgraph_api.graph")
    if graph is None:
        raise ConfigError(f"store.index.embed={embed!r} names an embedding model the LangGraph server "
                          "resolves; outside a server pass embeddings= instead")
    return graph.resolve_embeddings(dict(index))  # type: ignore[no-any-return]


def server_store(env: Mapping[str, str] | None = None, *,
                 embeddings: Embeddings | Callable[[list[str]], Sequence[Sequence[float]]] | None = None,
                 config: Mapping[str, Any] | None = None, **kwargs: Any) -> HyMemoryStore:
    """Open the LangGraph server's store (see the module docstring).

    Args:
        env: Variables to read; ``None`` reads ``os.environ``.
        embeddings: The embedding model; ``None``: the section's ``index.embed``, else
            the package's default.
        config: A ``store`` section of ``langgraph.json`` (``index``, ``ttl``); ``None``
            reads the running server's.
        **kwargs: Other :class:`HyMemoryStore` arguments.

    Raises:
        ConfigError: A bad location, field list, data dir, or ``dims`` that do not match
            the embedding model.
    """
    env = os.environ if env is None else env
    config = _server_config() if config is None else config
    index = dict(config.get("index") or {})
    target = (env.get("HY_MEMORY_SERVER_STORE") or "").strip()
    if not target:
        target = str(MemoryConfig.from_env(env).chat_db_path.parent / "langgraph_store.db")
    fields = index.get("fields") or [f.strip() for f in (env.get("HY_MEMORY_SERVER_STORE_FIELDS") or "$").split(",")
                                     if f.strip()]
    model = resolve_embeddings(embeddings if embeddings is not None or not index.get("embed")
                               else _embed_of(index), env=env)
    dims = embedding_dims(model)
    if index.get("dims") not in (None, dims):
        raise ConfigError(f"store.index.dims={index['dims']} does not match the embedding model, which "
                          f"makes {dims}-dimensional vectors: set dims to {dims} or choose another embed")
    ttl = {k: v for k, v in (config.get("ttl") or {}).items() if k in _TTL_KEYS}
    schema = (env.get("HY_MEMORY_SERVER_STORE_SCHEMA") or "").strip() or _DEFAULT_SCHEMA
    kwargs.setdefault("ttl", ttl or None)
    kwargs.setdefault("timeout_s", float(MemoryConfig.from_env(env).db_timeout_s))
    return HyMemoryStore(target, index={"dims": dims, "embed": model, "fields": list(fields or ["$"])},
                         schema=schema, **kwargs)


@contextlib.asynccontextmanager
async def langgraph_store() -> AsyncIterator[HyMemoryStore]:
    """The store for ``store.path`` of ``langgraph.json``: opened with the server's store
    section, its TTL sweeper running while the server runs (when the section has a
    ``ttl``), stopped and closed on shutdown."""
    store = await asyncio.to_thread(server_store)
    try:
        if store.ttl_config:
            store.start_ttl_sweeper()
        yield store
    finally:
        await asyncio.to_thread(store.stop_ttl_sweeper)
        await asyncio.to_thread(store.close)
