"""PostgreSQL over a slower network: what round trips cost a put and a grouped read.

A database server is seldom on the same host as the agent. This benchmark puts a TCP
relay between the client and a local PostgreSQL that holds every message for a fixed
time in each direction (``--delay-ms``; the relay's timer resolution makes the real
added round trip a little longer: it is measured with ``SELECT 1`` and printed), then
times, through it:

* ``put``: one ``store.put`` of a new item with a 16-d index (HashingEmbeddings);
* ``grouped reads``: one batch of a get, a namespace listing and a search without a
  query, as grouped calls of several callers run (``grouped=True``);
* ``get``: one ``store.get``;

for HyMemoryStore and, with ``--anchor``, LangGraph's PostgresStore (no index; its put
and get). Run it under another checkout's package to compare versions, e.g.
``PYTHONPATH=/path/to/old/checkout python bench/pg_latency.py --pg …``.

Usage:
    python -m bench.pg_latency --pg postgresql+psycopg://postgres@127.0.0.1:55432/postgres --delay-ms 0.5
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import psycopg


class Relay:
    """A TCP relay on loopback that delays every chunk by ``delay`` seconds each way."""

    def __init__(self, host: str, port: int, delay: float) -> None:
        self.target, self.delay = (host, port), delay
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        self.port = 0
        threading.Thread(target=self._serve, args=(started,), daemon=True).start()
        started.wait(10)

    def _serve(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._client, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        started.set()
        self.loop.run_forever()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        await asyncio.gather(self._pump(reader, up_writer), self._pump(up_reader, writer))

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def send() -> None:
            while True:
                due, data = await queue.get()
                if not data:
                    writer.close()
                    return
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()

        sender = asyncio.ensure_future(send())
        while True:
            data = await reader.read(65536)
            queue.put_nowait((time.monotonic() + self.delay, data))
            if not data:
                break
        await sender


def _p50(fn: Callable[[int], Any], rounds: int) -> float:
    times = []
    for i in range(rounds):
        start = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def _measure(url: str, rounds: int, anchor: bool, tag: str) -> dict[str, float]:
    from langgraph.store.base import GetOp, ListNamespacesOp, SearchOp  # noqa: PLC0415

    out: dict[str, float] = {}
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as conn:
        out["SELECT 1 round trip"] = _p50(lambda i: conn.execute("SELECT 1").fetchall(), rounds)
    ns = ("u", "alice")
    if anchor:
        from langgraph.store.postgres import PostgresStore  # noqa: PLC0415

        with PostgresStore.from_conn_string(url.replace("postgresql+psycopg://", "postgresql://")) as store:
            store.setup()
            out["put"] = _p50(lambda i: store.put(ns, f"{tag}a{i}", {"text": f"note {i}"}), rounds)
            out["get"] = _p50(lambda i: store.get(ns, f"{tag}a{i}"), rounds)
        return out
    from hy_memory_langgraph.store import HyMemoryStore  # noqa: PLC0415
    from hy_memory_langgraph.testing import HashingEmbeddings  # noqa: PLC0415

    index = {"dims": 16, "embed": HashingEmbeddings(dims=16), "fields": ["text"]}
    with HyMemoryStore(url, schema=f"latency_{tag}", index=index) as store:
        store.put(ns, "warm", {"text": "warm"})
        out["put"] = _p50(lambda i: store.put(ns, f"k{i}", {"text": f"note {i}"}), rounds)
        ops = [GetOp(ns, "k1"), ListNamespacesOp(match_conditions=None, max_depth=2), SearchOp(("u",), None, 10, 0)]
        grouped = getattr(store, "_batch_alone")
        out["grouped reads"] = _p50(lambda i: grouped(ops, grouped=True), rounds)
        out["get"] = _p50(lambda i: store.get(ns, f"k{i}"), rounds)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pg", required=True, help="SQLAlchemy URL of a local server (a database is made and dropped)")
    parser.add_argument("--delay-ms", type=float, default=0.5, help="delay added in each direction")
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--anchor", action="store_true", help="also LangGraph's PostgresStore")
    args = parser.parse_args()
    base = psycopg.conninfo.conninfo_to_dict(args.pg.replace("postgresql+psycopg://", "postgresql://"))
    relay = Relay(str(base.get("host", "127.0.0.1")), int(base.get("port", 5432)), args.delay_ms / 1000)
    admin = args.pg.replace("postgresql+psycopg://", "postgresql://")
    name = "lat_" + uuid.uuid4().hex[:8]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        user = base.get("user", "postgres")
        for delayed in (False, True):
            port = relay.port if delayed else int(base.get("port", 5432))
            url = f"postgresql+psycopg://{user}@127.0.0.1:{port}/{name}?sslmode=disable"
            for who, anchor in (("HyMemoryStore", False), ("PostgresStore", True)):
                if anchor and not args.anchor:
                    continue
                figures = _measure(url, args.rounds, anchor, "slow" if delayed else "fast")
                where = f"+{args.delay_ms} ms each way" if delayed else "direct"
                print(f"{who:14} {where:20} " + "  ".join(f"{k} p50 {v:.3f} ms" for k, v in figures.items()))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


if __name__ == "__main__":
    main()
