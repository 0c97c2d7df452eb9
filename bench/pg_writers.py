"""Parallel writers on one PostgreSQL store: processes writing different users.

Each of ``P`` processes opens its own :class:`HyMemoryStore` on the same schema (an
index of ``--dims`` synthetic dimensions over ``text``), waits at a barrier, then makes
``--puts`` single ``put`` calls (one transaction each, as an agent's memory writes are)
into its own user's namespace ``("mem", "user_P")``. Prints the aggregate puts/s for
each process count, its ratio to one process and how busy the machine's CPUs were
meanwhile (``/proc/stat``: all processes, the database server's included; a run near
100% is bound by CPU, not by locks). The same run repeats with LangGraph's
``PostgresStore`` (no index: pgvector is not packaged here) as the anchor.

Usage:
    python -m bench.pg_writers --pg postgresql+psycopg://postgres@127.0.0.1:55432/postgres
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time
from typing import Any

import sqlalchemy as sa

from bench.pg_bench import open_store, reset_pg


def _ours(url: str, dims: int) -> Any:
    return open_store(url, dims)


def _anchor(url: str, dims: int) -> Any:
    from langgraph.store.postgres import PostgresStore  # noqa: PLC0415 - optional peer

    uri = url.replace("postgresql+psycopg://", "postgresql://", 1)
    uri += ("&" if "?" in uri else "?") + "sslmode=disable"
    context = PostgresStore.from_conn_string(uri)
    store = context.__enter__()
    store._hy_context = context  # keep the connection open for the process's life
    return store


def _writer(kind: str, url: str, dims: int, user: int, puts: int, barrier: Any, out: Any) -> None:
    store = (_ours if kind == "ours" else _anchor)(url, dims)
    store.put(("mem", f"user_{user}"), "warm", {"text": "warm up"})
    barrier.wait(timeout=120)
    if user == 0:
        out.put(("ready", 0.0))
    began = time.perf_counter()
    for i in range(puts):
        store.put(("mem", f"user_{user}"), f"k{i}", {"text": f"memory {i} of user {user}", "i": i})
    out.put(("done", time.perf_counter() - began))


def _cpu_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot."""
    with open("/proc/stat") as stat:
        fields = [int(v) for v in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def run(kind: str, url: str, dims: int, procs: int, puts: int) -> tuple[float, float]:
    """Aggregate puts per second of ``procs`` processes writing their own users, and the
    share of CPU time busy while they ran (from the first writer's start to the last end,
    approximately: sampled around the whole run)."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(procs), ctx.Queue()
    workers = [ctx.Process(target=_writer, args=(kind, url, dims, p, puts, barrier, out))
               for p in range(procs)]
    for w in workers:
        w.start()
    assert out.get(timeout=600)[0] == "ready"  # the warmed-up writers pass the barrier together
    busy0, total0 = _cpu_ticks()
    walls = [out.get(timeout=600)[1] for _ in workers]
    busy1, total1 = _cpu_ticks()
    for w in workers:
        w.join()
        if w.exitcode != 0:
            raise SystemExit(f"a {kind} writer failed (exit code {w.exitcode})")
    return procs * puts / max(walls), (busy1 - busy0) / max(1, total1 - total0)


def _reset_anchor(url: str) -> None:
    """Drop PostgresStore's tables and create them again (once, before the writers)."""
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE IF EXISTS store, store_migrations CASCADE"))
    engine.dispose()
    _anchor(url, 0).setup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pg", required=True, help="SQLAlchemy URL of the server")
    parser.add_argument("--puts", type=int, default=1000, help="puts per process")
    parser.add_argument("--procs", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--dims", type=int, default=16)
    parser.add_argument("--anchor", action="store_true", help="also run LangGraph's PostgresStore")
    args = parser.parse_args()
    print("| store | processes | puts/s (all) | vs one process | CPU busy |")
    print("|---|---:|---:|---:|---:|")
    for kind in ("ours", "anchor") if args.anchor else ("ours",):
        base = None
        for procs in args.procs:
            (reset_pg if kind == "ours" else _reset_anchor)(args.pg)
            rate, busy = run(kind, args.pg, args.dims, procs, args.puts)
            base = base or rate
            name = "HyMemoryStore" if kind == "ours" else "PostgresStore"
            print(f"| {name} | {procs} | {rate:,.0f} | {rate / base:.2f} | {busy:.0%} |", flush=True)


if __name__ == "__main__":
    main()
