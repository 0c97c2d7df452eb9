"""Start-up cost: the package import and ``hy-memory --help`` against LangGraph's own import.

Each case runs in a fresh interpreter, the cases interleaved round by round, so a busy
machine slows them alike; the script prints each case's median wall time and its ratio
to the baseline (``import langgraph.graph, langchain_core.messages``, what any LangGraph
agent loads anyway).

Usage::

    python -m bench.import_cost [--rounds 15]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time

CASES = {
    "baseline: import langgraph.graph, langchain_core.messages":
        [sys.executable, "-c", "import langgraph.graph, langchain_core.messages"],
    "import hy_memory_langgraph": [sys.executable, "-c", "import hy_memory_langgraph"],
    "from hy_memory_langgraph import HyMemoryClient":
        [sys.executable, "-c", "from hy_memory_langgraph import HyMemoryClient"],
    "hy-memory --help": [shutil.which("hy-memory") or "hy-memory", "--help"],
    "python -m hy_memory_langgraph.cli --help": [sys.executable, "-m", "hy_memory_langgraph.cli", "--help"],
}


def _once(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for name, cmd in CASES.items():  # warm the file cache once
        _once(cmd)
    for _ in range(rounds):
        for name, cmd in CASES.items():
            times[name].append(_once(cmd))
    base = statistics.median(next(iter(times.values())))
    print(f"{'case':<58} {'median s':>9} {'x baseline':>11}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<58} {median:>9.3f} {median / base:>11.2f}")


if __name__ == "__main__":
    main()
