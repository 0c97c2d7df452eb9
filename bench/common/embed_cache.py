"""On-disk cache of embeddings, keyed by a hash of (model, side, text); never in the repo.

Benchmarks sweep ranking parameters over the same turns and questions many times; the
embeddings are the only expensive part, so they are computed once and kept under
``$HY_RECALL_CACHE`` (default ``~/.cache/hy_memory_recall``) as one ``.npz`` per
(model, side): ``keys`` (sha1 hex of the text) and ``vecs`` (float32 rows).

Example:
    >>> cache = EmbeddingCache(tag="hashing-64")  # doctest: +SKIP
    >>> vecs = cache.embed(["hello"], embed_fn, side="query")  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["EmbeddingCache", "default_cache_dir", "text_key"]

FloatMatrix = npt.NDArray[np.float32]
EmbedFn = Callable[[list[str]], Sequence[Sequence[float]]]


def default_cache_dir() -> Path:
    """``$HY_RECALL_CACHE`` or ``~/.cache/hy_memory_recall``."""
    return Path(os.environ.get("HY_RECALL_CACHE", Path.home() / ".cache" / "hy_memory_recall"))


def text_key(text: str) -> str:
    """Stable key of one text (sha1 hex of its UTF-8 bytes)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Embeddings of texts, computed once per (model tag, side) and kept on disk.

    Args:
        tag: Names the model (part of the file name, so two models never mix).
        cache_dir: Where the ``.npz`` files live (default :func:`default_cache_dir`).
    """

    def __init__(self, tag: str, cache_dir: Path | None = None) -> None:
        self.tag = tag
        self.dir = cache_dir or default_cache_dir()
        self._tables: dict[str, dict[str, npt.NDArray[np.float32]]] = {}

    def _path(self, side: str) -> Path:
        return self.dir / f"{self.tag}-{side}.npz"

    def _table(self, side: str) -> dict[str, npt.NDArray[np.float32]]:
        if side not in self._tables:
            table: dict[str, npt.NDArray[np.float32]] = {}
            path = self._path(side)
            if path.exists():
                with np.load(path) as data:
                    table = {str(k): v for k, v in zip(data["keys"], data["vecs"], strict=True)}
            self._tables[side] = table
        return self._tables[side]

    def _save(self, side: str) -> None:
        table = self._tables[side]
        self.dir.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(table), dtype="U40")
        vecs = np.stack(list(table.values())).astype(np.float32)
        tmp = self._path(side).with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys, vecs=vecs)
        tmp.replace(self._path(side))

    def embed(self, texts: Sequence[str], fn: EmbedFn, *, side: str, batch: int = 256,
              progress: Callable[[int, int], None] | None = None) -> FloatMatrix:
        """Rows for ``texts`` (in order), computing and saving only the missing ones.

        Args:
            texts: Texts to embed.
            fn: Embeds a list of texts (called in batches on cache misses).
            side: ``"passage"`` or ``"query"`` (kept apart: e5 embeds them differently).
            batch: Texts per ``fn`` call; the cache is saved after each call.
            progress: Called with ``(done, missing)`` after each batch.
        """
        table = self._table(side)
        missing = list(dict.fromkeys(t for t in texts if text_key(t) not in table))
        for start in range(0, len(missing), batch):
            chunk = missing[start : start + batch]
            for text, vec in zip(chunk, fn(chunk), strict=True):
                table[text_key(text)] = np.asarray(vec, dtype=np.float32)
            self._save(side)
            if progress is not None:
                progress(start + len(chunk), len(missing))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([table[text_key(t)] for t in texts])
