"""Memory an approximate scope's IVF pair keeps: lists filled at once vs FAISS's add.

Builds the pair (:func:`hy_memory_langgraph.store.vector.approximate.build_ivf`) over
``--vectors`` seeded random unit vectors, each way in a fresh interpreter, and prints
the build time and the RSS the pair keeps once the input array is freed (glibc's
``malloc_trim`` run), beside the bytes of its ids and codes.

Usage::

    python -m bench.ivf_memory [--vectors 1000000] [--dims 384]
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import subprocess
import sys
import time
from typing import Any

import numpy as np


def _rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * 4096 / 1e6


def _child(way: str, n: int, dims: int) -> str:
    import faiss

    from hy_memory_langgraph.store.vector import approximate

    if way == "faiss-add":
        def add_all(faiss_: Any, index: Any, vectors: Any, ids: Any, members: Any) -> None:
            index.add_with_ids(vectors, ids)
        approximate._fill = add_all  # type: ignore[assignment]
    vectors = np.random.default_rng(0).standard_normal((n, dims), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    gc.collect()
    before = _rss_mb() - vectors.nbytes / 1e6
    started = time.perf_counter()
    pair = approximate.build_ivf(faiss, vectors, np.arange(n, dtype=np.int64), "cosine")
    took = time.perf_counter() - started
    del vectors
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    payload = n * (dims * 4 + 8 + pair.code_bytes() + 8) / 1e6
    return (f"{way:<16} build {took:5.1f} s   pair keeps {_rss_mb() - before:7.0f} MB"
            f"   (ids and codes {payload:.0f} MB)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=1_000_000)
    parser.add_argument("--dims", type=int, default=384)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(_child(args.child, args.vectors, args.dims))
        return 0
    for way in ("faiss-add", "filled-at-once"):
        done = subprocess.run([sys.executable, "-m", "bench.ivf_memory", "--child", way, "--vectors",
                               str(args.vectors), "--dims", str(args.dims)], capture_output=True, text=True,
                              check=True)
        print(done.stdout.strip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
