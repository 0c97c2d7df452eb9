"""Chat search cost as a user's memories grow: warm and cold ``client.search`` latency.

For each size N, one user gets N lite-style chat memories (sessions of 20 turns, random
vocabulary, deterministic hashing embeddings, so no model time is measured) written in
bulk through the chat repository; then:

* cold: a new client opens the data dir and runs its first search (p50 over fresh
  clients);
* warm: the same client repeats searches with different queries (p50 / p95).

Usage:
    python bench/search_scaling.py [--sizes 1000 5000 20000 100000] [--queries 50]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hy_memory_langgraph.client import HyMemoryClient  # noqa: E402
from hy_memory_langgraph.repos.records import ChatMemory  # noqa: E402
from hy_memory_langgraph.testing import HashingEmbeddings  # noqa: E402

WORDS = [f"w{i}" for i in range(5000)] + ["tea", "cat", "berlin", "marathon", "sister", "guitar",
                                           "paint", "beach", "dog", "camping", "job", "school"]
BATCH = 1000


def _client(data_dir: Path) -> HyMemoryClient:
    return HyMemoryClient(mode="lite", data_dir=data_dir, embeddings=HashingEmbeddings(dims=64))


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


def measure(n: int, queries: int, rng: random.Random) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp)
        client = _client(data_dir)
        _fill(client, n, rng)
        client.close()
        cold = []
        for _ in range(3):
            fresh = _client(data_dir)
            started = time.perf_counter()
            fresh.search(_sentence(rng)[:40], user_ids=["bench"], limit=10)
            cold.append((time.perf_counter() - started) * 1000)
            fresh.close()
        client = _client(data_dir)
        client.search("warm up", user_ids=["bench"])
        warm = []
        for _ in range(queries):
            started = time.perf_counter()
            client.search(_sentence(rng)[:40], user_ids=["bench"], limit=10)
            warm.append((time.perf_counter() - started) * 1000)
        client.close()
    return {"cold_p50": statistics.median(cold), "warm_p50": statistics.median(warm),
            "warm_p95": _p(warm, 0.95)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000, 100000])
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    rng = random.Random(11)
    print("| memories per user | cold search p50 ms | warm p50 ms | warm p95 ms |")
    print("|---:|---:|---:|---:|")
    for n in args.sizes:
        r = measure(n, args.queries, rng)
        print(f"| {n:,} | {r['cold_p50']:.1f} | {r['warm_p50']:.1f} | {r['warm_p95']:.1f} |",
              flush=True)


if __name__ == "__main__":
    main()
