"""Benchmark HyMemoryStore against langgraph's InMemoryStore, side by side.

Both stores get the same precomputed random 384-d vectors through the same
``embed`` callable (a dict lookup), so only storage and search are measured.
Items are spread over 100 namespaces ``("bench", "nsJ")``; each holds 1%.

Measured per size: put throughput (``batch()`` of 500 puts), search latency
p50/p95 over the whole prefix, over a 1% namespace, and with a 1% filter
(``{"group": 7}`` over the whole prefix), plus recall@10 of the restricted
searches against exact numpy brute force over that 1% subset (must be 1.0).

Usage:
    python -m bench.store_bench [--sizes 10000 100000] [--queries 100]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore

from hy_memory_langgraph.store import HyMemoryStore

DIMS = 384
N_NAMESPACES = 100
TARGET_GROUP = 7
K = 10


@dataclass
class Row:
    """Measurements of one store at one size."""

    store: str
    size: int
    put_per_s: float = 0.0
    open_s: float = 0.0
    lat: dict[str, list[float]] = field(default_factory=dict)
    recall: dict[str, float] = field(default_factory=dict)

    def pct(self, name: str, q: float) -> float:
        values = sorted(self.lat[name])
        return values[min(len(values) - 1, int(q * len(values)))] * 1000


def make_data(size: int, n_queries: int, seed: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    docs = rng.normal(size=(size, DIMS)).astype(np.float32)
    queries = rng.normal(size=(n_queries, DIMS)).astype(np.float32)
    table = {f"doc-{i}": docs[i] for i in range(size)}
    table.update({f"query-{i}": queries[i] for i in range(n_queries)})
    return table, docs


def embed_from(table: dict[str, np.ndarray]) -> Callable[[list[str]], list[np.ndarray]]:
    def embed(texts: list[str]) -> list[np.ndarray]:
        return [table[t] for t in texts]

    return embed


def exact_top(docs: np.ndarray, ids: np.ndarray, query: np.ndarray, k: int) -> set[str]:
    sub = docs[ids]
    scores = (sub / np.linalg.norm(sub, axis=1, keepdims=True)) @ (query / np.linalg.norm(query))
    return {f"doc-{ids[i]}" for i in np.argsort(-scores)[:k]}


def load(store: BaseStore, size: int, batch: int) -> float:
    start = time.perf_counter()
    for lo in range(0, size, batch):
        store.batch(
            [
                PutOp(("bench", f"ns{i % N_NAMESPACES}"), f"k{i}",
                      {"text": f"doc-{i}", "n": i, "group": i % N_NAMESPACES})
                for i in range(lo, min(size, lo + batch))
            ]
        )
    return size / (time.perf_counter() - start)


def measure(
    store: BaseStore, row: Row, docs: np.ndarray, n_queries: int, table: dict[str, np.ndarray]
) -> None:
    subset = np.arange(TARGET_GROUP, len(docs), N_NAMESPACES)
    cases: dict[str, dict[str, object]] = {
        "all": {"namespace": ("bench",)},
        "ns1%": {"namespace": ("bench", f"ns{TARGET_GROUP}")},
        "filter1%": {"namespace": ("bench",), "filter": {"group": TARGET_GROUP}},
    }
    store.search(("bench",), query="query-0", limit=K)  # warm-up
    for name, case in cases.items():
        times, hits = [], []
        for qi in range(n_queries):
            query = f"query-{qi}"
            start = time.perf_counter()
            res = store.search(
                case["namespace"], query=query, filter=case.get("filter"), limit=K  # type: ignore[arg-type]
            )
            times.append(time.perf_counter() - start)
            if name != "all":
                truth = exact_top(docs, subset, table[query], K)
                hits.append(len({r.value["text"] for r in res} & truth) / K)
        row.lat[name] = times
        if hits:
            row.recall[name] = statistics.fmean(hits)


def run_size(size: int, n_queries: int, memory_queries: int, batch: int, seed: int) -> list[Row]:
    table, docs = make_data(size, max(n_queries, memory_queries), seed)
    index = {"dims": DIMS, "embed": embed_from(table), "fields": ["text"]}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        hy_row = Row("HyMemoryStore", size)
        with HyMemoryStore(db, index=index) as hy:  # type: ignore[arg-type]
            hy_row.put_per_s = load(hy, size, batch)
            measure(hy, hy_row, docs, n_queries, table)
        start = time.perf_counter()
        with HyMemoryStore(db, index=index):  # type: ignore[arg-type]
            hy_row.open_s = time.perf_counter() - start
        rows.append(hy_row)
    mem_row = Row("InMemoryStore", size)
    mem = InMemoryStore(index=index)  # type: ignore[arg-type]
    mem_row.put_per_s = load(mem, size, batch)
    measure(mem, mem_row, docs, memory_queries, table)
    rows.append(mem_row)
    return rows


def render(rows: Sequence[Row]) -> str:
    lines = [
        "| items | store | put items/s | search p50 ms | p95 ms | ns 1% p50 | p95 | recall@10 "
        "| filter 1% p50 | p95 | recall@10 | reopen s |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        reopen = f"{r.open_s:.2f}" if r.open_s else "-"
        lines.append(
            f"| {r.size:,} | {r.store} | {r.put_per_s:,.0f} "
            f"| {r.pct('all', .5):.2f} | {r.pct('all', .95):.2f} "
            f"| {r.pct('ns1%', .5):.2f} | {r.pct('ns1%', .95):.2f} | {r.recall['ns1%']:.3f} "
            f"| {r.pct('filter1%', .5):.2f} | {r.pct('filter1%', .95):.2f} | {r.recall['filter1%']:.3f} "
            f"| {reopen} |"
        )
    lines.append("")
    for size in sorted({r.size for r in rows}):
        hy = next(r for r in rows if r.size == size and r.store == "HyMemoryStore")
        mem = next(r for r in rows if r.size == size and r.store == "InMemoryStore")
        ratios = ", ".join(
            f"{name} {mem.pct(name, .5) / hy.pct(name, .5):.1f}x" for name in ("all", "ns1%", "filter1%")
        )
        lines.append(
            f"- {size:,} items: HyMemoryStore search p50 speed-up vs InMemoryStore: {ratios}; "
            f"put throughput ratio {hy.put_per_s / mem.put_per_s:.2f}x"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=100, help="queries per case (HyMemoryStore)")
    parser.add_argument("--memory-queries", type=int, default=20, help="queries per case (InMemoryStore)")
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows: list[Row] = []
    for size in args.sizes:
        rows.extend(run_size(size, args.queries, args.memory_queries, args.batch, args.seed))
        print(f"done {size:,} items", flush=True)
    print(render(rows))


if __name__ == "__main__":
    main()
