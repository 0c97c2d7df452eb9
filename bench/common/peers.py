"""Running a benchmark's side of one system in its own interpreter (a peer's venv).

A side-by-side benchmark writes a job file, runs ``python -m <module> --child SYSTEM JOB``
under the interpreter that has that system installed, and reads the result file the
child wrote. Only the standard library is used here, so a peer's venv (which lacks this
package) can import the module that holds its child.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "add_peer_arguments", "run_child"]

ROOT = Path(__file__).resolve().parents[2]


def add_peer_arguments(parser: argparse.ArgumentParser) -> None:
    """``--peer-python`` (default ``$HY_PEER_PYTHON``) and the hidden ``--child SYSTEM JOB``."""
    parser.add_argument("--peer-python", default=os.environ.get("HY_PEER_PYTHON"))
    parser.add_argument("--child", nargs=2, metavar=("SYSTEM", "JOB"), help=argparse.SUPPRESS)


def run_child(module: str, system: str, python: str, job: dict[str, Any], workdir: Path,
              env: dict[str, str] | None = None) -> Any:
    """Run ``system``'s child of ``module`` on ``job`` (which names its ``out`` file);
    its JSON result. A failing child ends the benchmark with its error output."""
    job_path = workdir / f"{system}.job.json"
    job_path.write_text(json.dumps(job), encoding="utf-8")
    done = subprocess.run([python, "-m", module, "--child", system, str(job_path)], cwd=ROOT,
                          env={**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)},
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode:
        raise SystemExit(f"{system} failed:\n{done.stderr[-3000:]}")
    return json.loads(Path(job["out"]).read_text())
