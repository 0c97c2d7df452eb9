"""Cold first search of a large approximate scope: rebuilt from rows vs a mapped snapshot.

One SQLite store holds ``--items`` items in one scope (seeded normal 384-d vectors,
served from a table: speed only). Each phase runs in a fresh interpreter (its own
memory figures; the database file is in the OS page cache after the fill, as on a
server that restarts):

* ``rebuild``: snapshots off: the first search reads every vector and builds the IVF index;
* ``save``: snapshots on, none yet: the same, plus writing the snapshot;
* ``mapped``: snapshots on: the first search maps the snapshot and replays the log;
* ``mapped-after-writes``: 500 items changed first by another store, then as ``mapped``.

Printed per phase: open + first search wall time, p50 of 50 more searches (the last of
three rounds of the same 50: warm pages), RSS after the first search and the cache's
estimate of the scope.

Usage::

    python -m bench.cold_open [--items 200000] [--dims 384] [--workdir DIR] [--search-threads 1 2]
                              [--corpus DIR]

``--search-threads``: the mapped phase is measured again with each further thread count
(FAISS threads for one search: its IVF lists split between them).

``--corpus DIR`` (the output of ``python -m bench.ann_recall embed``): item ``i`` gets e5
vector ``i mod n`` of that corpus plus seeded noise (N(0, 0.02) per dimension, as
``bench.ann_recall``'s scaled runs) instead of a random one, and the searches use the
corpus's real queries: IVF lists then have the uneven sizes of real text, which random
vectors do not. The corpus (about 45 MB) is held by every phase's process.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.pg_bench import rss_mb

NS = ("mem", "u1")


_CORPUS: dict[str, np.ndarray] = {}


def _vector(i: int, dims: int) -> list[float]:
    return np.random.default_rng(i).standard_normal(dims).astype(np.float32).tolist()


def _use_corpus(folder: Path) -> None:
    _CORPUS["docs"], _CORPUS["queries"] = np.load(folder / "corpus.npy"), np.load(folder / "queries.npy")


def _text_vector(text: str, dims: int) -> list[float]:
    """``item i`` / ``query j``: random vectors, or the corpus's (see ``--corpus``)."""
    kind, number = text.split()
    if not _CORPUS:
        return _vector(int(number), dims)
    if kind == "query":
        return _CORPUS["queries"][int(number) % len(_CORPUS["queries"])].tolist()
    docs, i = _CORPUS["docs"], int(number)
    noise = np.random.default_rng(i).normal(0, 0.02, docs.shape[1]) if i >= len(docs) else 0.0
    return (docs[i % len(docs)] + noise).astype(np.float32).tolist()


def _query(i: int) -> str:
    return f"query {i}" if _CORPUS else f"item {i * 97}"


def _store(path: Path, dims: int, snapshots: bool, threads: int = 1) -> Any:
    from hy_memory_langgraph.store import ApproximateSearch, HyMemoryStore, IndexCache

    def embed(texts: list[str]) -> list[list[float]]:
        return [_text_vector(t, dims) for t in texts]

    return HyMemoryStore(path, index={"dims": dims, "embed": embed, "fields": ["text"]},
                         approximate=ApproximateSearch(snapshots=snapshots, min_vectors=100_000),
                         index_cache=IndexCache(8 << 30), search_threads=threads)


def _fill(path: Path, items: int, dims: int) -> None:
    from langgraph.store.base import PutOp

    store = _store(path, dims, snapshots=False)
    for start in range(0, items, 1000):
        store.batch([PutOp(NS, f"k{i}", {"text": f"item {i}"}) for i in range(start, min(items, start + 1000))])
    store.close()


def _phase(path: Path, dims: int, phase: str, threads: int) -> dict[str, Any]:
    from langgraph.store.base import PutOp

    if phase == "mapped-after-writes":
        writer = _store(path, dims, snapshots=False)
        writer.batch([PutOp(NS, f"k{i}", {"text": f"item {i + 7}"}) for i in range(500)])
        writer.close()
    query = "query 3" if _CORPUS else "item 3"
    started = time.perf_counter()
    store = _store(path, dims, snapshots=phase != "rebuild", threads=threads)
    first = store.search(NS, query=query, limit=10)
    cold = time.perf_counter() - started
    rss = rss_mb()
    walls: list[float] = []
    for _ in range(3):  # the same 50 queries three times: the last round is warm
        walls = []
        for i in range(50):
            t = time.perf_counter()
            store.search(NS, query=_query(i), limit=10)
            walls.append(time.perf_counter() - t)
    mirror = next(store._scoped.cache.peek(k) for k in store._scoped.cache.keys_of(store._scoped.owner))
    out = {"phase": phase if threads == 1 else f"{phase} x{threads}", "cold_s": cold, "p50_ms": statistics.median(walls) * 1000, "rss_mb": rss,
           "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "estimate_mb": mirror.nbytes() / 2**20, "mapped": mirror.index.is_mapped, "top": first[0].key}
    store.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--dims", type=int, default=384)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--search-threads", type=int, nargs="+", default=[1])
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--child", nargs=2, metavar=("DB", "PHASE"))
    args = parser.parse_args(argv)
    corpus = ["--corpus", str(args.corpus)] if args.corpus else []
    if args.corpus:
        _use_corpus(args.corpus)
    if args.child:
        print(json.dumps(_phase(Path(args.child[0]), args.dims, args.child[1], args.search_threads[0])))
        return 0
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        db = Path(tmp) / "cold.db"
        started = time.perf_counter()
        _fill(db, args.items, args.dims)
        print(f"filled {args.items:,} items in {time.perf_counter() - started:.0f} s")
        runs = [(phase, 1) for phase in ("rebuild", "save", "mapped", "mapped-after-writes")]
        runs += [("mapped", n) for n in args.search_threads if n != 1]
        for phase, threads in runs:
            done = subprocess.run([sys.executable, "-m", "bench.cold_open", "--dims", str(args.dims),
                                   "--search-threads", str(threads), *corpus, "--child", str(db), phase],
                                  check=True, capture_output=True, text=True)
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{r['phase']:<20} open+first search {r['cold_s']:7.2f} s   search p50 {r['p50_ms']:6.2f} ms   "
                  f"RSS {r['rss_mb']:7.0f} MB (peak {r['peak_mb']:6.0f})   estimate {r['estimate_mb']:6.0f} MB   "
                  f"mapped={r['mapped']}  top={r['top']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
