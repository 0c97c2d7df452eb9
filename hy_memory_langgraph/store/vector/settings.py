"""What a store's vector side is configured and laid out with, importable without NumPy.

A store opened without an index (the client's :class:`~hy_memory_langgraph.client.MemoryReader`,
the ``hy-memory`` reading commands) checks its arguments and plans its batches with
these alone; only a store opened with an index loads :mod:`.scoped` and with it NumPy
and FAISS.

Vector ids pack the owning item id and the vector's position inside the item,
``(item_id << POS_BITS) | pos`` (see :mod:`.index`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from hy_memory_langgraph.config.settings import DEFAULT_APPROXIMATE_MIN_VECTORS
from hy_memory_langgraph.errors import ConfigError

POS_BITS = 20
MAX_VECTORS_PER_ITEM = 1 << POS_BITS
#: Estimated bytes per vector of an index's id bookkeeping: the id beside the vector and
#: its id-map entry (a million vectors in an IVF pair measured 1,706 MB, ids and codes
#: 1,608 MB of it: about 50 more bytes per vector in each of the two indexes).
ID_BYTES = 56

#: LangGraph's ``distance_type`` values the index ranks by.
METRICS = ("cosine", "inner_product", "l2")


@dataclass(frozen=True)
class ApproximateSearch:
    """When and how a scope's index becomes approximate.

    Args:
        min_vectors: Vectors a scope must hold before it is indexed approximately
            (``0`` turns approximate search off: every scope stays exact; the default
            is ``MEMORY_APPROXIMATE_MIN_VECTORS``'s, 200,000).
        nprobe: Lists ranked per search at least (more: higher recall, slower).
        probe_root: Lists ranked per search at least, as a multiple of the square
            root of the list count: the lists a recall needs grow more slowly than
            the lists themselves. On e5 vectors of real text the probes reaching
            recall@10 0.98 went from 16 to 32 while the lists grew from 84 to 337
            (``bench/ann_recall.py growth``: an exponent of 0.5), and 32 probes of
            337 lists reached it on held-out folds: 1.75 keeps that point.
        exact_share: A restricted search whose candidates are less than this share
            of the scope scans every list under its selector (exact).
        snapshots: Save approximate scope indexes so a cold open maps them instead
            of rebuilding (see :mod:`.snapshot`).
        snapshot_dir: Where: ``None`` is beside a SQLite file (``<file>.ann``) and
            nowhere for other databases (pass a local folder for PostgreSQL).

    Raises:
        ConfigError: a value is out of range.

    Example:
        >>> ApproximateSearch(min_vectors=0).enabled
        False
        >>> settings = ApproximateSearch(min_vectors=50_000)
        >>> settings.lists_to_probe(337), settings.lists_to_probe(2000)
        (33, 79)
    """

    min_vectors: int = DEFAULT_APPROXIMATE_MIN_VECTORS
    nprobe: int = 32
    probe_root: float = 1.75
    exact_share: float = 0.5
    snapshots: bool = True
    snapshot_dir: str | Path | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.min_vectors, int) or self.min_vectors < 0:
            raise ConfigError(f"min_vectors must be an int >= 0 (0 = always exact), got {self.min_vectors!r}")
        if not isinstance(self.nprobe, int) or self.nprobe < 1:
            raise ConfigError(f"nprobe must be an int >= 1, got {self.nprobe!r}")
        if not isinstance(self.probe_root, (int, float)) or self.probe_root < 0:
            raise ConfigError(f"probe_root must be a number >= 0, got {self.probe_root!r}")
        if not 0.0 <= self.exact_share <= 1.0:
            raise ConfigError(f"exact_share must be between 0 and 1, got {self.exact_share!r}")

    @property
    def enabled(self) -> bool:
        return self.min_vectors > 0

    def lists_to_probe(self, nlist: int) -> int:
        """Lists one search ranks in an index of ``nlist`` lists."""
        return min(nlist, max(self.nprobe, math.ceil(self.probe_root * math.sqrt(nlist))))
