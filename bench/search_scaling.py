"""Chat search cost as a user's memories grow: warm and cold ``client.search`` latency.

For each size N, one user gets N lite-style chat memories (sessions of 20 turns, random
vocabulary, deterministic hashing embeddings, so no model time is measured) written in
bulk through the chat repository; then, for each search path:

* cold: a new client opens the data dir and runs its first search (p50 over fresh
  clients);
* warm: the same client repeats searches with different queries (p50 / p95).

Paths: ``indexed`` (the default: BM25 from the store's persistent lexical index, vector
hits as keys, only the final memories read) and ``in-process`` (what search did before
the index, and still does on stores without one: every active memory loaded, neighbour
texts built and a BM25 index kept in step in the process).

With ``--db-url postgresql+psycopg://…`` the stores live in that PostgreSQL database
(fresh schemas per size, dropped afterwards) instead of SQLite files.

Usage:
    python -m bench.search_scaling [--sizes 1000 5000 20000 100000] [--queries 50]
                                   [--paths indexed in-process] [--db-url URL]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.repos.chat import ChatRepository
from hy_memory_langgraph.repos.records import ChatMemory
from hy_memory_langgraph.testing import HashingEmbeddings

WORDS = [f"w{i}" for i in range(5000)] + ["tea", "cat", "berlin", "marathon", "sister", "guitar",
                                           "paint", "beach", "dog", "camping", "job", "school"]
BATCH = 1000


DB_URL: str | None = None  # set by --db-url


def _client(data_dir: Path) -> HyMemoryClient:
    return HyMemoryClient(mode="lite", data_dir=data_dir, embeddings=HashingEmbeddings(dims=64), db_url=DB_URL)


@contextlib.contextmanager
def _schemas(prefix: str) -> Iterator[None]:
    """On PostgreSQL: this size's stores in schemas named ``prefix…``, dropped afterwards."""
    if DB_URL is None:
        yield
        return
    os.environ["MEMORY_DB_SCHEMA_PREFIX"] = prefix
    try:
        yield
    finally:
        admin = sa.create_engine(DB_URL, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
        with admin.connect() as conn:
            names = conn.execute(sa.text("SELECT nspname FROM pg_namespace WHERE nspname LIKE :p"),
                                 {"p": prefix + "%"}).scalars().all()
            for name in names:
                conn.execute(sa.text(f'DROP SCHEMA "{name}" CASCADE'))
        admin.dispose()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))


def _fill(client: HyMemoryClient, n: int, rng: random.Random) -> None:
    repo = client.context.chat_repo
    for start in range(0, n, BATCH):
        change = repo.begin("bench")
        for i in range(start, min(n, start + BATCH)):
            change.add(ChatMemory(memory_id=f"m{i:07d}", user_id="bench", content=_sentence(rng),
                                  memory_at="2024-01-01T00:00:00+00:00", memory_ts=1.7e9 + i,
                                  session_id=f"s{i // 20}", source="turn", role="user"), "ADD")
        repo.commit(change)


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@contextlib.contextmanager
def _path(name: str) -> Iterator[None]:
    """Search through the lexical index (``indexed``) or with every memory loaded."""
    if name == "indexed":
        yield
        return
    ready = ChatRepository.lexical_ready
    ChatRepository.lexical_ready = lambda self, *args, **kwargs: False  # type: ignore[method-assign]
    try:
        yield
    finally:
        ChatRepository.lexical_ready = ready  # type: ignore[method-assign]


def _timed(client: HyMemoryClient, query: str) -> float:
    started = time.perf_counter()
    client.search(query, user_ids=["bench"], limit=10)
    return (time.perf_counter() - started) * 1000


def measure(data_dir: Path, queries: int, rng: random.Random) -> dict[str, float]:
    cold = []
    for _ in range(3):
        fresh = _client(data_dir)
        cold.append(_timed(fresh, _sentence(rng)[:40]))
        fresh.close()
    client = _client(data_dir)
    client.search("warm up", user_ids=["bench"])
    warm = [_timed(client, _sentence(rng)[:40]) for _ in range(queries)]
    client.close()
    return {"cold_p50": statistics.median(cold), "warm_p50": statistics.median(warm),
            "warm_p95": _p(warm, 0.95)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000, 100000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--paths", nargs="+", choices=["indexed", "in-process"],
                        default=["indexed", "in-process"])
    parser.add_argument("--db-url", help="PostgreSQL URL (default: SQLite files in a temp dir)")
    args = parser.parse_args()
    global DB_URL
    DB_URL = args.db_url
    rng = random.Random(11)
    print("| memories per user | path | cold search p50 ms | warm p50 ms | warm p95 ms | bulk write s |")
    print("|---:|---|---:|---:|---:|---:|")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp, _schemas(f"scaling{n}_"):
            data_dir = Path(tmp)
            client = _client(data_dir)
            started = time.perf_counter()
            _fill(client, n, rng)
            written = time.perf_counter() - started
            client.close()
            for path in args.paths:
                with _path(path):
                    r = measure(data_dir, args.queries, rng)
                print(f"| {n:,} | {path} | {r['cold_p50']:.1f} | {r['warm_p50']:.1f} | {r['warm_p95']:.1f} "
                      f"| {written:.1f} |", flush=True)


if __name__ == "__main__":
    main()
