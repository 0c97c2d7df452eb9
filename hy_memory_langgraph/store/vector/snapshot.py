"""Snapshots of approximate scope indexes: a cold open maps a file instead of rebuilding.

Building the IVF index of a large scope reads every vector and clusters a sample
(about 50 s for a million vectors on one core). When a scope is loaded from the
database and its index is approximate, the store writes a snapshot of it: the
FAISS index (``<stem>.ivf``) and its coded twin (``<stem>.codes``), the scope's item
layout (``<stem>.layout.npz``: item ids, vectors per item, namespaces) and a small manifest (``<stem>.json``, written
last: the commit point) naming the store (its ``store_uid``), the scope, the
vector size, the metric and the change-log position the snapshot reflects.

A later cold open of the scope maps the index file read-only (pages are read as
searches touch them, so the first search does not wait for the whole file) and
replays the change log after the snapshot's position: changed items go to a small
in-memory overlay, removed ones are masked (see :mod:`.index`). A snapshot is used
only when everything matches and the log still holds every change since it;
anything else (a missing or torn file, another store, the log pruned past it, too
many changes to overlay) means the scope is loaded from the database as before.

Erasure: a snapshot holds vectors of the items it indexed, so removing an item
from a scope (delete, expiry) discards that scope's snapshot in this store's
directory, and a store that finds a removed item in a snapshot it loads discards
the file too.

Example:
    >>> import tempfile
    >>> snaps = SnapshotDir(tempfile.mkdtemp(), store_uid="abc")
    >>> snaps.read("chat.u1", dims=384, metric="cosine") is None
    True
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hy_memory_langgraph.store.vector.approximate import IvfPair

log = logging.getLogger(__name__)

#: 2: an 8-bit twin (``.sq``) beside the full-vector index; 3: the 1-bit twin (``.codes``)
_FORMAT = 3
_SUFFIXES = (".json", ".ivf", ".codes", ".layout.npz")
#: Files of earlier formats: removed with a scope's snapshot (they hold coded vectors too).
_OLD_SUFFIXES = (".sq",)


@dataclass(frozen=True)
class Snapshot:
    """A scope's approximate index as written: the mapped index and its layout."""

    index: IvfPair
    item_ids: npt.NDArray[np.int64]
    counts: npt.NDArray[np.int64]
    namespaces: list[str]
    seq: int


def _no_prefetch(faiss: Any, index: Any) -> None:
    """Stop a mapped index's lists from starting reader threads before each search.

    FAISS's on-disk lists touch the probed lists' pages from 32 new threads per search
    by default (meant for slow disks); for a file in the page cache that costs more
    than the scan itself (200,000 vectors, 90 lists: 4.15 ms with it, 1.28 ms without,
    1.24 ms in memory). Pages not yet read are still read as the scan touches them.
    """
    lists = faiss.downcast_InvertedLists(index.invlists)
    if hasattr(lists, "prefetch_nthread"):
        lists.prefetch_nthread = 0


class SnapshotDir:
    """Where one store keeps the snapshots of its approximate scopes.

    Args:
        directory: The folder (created on the first write).
        store_uid: The store's identity (``hy_store_meta.store_uid``): a snapshot of
            another database is never used, even in a shared folder.
    """

    def __init__(self, directory: str | Path, *, store_uid: str) -> None:
        self.directory = Path(directory)
        self.store_uid = store_uid

    def _stem(self, scope: str) -> Path:
        digest = hashlib.sha256(f"{self.store_uid}\0{scope}".encode()).hexdigest()[:32]
        return self.directory / digest

    def exists(self, scope: str) -> bool:
        return self._stem(scope).with_suffix(".json").exists()

    def write(self, scope: str, index: IvfPair, *, item_ids: list[int], counts: list[int],
              namespaces: list[str], seq: int, dims: int, metric: str) -> bool:
        """Write a snapshot of ``scope`` (replacing any); ``False`` when it could not be."""
        import faiss

        stem = self._stem(scope)
        tmp = f".{uuid.uuid4().hex[:8]}.tmp"
        names = sorted(set(namespaces))
        position = {ns: i for i, ns in enumerate(names)}
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            faiss.write_index(index.exact, str(stem) + ".ivf" + tmp)
            faiss.write_index(index.codes, str(stem) + ".codes" + tmp)
            with open(str(stem) + ".layout.npz" + tmp, "wb") as handle:
                np.savez(handle, item_ids=np.asarray(item_ids, np.int64), counts=np.asarray(counts, np.int64),
                         ns_index=np.asarray([position[ns] for ns in namespaces], np.int32))
            manifest = {"format": _FORMAT, "store_uid": self.store_uid, "scope": scope, "seq": seq,
                        "dims": dims, "metric": metric, "ntotal": int(index.exact.ntotal), "namespaces": names,
                        "ivf_bytes": os.path.getsize(str(stem) + ".ivf" + tmp),
                        "codes_bytes": os.path.getsize(str(stem) + ".codes" + tmp)}
            Path(str(stem) + ".json" + tmp).write_text(json.dumps(manifest), encoding="utf-8")
            for suffix in (".ivf", ".codes", ".layout.npz", ".json"):  # the manifest last: the commit
                os.replace(str(stem) + suffix + tmp, str(stem) + suffix)
            _unlink(stem, _OLD_SUFFIXES)
            return True
        except (OSError, RuntimeError) as exc:
            log.warning("the approximate index of a scope could not be saved in %s (%s); a cold open "
                        "of that scope rebuilds it", self.directory, exc)
            _unlink(stem, tuple(suffix + tmp for suffix in _SUFFIXES))
            return False

    def read(self, scope: str, *, dims: int, metric: str) -> Snapshot | None:
        """The snapshot of ``scope`` when one matches this store, or ``None``."""
        stem = self._stem(scope)
        try:
            manifest = json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        expected = {"format": _FORMAT, "store_uid": self.store_uid, "scope": scope, "dims": dims,
                    "metric": metric}
        if not isinstance(manifest, dict) or any(manifest.get(k) != v for k, v in expected.items()):
            return None
        try:
            return self._load(stem, manifest)
        except (OSError, RuntimeError, ValueError, KeyError, TypeError, IndexError) as exc:
            log.warning("an unusable index snapshot was discarded (%s): the scope is loaded from the "
                        "database", exc)
            self.discard(scope)
            return None

    def _load(self, stem: Path, manifest: dict[str, Any]) -> Snapshot | None:
        import faiss

        ivf_path, codes_path = str(stem) + ".ivf", str(stem) + ".codes"
        if os.path.getsize(ivf_path) != manifest["ivf_bytes"] \
                or os.path.getsize(codes_path) != manifest["codes_bytes"]:
            return None  # a newer snapshot is being written over this one
        with np.load(str(stem) + ".layout.npz") as layout:
            item_ids = layout["item_ids"].astype(np.int64)
            counts = layout["counts"].astype(np.int64)
            ns_index = layout["ns_index"]
        names = [str(ns) for ns in manifest["namespaces"]]
        index = faiss.read_index(ivf_path, faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
        codes = faiss.read_index(codes_path, faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
        for mapped in (index, codes):
            _no_prefetch(faiss, mapped)
        if int(index.ntotal) != manifest["ntotal"] or int(counts.sum()) != int(index.ntotal) \
                or int(codes.ntotal) != int(index.ntotal) or {index.d, codes.d} != {manifest["dims"]} \
                or len(item_ids) != len(counts) != len(ns_index):
            raise ValueError("the snapshot's files do not agree")
        return Snapshot(index=IvfPair(index, codes), item_ids=item_ids, counts=counts,
                        namespaces=[names[i] for i in ns_index], seq=int(manifest["seq"]))

    def discard(self, scope: str) -> None:
        """Remove the snapshot of ``scope`` (its manifest first: readers stop using it)."""
        _unlink(self._stem(scope), _SUFFIXES + _OLD_SUFFIXES)


def _unlink(stem: Path, suffixes: tuple[str, ...]) -> None:
    for suffix in suffixes:
        with contextlib.suppress(OSError):
            os.unlink(str(stem) + suffix)

