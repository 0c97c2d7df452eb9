"""Helpers shared by the store tests (imported as a plain module)."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence

import numpy as np
from langgraph.store.base import BaseStore, IndexConfig, SearchItem

from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.testing import HashingEmbeddings

DIMS = 64

StoreFactory = Callable[..., BaseStore]


def index_config(fields: list[str] | None = None, dims: int = DIMS) -> IndexConfig:
    config: IndexConfig = {"dims": dims, "embed": HashingEmbeddings(dims=dims)}
    if fields is not None:
        config["fields"] = fields
    return config


def is_hy(store: BaseStore) -> bool:
    return isinstance(store, HyMemoryStore)


def keys(results: Sequence[SearchItem]) -> list[str]:
    return [r.key for r in results]


def key_set(results: Sequence[SearchItem]) -> set[str]:
    return {r.key for r in results}


def scores_close(a: Sequence[float | None], b: Sequence[float | None], tol: float = 1e-4) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if (x is None) != (y is None):
            return False
        if x is not None and y is not None and not math.isclose(x, y, abs_tol=tol):
            return False
    return True


def clustered_embed(dims: int, centres: int) -> Callable[[list[str]], list[list[float]]]:
    """Seeded clustered vectors: text ``"c<centre> <anything>"`` lies near centre ``c``."""
    points = np.random.default_rng(5).normal(size=(centres, dims))

    def embed(texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            rng = np.random.default_rng(zlib.crc32(text.encode()))
            out.append((points[int(text.split()[0][1:]) % centres] + rng.normal(0, 0.35, dims)).tolist())
        return out

    return embed

