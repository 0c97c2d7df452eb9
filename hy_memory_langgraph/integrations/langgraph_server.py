"""``HyMemoryStore`` as the long-term store of the LangGraph API server (``langgraph dev``,
``langgraph up``).

Point ``store.path`` of ``langgraph.json`` at :func:`server_store`::

    {"graphs": {...}, "store": {"path": "hy_memory_langgraph.integrations.langgraph_server.server_store"}}

The server then opens the store once, on its first use, and closes it on shutdown. Where:
``HY_MEMORY_SERVER_STORE`` (a SQLite path, ``":memory:"``, a PostgreSQL URL or libpq DSN),
else ``{MEMORY_DATA_DIR}/data/langgraph_store.db``; on PostgreSQL the tables live in the
schema ``HY_MEMORY_SERVER_STORE_SCHEMA`` (default ``langgraph_store``). Items are embedded
with the package's embedding model (embedded e5 by default, OpenAI with a key; see
``HY_MEMORY_EMBEDDING_MODEL``) on the fields of ``HY_MEMORY_SERVER_STORE_FIELDS``
(comma-separated, default ``$``: the whole value), so ``client.store.search_items(...,
query=...)`` of the SDK ranks by meaning.

Example:
    >>> store = server_store({"HY_MEMORY_SERVER_STORE": ":memory:"}, embeddings=lambda t: [[1.0, 0.0] for _ in t])
    >>> store.index_config["fields"], store.url
    (['$'], 'sqlite://')
    >>> store.close()
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings

from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.models import embedding_dims, resolve_embeddings
from hy_memory_langgraph.store import HyMemoryStore

__all__ = ["server_store"]

_DEFAULT_SCHEMA = "langgraph_store"


def server_store(env: Mapping[str, str] | None = None, *,
                 embeddings: Embeddings | Callable[[list[str]], Sequence[Sequence[float]]] | None = None,
                 **kwargs: Any) -> HyMemoryStore:
    """Open the LangGraph server's store from the environment (see the module docstring).

    Args:
        env: Variables to read; ``None`` reads ``os.environ``.
        embeddings: The embedding model; ``None`` resolves the package's default.
        **kwargs: Other :class:`HyMemoryStore` arguments (``ttl``, ...).

    Raises:
        ConfigError: A bad location, field list or data dir.
    """
    env = os.environ if env is None else env
    target = (env.get("HY_MEMORY_SERVER_STORE") or "").strip()
    if not target:
        target = str(MemoryConfig.from_env(env).chat_db_path.parent / "langgraph_store.db")
    fields = [f.strip() for f in (env.get("HY_MEMORY_SERVER_STORE_FIELDS") or "$").split(",") if f.strip()]
    model = resolve_embeddings(embeddings, env=env)
    index = {"dims": embedding_dims(model), "embed": model, "fields": fields or ["$"]}
    schema = (env.get("HY_MEMORY_SERVER_STORE_SCHEMA") or "").strip() or _DEFAULT_SCHEMA
    return HyMemoryStore(target, index=index, schema=schema, **kwargs)  # type: ignore[arg-type]
