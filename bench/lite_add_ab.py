"""CPU time per lite add, side by side across source trees, interleaved rounds.

Each round runs every tree in a fresh process (``PYTHONPATH`` = the tree) that writes
900 LoCoMo turns through a lite client with hashing embeddings (the same vectors for
every tree, no model) and prints its CPU and wall milliseconds per add, the first 50 adds
left out as warm-up. Trees are git worktrees of the commits to compare, for example::

    git worktree add /tmp/before 6c90e6e
    HY_BENCH_DATA=../shared/data python -m bench.lite_add_ab /tmp/before,. --rounds 3

``--one`` runs a single measurement in this process (what each round starts, this file
run by path inside each tree, so trees older than it compare too).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_WARM_UP = 50
_TURNS = 900


def _one() -> tuple[float, float]:
    from langchain_core.embeddings import Embeddings

    from bench.lite_ingest import _hash_vector, _locomo_items
    from hy_memory_langgraph.client import HyMemoryClient

    class _Hashing(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [_hash_vector(t, 384) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return _hash_vector(text, 384)

    items = list(_locomo_items(5)[0])[-_TURNS:]
    with tempfile.TemporaryDirectory() as data_dir:
        client = HyMemoryClient(mode="lite", embeddings=_Hashing(), data_dir=data_dir)
        for it in items[:_WARM_UP]:
            client.add([it["message"]], user_id="w" + it["user_id"], session_id=it["session_id"])
        cpu, wall = time.process_time(), time.perf_counter()
        for it in items[_WARM_UP:]:
            client.add([it["message"]], user_id=it["user_id"], session_id=it["session_id"])
        n = len(items) - _WARM_UP
        result = ((time.process_time() - cpu) / n * 1000, (time.perf_counter() - wall) / n * 1000)
        client.close()
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="?", default=".", help="comma-separated source trees")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--one", action="store_true", help="measure this process's tree once")
    args = parser.parse_args(argv)
    if args.one:
        print("%.4f %.4f" % _one())
        return
    trees = [str(Path(t).resolve()) for t in args.trees.split(",")]
    cpu: dict[str, list[float]] = {t: [] for t in trees}
    for _ in range(args.rounds):
        for tree in trees:
            env = dict(os.environ, PYTHONPATH=tree)
            out = subprocess.run([sys.executable, __file__, "--one"], cwd=tree, env=env,
                                 capture_output=True, text=True, check=True)
            cpu[tree].append(float(out.stdout.split()[0]))
            print(tree, out.stdout.strip(), flush=True)
    for tree, values in cpu.items():
        rounds = " / ".join(f"{v:.2f}" for v in values)
        print(f"{tree}: CPU per lite add, median {statistics.median(values):.2f} ms (rounds {rounds})")


if __name__ == "__main__":
    main()
