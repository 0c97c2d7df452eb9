"""Atomic persistence of the derived FAISS index next to the SQLite file.

Two files: ``<db>.faiss`` (FAISS serialisation) and ``<db>.faiss.json`` (the
manifest: store uid, dims, the change-log position ``seq`` the index reflects,
vector count and a BLAKE2b checksum of the index bytes). Each is written to a
temporary file in the same directory and moved into place with ``os.replace``;
a torn pair (crash or two processes racing) fails the checksum and is rebuilt.

Example:
    >>> import numpy as np, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> m = Manifest(store_uid="u", dims=3, seq=5, ntotal=0, checksum="")
    >>> save(d / "db.faiss", np.zeros(4, dtype="uint8"), m)
    >>> load(d / "db.faiss")[1].seq
    5
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import numpy.typing as npt

from hy_memory_langgraph.errors import StoreCorruptionError

__all__ = ["Manifest", "FORMAT_VERSION", "index_paths", "save", "load", "checksum"]

FORMAT_VERSION = 1


@dataclasses.dataclass(frozen=True)
class Manifest:
    """What a persisted index reflects."""

    store_uid: str
    dims: int
    seq: int
    ntotal: int
    checksum: str
    version: int = FORMAT_VERSION


def index_paths(db_file: Path) -> tuple[Path, Path]:
    """``(<db>.faiss, <db>.faiss.json)`` for a database file."""
    index = db_file.with_name(db_file.name + ".faiss")
    return index, index.with_name(index.name + ".json")


def checksum(data: npt.NDArray[np.uint8] | bytes) -> str:
    """BLAKE2b hex digest of the index bytes."""
    return hashlib.blake2b(memoryview(data), digest_size=32).hexdigest()


def _atomic_write(target: Path, data: bytes | memoryview) -> None:
    prefix = f".{target.name}.{os.getpid()}."  # the writer's pid: see remove_stale_temps
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


def remove_stale_temps(index_file: Path) -> int:
    """Delete temp files of interrupted saves of ``index_file`` (their writer is gone).

    A save writes ``.<name>.<pid>.<random>.tmp`` then renames it; a process killed in
    between leaves the temp file, as large as the index. Temp files of a live process
    (a save in progress) are kept. Returns how many were removed.
    """
    removed = 0
    for name in (index_file.name, index_file.name + ".json"):
        for tmp in index_file.parent.glob(f".{name}.*.tmp"):
            pid = tmp.name[len(name) + 2:].split(".", 1)[0]
            if pid.isdigit() and _alive(int(pid)) and int(pid) != os.getpid():
                continue
            with contextlib.suppress(OSError):
                tmp.unlink()
                removed += 1
    return removed


def save(index_file: Path, data: npt.NDArray[np.uint8], manifest: Manifest) -> None:
    """Write the index then its manifest, each atomically (checksum filled in here)."""
    digest = checksum(data)
    stamped = dataclasses.replace(manifest, checksum=digest)
    manifest_file = index_file.with_name(index_file.name + ".json")
    _atomic_write(index_file, memoryview(np.ascontiguousarray(data)))
    _atomic_write(manifest_file, json.dumps(dataclasses.asdict(stamped)).encode("utf-8"))


def load(index_file: Path) -> tuple[npt.NDArray[np.uint8], Manifest] | None:
    """Read index bytes and manifest; ``None`` when the index file is absent.

    Raises:
        StoreCorruptionError: Manifest missing or unreadable, or checksum mismatch.
    """
    manifest_file = index_file.with_name(index_file.name + ".json")
    if not index_file.exists():
        return None
    try:
        raw = json.loads(manifest_file.read_text(encoding="utf-8"))
        manifest = Manifest(**raw)
    except (OSError, ValueError, TypeError) as exc:
        raise StoreCorruptionError(f"index manifest {manifest_file} is unreadable: {exc}") from exc
    if manifest.version != FORMAT_VERSION:
        raise StoreCorruptionError(f"index manifest version {manifest.version} is not supported")
    try:
        data = np.fromfile(index_file, dtype=np.uint8)
    except OSError as exc:
        raise StoreCorruptionError(f"index file {index_file} is unreadable: {exc}") from exc
    if checksum(data) != manifest.checksum:
        raise StoreCorruptionError(f"index file {index_file} does not match its manifest checksum")
    return data, manifest
