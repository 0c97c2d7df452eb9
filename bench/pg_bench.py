"""HyMemoryStore on PostgreSQL vs SQLite: writes, searches, catch-up, bounded memory.

Synthetic vectors (a seeded random vector per text, through an ``embed`` callable)
so only storage, sync and search are measured. Items live in per-user namespaces
``("mem", "user_J")``, the unit of the per-scope indexes.

Sub-commands (each prints what it measured):

* ``store``: at ``--items`` (100k) over ``--users`` (1,000), put throughput
  (``batch()`` of 500 puts), then search p50/p95 of one user's memories, cold (the
  scope is loaded from the database) and warm (cached), and of the whole store.
* ``catchup``: instance A has every user's scope cached; instance B writes N puts
  spread over those users; the time of A's next search (catch-up of N deltas).
* ``filter``: one namespace of ``--items`` (100k) whose items carry ``cat``, one of 100
  values: search p50/p95 with the 1% filter ``{"cat": "c7"}`` (and the same plus a range),
  without and with a query; SQLite also with ``filter_fields=["cat"]``.
* ``rss``: resident memory of one process over a SQLite store of ``--items`` (1M)
  vectors across 1,000 users, after opening and after searching every user once,
  with ``MEMORY_INDEX_CACHE_MB`` = ``--cache-mb``. Populate once with ``--fill``;
  run it with ``PYTHONPATH`` on an older checkout to measure the old whole-store
  mirror on the same file (only APIs both releases have are used).

* ``anchor``: side by side with LangGraph's ``PostgresStore`` on the same server, no
  vector index on either (pgvector is not packaged for this machine: the command says
  whether the extension loads and, when it does not, compares what it can): put
  items/s in batches of 100 up to ``--items`` into one namespace whose items carry
  ``cat`` (one of 100), then p50 of a 1% filter ``{"cat": "c7"}`` search (``limit=10``).

Usage:
    python -m bench.pg_bench anchor --pg postgresql+psycopg://... [--items 20000]
    python -m bench.pg_bench store --pg postgresql+psycopg://... [--items 100000]
    python -m bench.pg_bench catchup --pg postgresql+psycopg://...
    python -m bench.pg_bench filter --pg postgresql+psycopg://... [--items 100000]
    python -m bench.pg_bench rss --db /tmp/rss.db --fill --items 1000000 --dims 16
    MEMORY_INDEX_CACHE_MB=64 python -m bench.pg_bench rss --db /tmp/rss.db
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import sqlalchemy as sa
from langgraph.store.base import PutOp

from hy_memory_langgraph.store import HyMemoryStore


def embedder(dims: int) -> Callable[[list[str]], list[list[float]]]:
    """A deterministic synthetic embedding: a seeded normal vector per text."""

    def embed(texts: list[str]) -> list[list[float]]:
        out = np.empty((len(texts), dims), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(dims)
        return out.tolist()

    return embed


def open_store(target: str, dims: int, **kwargs: object) -> HyMemoryStore:
    index = {"dims": dims, "embed": embedder(dims), "fields": ["text"]}
    if "://" in target:
        return HyMemoryStore(target, schema="bench", index=index, **kwargs)  # type: ignore[arg-type]
    return HyMemoryStore(target, index=index, **kwargs)  # type: ignore[arg-type]


def fill(store: HyMemoryStore, items: int, users: int, batch: int = 500, start: int = 0) -> float:
    """Put ``items`` items round-robin over ``users``; returns items per second."""
    began = time.perf_counter()
    for lo in range(start, start + items, batch):
        store.batch([PutOp(("mem", f"user_{i % users}"), f"k{i}", {"text": f"memory {i}", "i": i})
                     for i in range(lo, min(start + items, lo + batch))])
    return items / (time.perf_counter() - began)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def timed(fn: Callable[[], object]) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def reset_pg(url: str) -> None:
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("DROP SCHEMA IF EXISTS bench CASCADE"))
    engine.dispose()


def targets(args: argparse.Namespace) -> list[tuple[str, str]]:
    out = [("SQLite", str(Path(tempfile.mkdtemp()) / "bench.db"))]
    if args.pg:
        reset_pg(args.pg)
        out.append(("PostgreSQL", args.pg))
    return out


def cmd_store(args: argparse.Namespace) -> None:
    print("| backend | items | users | put items/s | user search cold p50 / p95 ms | "
          "user search warm p50 / p95 ms | whole store p50 / p95 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(1)
    for name, target in targets(args):
        with open_store(target, args.dims) as store:
            put_rate = fill(store, args.items, args.users)
        with open_store(target, args.dims) as store:
            users = rng.choice(args.users, size=min(args.queries, args.users), replace=False)
            cold = [timed(lambda u=u: store.search(("mem", f"user_{u}"), query=f"q{u}", limit=10)) for u in users]
            warm = [timed(lambda u=u: store.search(("mem", f"user_{u}"), query=f"w{u}", limit=10)) for u in users]
            whole = [timed(lambda j=j: store.search(("mem",), query=f"all{j}", limit=10)) for j in range(args.whole)]
        print(f"| {name} | {args.items:,} | {args.users:,} | {put_rate:,.0f} | "
              f"{pct(cold, .5):.2f} / {pct(cold, .95):.2f} | {pct(warm, .5):.2f} / {pct(warm, .95):.2f} | "
              f"{pct(whole, .5):.1f} / {pct(whole, .95):.1f} |")


def cmd_filter(args: argparse.Namespace) -> None:
    """One namespace of ``--items``; each item has ``cat`` = one of 100 values (1% each)."""
    print("| backend | items | filter | search p50 / p95 ms | search with query p50 / p95 ms | hits |")
    print("|---|---:|---|---:|---:|---:|")
    runs = [(name, target, {}) for name, target in targets(args)]
    runs.insert(1, ("SQLite, filter_fields=[cat]", str(Path(tempfile.mkdtemp()) / "fields.db"),
                    {"filter_fields": ["cat"]}))
    for name, target, extra in runs:
        with open_store(target, args.dims, **extra) as store:
            for lo in range(0, args.items, 1000):
                store.batch([PutOp(("docs",), f"k{i}", {"text": f"memory {i}", "cat": f"c{i % 100}", "i": i})
                             for i in range(lo, min(args.items, lo + 1000))])
        with open_store(target, args.dims, **extra) as store:
            store.search(("docs",), query="warm up", limit=10)
            for label, flt in (("cat = c7 (1%)", {"cat": "c7"}), ("cat = c7 and i >= 50,000", {"cat": "c7", "i": {"$gte": 50_000}})):
                plain = [timed(lambda k=k, f=flt: store.search(("docs",), filter=f, limit=10, offset=k)) for k in range(args.queries)]
                query = [timed(lambda k=k, f=flt: store.search(("docs",), query=f"q{k}", filter=f, limit=10)) for k in range(args.queries)]
                hits = len(store.search(("docs",), filter=flt, limit=100_000))
                print(f"| {name} | {args.items:,} | {label} | {pct(plain, .5):.1f} / {pct(plain, .95):.1f} | "
                      f"{pct(query, .5):.1f} / {pct(query, .95):.1f} | {hits:,} |")


def cmd_catchup(args: argparse.Namespace) -> None:
    print("| backend | deltas | catch-up + search ms | search alone ms |")
    print("|---|---:|---:|---:|")
    for name, target in targets(args):
        with open_store(target, args.dims) as writer:
            fill(writer, args.items, args.users)
            with open_store(target, args.dims) as reader:
                reader.search(("mem",), query="warm every scope", limit=10)
                offset = args.items
                for n in args.deltas:
                    fill(writer, n, args.users, batch=min(n, 500), start=offset)
                    offset += n
                    with_deltas = timed(lambda: reader.search(("mem", "user_7"), query="after", limit=10))
                    alone = statistics.median(timed(lambda: reader.search(("mem", "user_7"), query="again",
                                                                         limit=10)) for _ in range(5))
                    print(f"| {name} | {n:,} | {with_deltas * 1000:.1f} | {alone * 1000:.2f} |")


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cmd_rss(args: argparse.Namespace) -> None:
    if args.fill:
        with open_store(args.db, args.dims) as store:
            rate = fill(store, args.items, args.users, batch=2000)
        print(f"filled {args.items:,} items over {args.users:,} users at {rate:,.0f} items/s")
        return
    base = rss_mb()
    began = time.perf_counter()
    store = open_store(args.db, args.dims)
    opened_s = time.perf_counter() - began
    after_open = rss_mb()
    began = time.perf_counter()
    for user in range(args.users):
        store.search(("mem", f"user_{user}"), query=f"probe {user}", limit=10)
    searched_s = time.perf_counter() - began
    after_search = rss_mb()
    cache = getattr(store, "index_cache", None)
    stats = cache.stats() if cache is not None else "whole-store mirror"
    store.close()
    print(f"MEMORY_INDEX_CACHE_MB={os.environ.get('MEMORY_INDEX_CACHE_MB', 'default')}: "
          f"RSS before open {base:.0f} MB, after open {after_open:.0f} MB ({opened_s:.1f} s), "
          f"after searching {args.users:,} users {after_search:.0f} MB ({searched_s:.1f} s); cache {stats}")


def _pgvector_loads(url: str) -> bool:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS vector"))
        return True
    except sa.exc.DBAPIError:
        return False
    finally:
        engine.dispose()


def _anchor_run(store: object, items: int, queries: int) -> tuple[float, float, int]:
    """(put items/s, 1%-filter search p50 ms, hits) through LangGraph's BaseStore API."""
    began = time.perf_counter()
    for lo in range(0, items, 100):
        store.batch([PutOp(("docs",), f"k{i}", {"text": f"memory {i}", "cat": f"c{i % 100}", "i": i})  # type: ignore[attr-defined]
                     for i in range(lo, min(items, lo + 100))])
    rate = items / (time.perf_counter() - began)
    flt = {"cat": "c7"}
    times = [timed(lambda k=k: store.search(("docs",), filter=flt, limit=10, offset=k))  # type: ignore[attr-defined]
             for k in range(queries)]
    hits = len(store.search(("docs",), filter=flt, limit=items))  # type: ignore[attr-defined]
    return rate, pct(times, .5), hits


def cmd_anchor(args: argparse.Namespace) -> None:
    from langgraph.store.postgres import PostgresStore  # noqa: PLC0415 - only this command needs it

    if not args.pg:
        raise SystemExit("anchor needs --pg (or HY_BENCH_PG_URL)")
    print(f"pgvector {'loads' if _pgvector_loads(args.pg) else 'cannot be loaded here'}: "
          "both stores run without a vector index")
    print("| store | items | put items/s (batches of 100) | 1% filter search p50 ms | hits |")
    print("|---|---:|---:|---:|---:|")
    reset_pg(args.pg)
    with HyMemoryStore(args.pg, schema="bench") as store:
        rate, p50, hits = _anchor_run(store, args.items, args.queries)
    print(f"| HyMemoryStore | {args.items:,} | {rate:,.0f} | {p50:.2f} | {hits:,} |")
    uri = args.pg.replace("postgresql+psycopg://", "postgresql://", 1)
    engine = sa.create_engine(args.pg)
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE IF EXISTS public.store, public.store_migrations CASCADE"))
    engine.dispose()
    with PostgresStore.from_conn_string(uri) as anchor:
        anchor.setup()
        rate, p50, hits = _anchor_run(anchor, args.items, args.queries)
    print(f"| PostgresStore | {args.items:,} | {rate:,.0f} | {p50:.2f} | {hits:,} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("store", "catchup", "rss", "filter", "anchor"):
        p = sub.add_parser(name)
        p.add_argument("--items", type=int, default=1_000_000 if name == "rss" else 100_000)
        p.add_argument("--users", type=int, default=1000)
        p.add_argument("--dims", type=int, default=16 if name in ("rss", "filter") else 384)
        p.add_argument("--pg", default=os.environ.get("HY_BENCH_PG_URL"))
    sub.choices["store"].add_argument("--queries", type=int, default=200)
    sub.choices["store"].add_argument("--whole", type=int, default=20)
    sub.choices["filter"].add_argument("--queries", type=int, default=20)
    sub.choices["anchor"].add_argument("--queries", type=int, default=20)
    sub.choices["catchup"].add_argument("--deltas", type=int, nargs="+", default=[10, 100, 1000, 10000])
    sub.choices["rss"].add_argument("--db", required=True)
    sub.choices["rss"].add_argument("--fill", action="store_true")
    args = parser.parse_args()
    commands = {"store": cmd_store, "catchup": cmd_catchup, "rss": cmd_rss, "filter": cmd_filter,
                "anchor": cmd_anchor}
    commands[args.command](args)


if __name__ == "__main__":
    main()
