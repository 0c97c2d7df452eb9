"""Similarity calibration per embedding model: unrelated maps to 0, the same text to 1.

Cosine gates only mean something for a given model. OpenAI embeddings give unrelated
sentences a cosine near 0 and a text compared with itself 1; multilingual-e5 gives
unrelated sentences about 0.74 (English) or 0.83 (Chinese) and a text embedded as a
query against itself embedded as a document about 0.94-0.97, so a gate of 0.3 (or 0.5)
never cuts anything with e5. A :class:`Calibration` measures, once per model and per
language, on a bundled reference sample
(:mod:`~hy_memory_langgraph.models.reference_sentences`, English and Chinese, each
sentence embedded as a query and as a document, as searches compare them):

* the **floor**: the mean cosine of the unrelated pairs (every ordered pair of two
  different sentences of the language);
* the **ceiling**: the mean cosine of each sentence with itself;

and maps a raw cosine to

    calibrated = (cosine - floor) / (ceiling - floor)

so unrelated texts score about 0 and the same text 1, with every model; the language is
the query's (:func:`~hy_memory_langgraph.messages.detect_text_language`). The gates of
productivity memory compare calibrated similarities, so they mean with e5 what they
mean with OpenAI embeddings.

A calibration is kept in a small JSON file of the data dir, keyed by the model's
identity (:func:`model_identity`) and the reference sample's version, and measured
again only when either changes (:class:`CalibrationCache`). The embedded default model's
calibration ships with the package (``calibrations.json``, written by
``python -m hy_memory_langgraph.models.bundle``; a test measures it again), so a
fresh data dir does not spend a second measuring it; a calibration measured in a process
serves every data dir of that process. Calibrations are found by the model's identity,
never by comparing numbers: the same model gives slightly different cosines on another
CPU kernel or build (``bench/e5_kernels.py`` measures floors and ceilings moving by up to
about 1.3e-4), which the gates never notice (:data:`KERNEL_TOLERANCE`).

Example:
    >>> cal = Calibration("m", {"en": LanguageScale(0.75, 0.95, 0.03, 10)}, "r")
    >>> round(cal.similarity(0.75, "en"), 3), round(cal.similarity(0.9, "en"), 3)
    (0.0, 0.75)
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import statistics
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from langchain_core.embeddings import Embeddings

from hy_memory_langgraph.messages.language import detect_text_language
from hy_memory_langgraph.models.identity import base_embeddings, model_identity
from hy_memory_langgraph.models.reference_sentences import (
    REFERENCE_SENTENCES,
    REFERENCE_VERSION,
)

if TYPE_CHECKING:  # NumPy is imported where a calibration is measured: reading memories loads none
    import numpy as np

#: The smallest ceiling - floor range trusted; a model squeezing its scores more is
#: mapped with a ceiling of 1.
MIN_RANGE: Final = 0.02
#: A query vector this close to the same text's document vector means the model embeds
#: both sides alike (no query prefix): the calibration then asks no more query calls.
_SYMMETRIC_COSINE: Final = 0.9999
#: How far a floor or ceiling may move between CPU kernels and builds of one model and
#: still be the same calibration: about 8x the largest shift measured
#: (``bench/e5_kernels.py``: 1.1e-4 across five builds of the e5 engine, 1.3e-4 between
#: an AVX2 and an AVX-512/AMX machine); on the calibrated scale (ceiling - floor is
#: 0.14-0.2 for e5) it moves a similarity by less than 0.01, far inside any gate.
KERNEL_TOLERANCE: Final = 1e-3
#: Calibrations shipped with the package (the embedded default model's).
_BUNDLED_PATH: Final = Path(__file__).with_name("calibrations.json")
log = logging.getLogger(__name__)
# Calibrations known in this process, by cache key (shared by every CalibrationCache).
_PROCESS: dict[str, Calibration] = {}


@dataclass(frozen=True)
class LanguageScale:
    """One language's anchors.

    Attributes:
        floor: Mean cosine of the reference sample's unrelated pairs.
        ceiling: Mean cosine of each reference sentence with itself (query vs document).
        spread: Standard deviation of the unrelated pairs' cosines.
        pairs: How many unrelated pairs were measured.
    """

    floor: float
    ceiling: float
    spread: float
    pairs: int

    def similarity(self, cosine: float) -> float:
        """``cosine`` on the calibrated scale."""
        ceiling = self.ceiling if self.ceiling - self.floor >= MIN_RANGE else 1.0
        return (cosine - self.floor) / max(ceiling - self.floor, MIN_RANGE)

    def cosine(self, similarity: float) -> float:
        """The raw cosine of a calibrated similarity (inverse of :meth:`similarity`)."""
        ceiling = self.ceiling if self.ceiling - self.floor >= MIN_RANGE else 1.0
        return self.floor + similarity * max(ceiling - self.floor, MIN_RANGE)


@dataclass(frozen=True)
class Calibration:
    """The anchors of one embedding model, per language of the reference sample.

    Attributes:
        model: The model's identity (:func:`model_identity`).
        languages: ``{"en": LanguageScale, "zh": LanguageScale}``.
        reference: Version of the reference sample.
    """

    model: str
    languages: dict[str, LanguageScale]
    reference: str

    def scale(self, language: str) -> LanguageScale:
        """The anchors of ``language`` (English when the sample has no such language)."""
        return self.languages.get(language) or self.languages["en"]

    def similarity(self, cosine: float, language: str = "en") -> float:
        """``cosine`` on the calibrated scale: about 0 for unrelated texts, 1 for the same."""
        return self.scale(language).similarity(cosine)

    def for_text(self, text: str) -> LanguageScale:
        """The anchors of the language ``text`` is written in (a query, a draft task)."""
        return self.scale(detect_text_language(text))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibration:
        return cls(model=str(data["model"]), reference=str(data["reference"]),
                   languages={k: LanguageScale(**v) for k, v in data["languages"].items()})


def _unit(rows: list[list[float]]) -> np.ndarray:
    import numpy as np

    matrix = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


def cache_key(emb: Embeddings) -> str:
    """What a calibration of ``emb`` is stored under: model identity and reference version."""
    return f"{model_identity(emb)}|{REFERENCE_VERSION}"


def _read_file(path: Path) -> dict[str, Calibration]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {k: Calibration.from_dict(v) for k, v in data.items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}  # unreadable or from another version: measured again


def bundled() -> dict[str, Calibration]:
    """The calibrations shipped with the package, by :func:`cache_key`."""
    return _read_file(_BUNDLED_PATH)


def calibrate(emb: Embeddings) -> Calibration:
    """Measure ``emb``'s anchors on the reference sample (one document call for all the
    sentences, one query call per sentence; a model that embeds the first sentence as a
    query exactly as it does as a document, such as OpenAI's, gets no more query calls:
    its document vectors serve as the queries).

    Example:
        >>> from hy_memory_langgraph.testing import HashingEmbeddings
        >>> cal = calibrate(HashingEmbeddings(dims=64))
        >>> sorted(cal.languages), cal.scale("zh").floor < cal.scale("zh").ceiling
        (['en', 'zh'], True)
    """
    import numpy as np

    emb = base_embeddings(emb)  # the reference sentences need no window, nor a cache entry
    sentences = [s for group in REFERENCE_SENTENCES.values() for s in group]
    docs = _unit(emb.embed_documents(sentences))
    first = _unit([emb.embed_query(sentences[0])])
    if float(first[0] @ docs[0]) >= _SYMMETRIC_COSINE:
        queries = docs
    else:
        queries = np.vstack([first, _unit([emb.embed_query(s) for s in sentences[1:]])])
    cosines = queries @ docs.T
    languages: dict[str, LanguageScale] = {}
    offset = 0
    for language, group in REFERENCE_SENTENCES.items():
        rows = range(offset, offset + len(group))
        unrelated = [float(cosines[i, j]) for i in rows for j in rows if i != j]
        languages[language] = LanguageScale(
            floor=statistics.fmean(unrelated), ceiling=statistics.fmean(float(cosines[i, i]) for i in rows),
            spread=statistics.pstdev(unrelated), pairs=len(unrelated))
        offset += len(group)
    return Calibration(model=model_identity(emb), languages=languages, reference=REFERENCE_VERSION)


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
        """The calibration of ``emb``: from memory, the file, the process, the package's
        bundle, else measured (and saved to the file)."""
        key = cache_key(emb)
        with self._lock:
            known = self._known.get(key) or self._read().get(key)
            if known is None:
                known = _PROCESS.get(key) or bundled().get(key) or calibrate(emb)
                self._write(key, known)
            self._known[key] = _PROCESS[key] = known
            return known

    def _read(self) -> dict[str, Calibration]:
        return _read_file(self.path) if self.path is not None else {}

    def _write(self, key: str, calibration: Calibration) -> None:
        """Keep ``calibration`` in the file; a file that cannot be written (a read-only
        data dir) leaves it in memory only, logged (it is measured again next time)."""
        if self.path is None:
            return
        try:
            self._write_file(key, calibration)
        except OSError as exc:
            log.info("similarity calibration not saved to %s: %s", self.path, exc)

    def _write_file(self, key: str, calibration: Calibration) -> None:
        assert self.path is not None
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
