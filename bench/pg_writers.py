"""Parallel writers on one PostgreSQL store: processes writing different users.

Each of ``P`` processes opens its own :class:`HyMemoryStore` on the same schema (an
index of ``--dims`` synthetic dimensions over ``text``), waits at a barrier, then makes
``--puts`` single ``put`` calls (one transaction each, as an agent's memory writes are)
into its own user's namespace ``("mem", "user_P")``. Prints the aggregate puts/s for
each process count and its ratio to one process. The same run repeats with LangGraph's
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
    began = time.perf_counter()
    for i in range(puts):
        store.put(("mem", f"user_{user}"), f"k{i}", {"text": f"memory {i} of user {user}", "i": i})
    out.put(time.perf_counter() - began)


def run(kind: str, url: str, dims: int, procs: int, puts: int) -> float:
    """Aggregate puts per second of ``procs`` processes writing their own users."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(procs), ctx.Queue()
    workers = [ctx.Process(target=_writer, args=(kind, url, dims, p, puts, barrier, out))
               for p in range(procs)]
    for w in workers:
        w.start()
    walls = [out.get(timeout=600) for _ in workers]
    for w in workers:
        w.join()
        if w.exitcode != 0:
            raise SystemExit(f"a {kind} writer failed (exit code {w.exitcode})")
    return procs * puts / max(walls)


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
    print("| store | processes | puts/s (all) | vs one process |")
    print("|---|---:|---:|---:|")
    for kind in ("ours", "anchor") if args.anchor else ("ours",):
        base = None
        for procs in args.procs:
            (reset_pg if kind == "ours" else _reset_anchor)(args.pg)
            rate = run(kind, args.pg, args.dims, procs, args.puts)
            base = base or rate
            name = "HyMemoryStore" if kind == "ours" else "PostgresStore"
            print(f"| {name} | {procs} | {rate:,.0f} | {rate / base:.2f} |", flush=True)


if __name__ == "__main__":
    main()
