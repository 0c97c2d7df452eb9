"""Concurrent HyMemoryStore searches, and one e5 embedding right after a FAISS search.

``search``: loads ``--items`` random 384-d vectors into a HyMemoryStore (an
``embed`` that looks precomputed vectors up, so no model runs), then runs the
same searches sequentially and from ``--threads`` threads at once (all threads on
one store object, or spread over ``--stores`` objects opened on the same
database). Reports searches/s and p50/p95 latency per search kind ("all": the
whole store, an unrestricted FAISS scan; "ns 20%": one of five namespaces,
10,000 candidates at 50k, a FAISS selector scan), and checks that concurrent
results equal the sequential ones. Then it times searches of a small second
store (``--small-items``) alone and while ``--threads - 1`` threads keep
searching the big store object(s): several stores in one process, as the client
has. Run it once per code version, e.g.
``PYTHONPATH=<checkout> python -m bench.concurrent_search search --label before``.

``embed``: starts ``--load`` busy processes (the loaded machine), then, in a fresh
child process per setting (``OMP_WAIT_POLICY`` unset; ``PASSIVE`` from the shell;
unset but ``hy_memory_langgraph.configure_threads()`` called after import), times
``E5Embeddings().embed_query`` right after each of ``--rounds`` store searches and
after 0.2 s of idling. The setting must be in place before the OpenMP runtimes
load, hence a child process each.

Usage:
    python -m bench.concurrent_search search [--items 50000] [--threads 8] [--stores 1]
        [--searches 400] [--search-threads 1|none] [--small-items 2000] [--label after]
    python -m bench.concurrent_search embed [--items 50000] [--rounds 30] [--load 1]
        [--search-threads 1|none] [--policies unset PASSIVE configure]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from langgraph.store.base import PutOp

from hy_memory_langgraph.store import HyMemoryStore

DIMS = 384
N_NAMESPACES = 5
N_QUERIES = 64
K = 10
KINDS: dict[str, tuple[str, ...]] = {"all": ("bench",), "ns 20%": ("bench", "ns3")}


@dataclass
class Timing:
    """Latencies (seconds) of one run and its wall time."""

    latencies: list[float]
    wall: float

    @property
    def per_s(self) -> float:
        return len(self.latencies) / self.wall

    def pct(self, q: float) -> float:
        values = sorted(self.latencies)
        return values[min(len(values) - 1, int(q * len(values)))] * 1000


def threads_arg(text: str) -> int | None:
    return None if text.lower() == "none" else int(text)


def vector_table(items: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    docs = rng.normal(size=(items, DIMS)).astype(np.float32)
    queries = rng.normal(size=(N_QUERIES, DIMS)).astype(np.float32)
    table = {f"doc-{i}": docs[i] for i in range(items)}
    table.update({f"query-{i}": queries[i] for i in range(N_QUERIES)})
    return table


def embed_from(table: dict[str, np.ndarray]) -> Callable[[list[str]], list[np.ndarray]]:
    def embed(texts: list[str]) -> list[np.ndarray]:
        return [table[t] for t in texts]

    return embed


def open_store(db: Path, table: dict[str, np.ndarray], search_threads: int | None) -> HyMemoryStore:
    index = {"dims": DIMS, "embed": embed_from(table), "fields": ["text"]}
    return HyMemoryStore(db, index=index, search_threads=search_threads)  # type: ignore[arg-type]


def load(store: HyMemoryStore, items: int, batch: int = 1000) -> None:
    for lo in range(0, items, batch):
        store.batch(
            [PutOp(("bench", f"ns{i % N_NAMESPACES}"), f"k{i}", {"text": f"doc-{i}"})
             for i in range(lo, min(items, lo + batch))]
        )
    store.persist_index()


def one_search(store: HyMemoryStore, namespace: tuple[str, ...], qi: int) -> tuple[float, list[str]]:
    start = time.perf_counter()
    found = store.search(namespace, query=f"query-{qi % N_QUERIES}", limit=K)
    return time.perf_counter() - start, [item.key for item in found]


def sequential(store: HyMemoryStore, namespace: tuple[str, ...], n: int) -> tuple[Timing, list[list[str]]]:
    start = time.perf_counter()
    runs = [one_search(store, namespace, qi) for qi in range(n)]
    return Timing([t for t, _ in runs], time.perf_counter() - start), [keys for _, keys in runs]


def concurrent(
    stores: Sequence[HyMemoryStore], namespace: tuple[str, ...], n: int, n_threads: int
) -> tuple[Timing, list[list[str]]]:
    """``n`` searches, query ``qi`` on thread ``qi % n_threads``, store ``thread % len(stores)``."""
    latencies = [0.0] * n
    results: list[list[str]] = [[] for _ in range(n)]
    barrier = threading.Barrier(n_threads + 1)

    def worker(t: int) -> None:
        store = stores[t % len(stores)]
        barrier.wait()
        for qi in range(t, n, n_threads):
            latencies[qi], results[qi] = one_search(store, namespace, qi)

    workers = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
    for w in workers:
        w.start()
    barrier.wait()
    start = time.perf_counter()
    for w in workers:
        w.join()
    return Timing(latencies, time.perf_counter() - start), results


def small_beside_big(small: HyMemoryStore, big: Sequence[HyMemoryStore], n_threads: int, n: int) -> Timing:
    """``n`` searches of ``small`` while ``n_threads - 1`` threads keep searching the ``big`` stores."""
    stop = threading.Event()

    def churn(t: int) -> None:
        qi = t
        while not stop.is_set():
            one_search(big[t % len(big)], ("bench",), qi)
            qi += 1

    workers = [threading.Thread(target=churn, args=(t,)) for t in range(n_threads - 1)]
    for w in workers:
        w.start()
    time.sleep(0.2)
    try:
        start = time.perf_counter()
        latencies = [one_search(small, ("bench",), qi)[0] for qi in range(n)]
        return Timing(latencies, time.perf_counter() - start)
    finally:
        stop.set()
        for w in workers:
            w.join()


def report_small(args: argparse.Namespace, table: dict[str, np.ndarray], big: Sequence[HyMemoryStore],
                 tmp: str) -> None:
    with open_store(Path(tmp) / "small.db", table, args.search_threads) as small:
        load(small, args.small_items)
        alone, _ = sequential(small, ("bench",), args.searches)
        beside = small_beside_big(small, big, args.threads, args.searches)
    print(f"\n| code | small store items | alone p50 ms | p95 | beside {args.threads - 1} threads "
          f"on {len(big)} big store object(s) p50 ms | p95 |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| {args.label} | {args.small_items:,} | {alone.pct(.5):.1f} | {alone.pct(.95):.1f} "
          f"| {beside.pct(.5):.1f} | {beside.pct(.95):.1f} |", flush=True)


def run_search_bench(args: argparse.Namespace) -> None:
    table = vector_table(args.items, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        first = open_store(db, table, args.search_threads)
        stores = [first]
        try:
            load(first, args.items)
            stores += [open_store(db, table, args.search_threads) for _ in range(args.stores - 1)]
            for store in stores:
                one_search(store, ("bench",), 0)  # warm-up
            print("| code | items | threads | stores | search_threads | kind | sequential/s "
                  "| concurrent/s | p50 ms | p95 ms | same results |")
            print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|")
            for kind, namespace in KINDS.items():
                seq, expected = sequential(first, namespace, args.searches)
                conc, got = concurrent(stores, namespace, args.searches, args.threads)
                print(f"| {args.label} | {args.items:,} | {args.threads} | {args.stores} "
                      f"| {args.search_threads} | {kind} | {seq.per_s:.1f} | {conc.per_s:.1f} "
                      f"| {conc.pct(.5):.1f} | {conc.pct(.95):.1f} | {got == expected} |", flush=True)
            if args.small_items:
                report_small(args, table, stores, tmp)
        finally:
            for store in stores:
                store.close()


def run_embed_child(args: argparse.Namespace) -> None:
    """Child process: time one embedding right after each store search; print JSON."""
    import hy_memory_langgraph
    from hy_memory_langgraph.models import E5Embeddings

    if args.call_configure:
        hy_memory_langgraph.configure_threads(passive_wait=True)
    policy = os.environ.get("OMP_WAIT_POLICY")
    table = vector_table(args.items, args.seed)
    embeddings = E5Embeddings()
    embeddings.embed_query("warm up the model")
    after_search, idle = [], []
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "bench.db", table, args.search_threads)
        with store:
            load(store, args.items)
            for r in range(args.rounds):
                time.sleep(0.2)
                start = time.perf_counter()
                embeddings.embed_query(f"what did I say about topic {r}?")
                idle.append(time.perf_counter() - start)
                one_search(store, ("bench",), r)
                start = time.perf_counter()
                embeddings.embed_query(f"what did I say about topic {r}?")
                after_search.append(time.perf_counter() - start)
    label = f"{policy} (configure_threads)" if args.call_configure else policy
    print(json.dumps({"policy": label, "after_search": after_search, "idle": idle}))


def run_embed_bench(args: argparse.Namespace) -> None:
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
    try:
        print("| OMP_WAIT_POLICY | busy procs | search_threads | embed after search p50 ms | p95 | max "
              "| embed after 0.2 s idle p50 ms | p95 |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for policy in args.policies:
            env = dict(os.environ)
            env.pop("OMP_WAIT_POLICY", None)
            if policy not in ("unset", "configure"):
                env["OMP_WAIT_POLICY"] = policy
            cmd = [sys.executable, __file__, "embed-child", "--items", str(args.items),
                   "--rounds", str(args.rounds), "--search-threads", str(args.search_threads)]
            if policy == "configure":
                cmd.append("--call-configure")
            out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
            data = json.loads(out.strip().splitlines()[-1])
            after, idle = Timing(data["after_search"], 1.0), Timing(data["idle"], 1.0)
            print(f"| {data['policy'] or 'unset'} | {args.load} | {args.search_threads} "
                  f"| {after.pct(.5):.1f} | {after.pct(.95):.1f} | {max(after.latencies) * 1000:.1f} "
                  f"| {idle.pct(.5):.1f} | {idle.pct(.95):.1f} |", flush=True)
    finally:
        for proc in busy:
            proc.terminate()
            proc.wait()


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["search", "embed", "embed-child"])
    p.add_argument("--items", type=int, default=50_000)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--stores", type=int, default=1)
    p.add_argument("--searches", type=int, default=400)
    p.add_argument("--small-items", type=int, default=2000,
                   help="'search' also times a small store beside busy big ones (0: skip)")
    p.add_argument("--search-threads", type=threads_arg, default=1, help="int, or 'none'")
    p.add_argument("--label", default="current")
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--load", type=int, default=1, help="busy processes during 'embed'")
    p.add_argument("--policies", nargs="+", default=["unset", "PASSIVE", "configure"],
                   help="OMP_WAIT_POLICY values for 'embed'; 'unset', or 'configure' = unset and "
                   "call hy_memory_langgraph.configure_threads() after import")
    p.add_argument("--call-configure", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0)
    return p


def main() -> None:
    args = parser().parse_args()
    {"search": run_search_bench, "embed": run_embed_bench, "embed-child": run_embed_child}[args.mode](args)


if __name__ == "__main__":
    main()
