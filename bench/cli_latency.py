"""Wall time of each ``hy-memory`` command on a small data dir, beside ``python -c pass``.

A data dir of a few lite memories is written once (``hy-memory add``, the embedded e5),
then each case runs in a fresh interpreter, the cases interleaved round by round so a
busy machine slows them alike. Printed per case: the median wall time, the median of
(case - ``python -c pass``) within each round (the command's own cost), the ratio to
the baseline, and the median CPU time (user + system) of the process, which a busy
machine inflates much less than the wall time (it can exceed the wall time: NumPy's
import starts OpenBLAS's threads). ``--compare DIR`` adds each command run from another
checkout (e.g. the main branch, ``PYTHONPATH=DIR``) in the same rounds, for a
before/after figure. A second table splits one ``list`` of this checkout into stages
(:data:`STAGES`), run once per round in one interpreter.

Targets (issue 53): the commands that need no model (``list``, ``get``, ``history``,
``stats``, ``export``, ``log``) answer in at most 0.5 s at rest, ``--help`` in 0.15 s.
The "floor" case imports only the libraries a reading command loads through the store
code: SQLAlchemy with its PostgreSQL dialect (the tables' ``postgresql_*`` index options
load it), LangGraph's ``BaseStore`` with the ``langchain_core`` it loads. No reading
command that reads through :class:`~hy_memory_langgraph.store.HyMemoryStore` starts
faster. NumPy and FAISS are not in it: they load with the first store opened with an
index (its vector side), which no reading command opens; "floor with numpy" prices them.

Usage::

    python -m bench.cli_latency [--rounds 9] [--compare /work/main]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "hy_memory_langgraph.cli"]
USER = "alice"
TEXTS = ["I adopted a grey cat called Miso", "I work as a nurse in Porto",
         "My sister Ana lives in Lisbon", "I am learning to play the cello"]


def _env(pythonpath: Path) -> dict[str, str]:
    """The environment of a run from ``pythonpath`` (no API key, no database URL), with
    byte code written and read as an installed package has it (``PYTHONDONTWRITEBYTECODE``
    would compile every module from source at every start). Runs start in the temporary
    dir, not in a checkout: ``-m`` imports from the cwd first."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "MEMORY_DB_URL", "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPATH"] = str(pythonpath)
    return env


def _run(cmd: list[str], env: dict[str, str], cwd: Path) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=env, cwd=cwd).stdout


def _data_dir(root: Path, env: dict[str, str]) -> tuple[str, str]:
    """Write the memories; return a memory id and a request id (of the last add)."""
    for text in TEXTS:
        out = _run([*CLI, "--data-dir", str(root), "add", "--text", text, "-u", USER, "--mode", "lite", "--json"],
                   env, root.parent)
    result = json.loads(out)["data"]["results"][0]
    return result["memory_ids"][0], result["request_id"]


#: Cases that run no code of a checkout (run once, not per ``--compare`` checkout).
BASELINES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "floor: import sqlalchemy.dialects.postgresql, langgraph.store.base": [
        sys.executable, "-c", "import sqlalchemy.dialects.postgresql, langgraph.store.base"],
    "floor with numpy": [sys.executable, "-c", "import sqlalchemy.dialects.postgresql, langgraph.store.base, numpy"],
}


def commands(data_dir: Path, memory_id: str, request_id: str) -> dict[str, list[str]]:
    """Every timed ``hy-memory`` command."""
    d = ["--data-dir", str(data_dir)]
    return {
        "--help": [*CLI, "--help"],
        "list": [*CLI, *d, "list", "-u", USER],
        "get": [*CLI, *d, "get", memory_id],
        "history": [*CLI, *d, "history", memory_id],
        "stats": [*CLI, *d, "stats"],
        "export": [*CLI, *d, "export", "-o", os.devnull],
        "log": [*CLI, *d, "log", request_id],
        "search (model: reference)": [*CLI, *d, "search", "what is my cat called", "-u", USER],
    }


#: Where the time of ``list`` goes: each stage imports what the next needs first (an
#: import loads only what earlier stages have not), then the command runs in-process.
STAGES = (
    ("the floor's libraries", "import sqlalchemy.dialects.postgresql, langgraph.store.base"),
    ("the secret detectors (imported by the stores' seal)", "import hy_memory_langgraph.redact"),
    ("the store package (HyMemoryStore and its modules)", "import hy_memory_langgraph.store"),
    ("repositories and the run-time context",
     "import hy_memory_langgraph.repos.chat, hy_memory_langgraph.services.context"),
    ("the reader and the CLI", "import hy_memory_langgraph.client.reader, hy_memory_langgraph.cli.memories"),
)
STAGE_PROBE = f"""
import contextlib, io, json, sys, time
marks = [time.perf_counter()]
for _, statement in {STAGES!r}:
    exec(statement)
    marks.append(time.perf_counter())
from hy_memory_langgraph.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["--data-dir", sys.argv[1], "list", "-u", {USER!r}])
marks.append(time.perf_counter())
print(json.dumps([b - a for a, b in zip(marks, marks[1:])]))
"""


def _stages(data_dir: Path, env: dict[str, str], cwd: Path) -> list[float]:
    """Seconds of each stage of one ``list`` (:data:`STAGES`, then the command's run)."""
    return json.loads(_run([sys.executable, "-c", STAGE_PROBE, str(data_dir)], env, cwd))


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _once(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall time and CPU time of one run."""
    cpu, started = _cpu(), time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env, cwd=cwd)
    return time.perf_counter() - started, _cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--compare", type=Path, default=None,
                        help="another checkout whose commands run in the same rounds (PYTHONPATH)")
    args = parser.parse_args()
    here = _env(REPO)
    envs = {"": here} | ({f" [{args.compare}]": _env(args.compare.resolve())} if args.compare else {})
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "memory"
        memory_id, request_id = _data_dir(data_dir, here)
        runs = {name: (cmd, here) for name, cmd in BASELINES.items()}
        runs |= {name + tag: (cmd, env) for name, cmd in commands(data_dir, memory_id, request_id).items()
                 for tag, env in envs.items()}
        for cmd, env in runs.values():  # warm the file cache and the byte-code once
            _once(cmd, env, Path(tmp))
        times: dict[str, list[float]] = {name: [] for name in runs}
        cpus: dict[str, list[float]] = {name: [] for name in runs}
        stages: list[list[float]] = []
        for _ in range(args.rounds):
            for name, (cmd, env) in runs.items():
                wall, cpu = _once(cmd, env, Path(tmp))
                times[name].append(wall)
                cpus[name].append(cpu)
            stages.append(_stages(data_dir, here, Path(tmp)))
    base = times["python -c pass"]
    print(f"{args.rounds} rounds, {len(TEXTS)} memories; load average at the end: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| command | median wall s | minus `python -c pass` | x `python -c pass` | median CPU s |")
    print("|---|---:|---:|---:|---:|")
    for name, values in times.items():
        own = statistics.median(v - b for v, b in zip(values, base, strict=True))
        print(f"| {name} | {statistics.median(values):.3f} | {own:.3f} | "
              f"{statistics.median(values) / statistics.median(base):.1f} | {statistics.median(cpus[name]):.3f} |")
    print("\n| stage of `list` (in one interpreter, after its start) | median wall s |\n|---|---:|")
    for i, name in enumerate([*(stage for stage, _ in STAGES), "the command (parse, open the stores, read, print)"]):
        print(f"| {name} | {statistics.median(run[i] for run in stages):.3f} |")


if __name__ == "__main__":
    main()
