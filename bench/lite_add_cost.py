"""Mean time of one lite ``add`` per variant, variants interleaved in fresh processes.

Every LoCoMo turn of ``--conversations`` conversations from the ``--skip``-th on (CC BY-NC
4.0, Maharana et al. 2024; ``--skip 3 --conversations 2``: the two the settings were not
chosen on) is written with one ``client.add`` (lite mode, 384-d hashing vectors: no
model time), after 50 warm-up adds; each variant runs in a fresh interpreter, the
variants alternate for ``--rounds`` rounds (so a slower moment of the machine hits all
of them), and the mean of the rounds' means is printed with each round's figure.

Variants (any number, each a comma-separated list of settings):

* ``default``: the package as it is;
* ``checkpoint-pages=N``: a SQLite writer checkpoints its own log past ``N`` pages.

Usage::

    python -m bench.lite_add_cost default checkpoint-pages=2000 [--rounds 3]
                                  [--conversations 3] [--skip 0]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time

from bench.lite_ingest import _hash_vector, _locomo_items

DIMS = 384


def _child(variant: str, conversations: int, skip: int) -> float:
    from langchain_core.embeddings import Embeddings

    from hy_memory_langgraph.store import store as store_module

    settings = dict(part.partition("=")[::2] for part in variant.split(","))
    if "checkpoint-pages" in settings:
        store_module.WRITER_CHECKPOINT_PAGES = int(settings["checkpoint-pages"])
    from hy_memory_langgraph.client import HyMemoryClient

    class Hashing(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [_hash_vector(t, DIMS) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return _hash_vector(text, DIMS)

    items, _ = _locomo_items(skip + conversations)
    skipped = {item["user_id"] for item in _locomo_items(skip)[0]} if skip else set()
    items = [item for item in items if item["user_id"] not in skipped]
    with tempfile.TemporaryDirectory() as data_dir:
        client = HyMemoryClient(mode="lite", embeddings=Hashing(), data_dir=data_dir)
        for item in items[:50]:
            client.add([item["message"]], user_id="warm-" + item["user_id"], session_id=item["session_id"])
        started = time.perf_counter()
        for item in items:
            client.add([item["message"]], user_id=item["user_id"], session_id=item["session_id"])
        elapsed = time.perf_counter() - started
        client.close()
    return elapsed / len(items) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="*", default=["default"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--conversations", type=int, default=3)
    parser.add_argument("--skip", type=int, default=0)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(f"{_child(args.child, args.conversations, args.skip):.4f}")
        return 0
    runs: dict[str, list[float]] = {v: [] for v in args.variants}
    for _ in range(args.rounds):
        for variant in args.variants:
            done = subprocess.run([sys.executable, "-m", "bench.lite_add_cost", "--child", variant,
                                   "--conversations", str(args.conversations), "--skip", str(args.skip)],
                                  capture_output=True, text=True, check=True)
            runs[variant].append(float(done.stdout.split()[-1]))
    for variant, means in runs.items():
        rounds = " / ".join(f"{m:.3f}" for m in means)
        print(f"{variant:<28} {statistics.mean(means):.3f} ms per add  (rounds: {rounds})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
