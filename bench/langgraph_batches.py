"""LangGraph's two large-batch store tests: HyMemoryStore vs PostgresStore, one server.

``test_large_batches`` (10 threads submitting 6,000 sync calls) and
``test_large_batches_async`` (60,000 coroutines gathered at once) of the
``langgraph-checkpoint-postgres`` source distribution, each over the suite's three
store openings (``default``, ``pipe``, ``pool``), run twice in one invocation: with
``hy_suite_plugin`` (the modules' stores are HyMemoryStore) and with
``HY_SUITE_ANCHOR=1`` (LangGraph's own PostgresStore / AsyncPostgresStore, which
need no pgvector for these tests). Prints each test's call time and the ratio.

Needs the suite unpacked (``python tests/langgraph_suites/fetch_suites.py``) and a
PostgreSQL server.

Usage:
    python -m bench.langgraph_batches --pg postgresql+psycopg://postgres@127.0.0.1:55432/postgres
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITES = ROOT / "tests" / "langgraph_suites"


def _suite_folder() -> Path:
    sys.path.insert(0, str(SUITES))
    from suite_runs import suite_of  # noqa: PLC0415 - the tests' helper, found via SUITES

    folder = suite_of("langgraph-checkpoint-postgres")
    if folder is None:
        raise SystemExit("suite not fetched: run python tests/langgraph_suites/fetch_suites.py")
    return folder


def _run(folder: Path, uri: str, anchor: bool) -> dict[str, float]:
    """Call seconds per test id of one pytest run (raises if a test did not pass)."""
    with tempfile.TemporaryDirectory(prefix="hy-batches-") as tmp:
        return _run_in(folder, uri, anchor, Path(tmp) / "report.xml")


def _run_in(folder: Path, uri: str, anchor: bool, report: Path) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(SUITES), str(ROOT)])
    env["HY_SUITE_PG_URI"] = uri
    env["HY_SUITE_ANCHOR"] = "1" if anchor else "0"
    command = [sys.executable, "-m", "pytest", "-p", "hy_suite_plugin", "-p", "no:cacheprovider",
               "-o", "addopts=", "-o", "junit_duration_report=call", "-q", f"--junitxml={report}", "tests/test_async_store.py",
               "-k", "large_batches"]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{'anchor' if anchor else 'HyMemoryStore'} run failed:\n{done.stdout[-3000:]}")
    times = {}
    for case in ET.parse(report).iter("testcase"):
        times[case.get("name", "")] = float(case.get("time", "nan"))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pg", required=True, help="SQLAlchemy URL of the server")
    args = parser.parse_args()
    uri = args.pg.replace("postgresql+psycopg://", "postgresql://", 1)
    uri += ("&" if "?" in uri else "?") + "sslmode=disable"
    folder = _suite_folder()
    ours = _run(folder, uri, anchor=False)
    anchor = _run(folder, uri, anchor=True)
    print(f"{'test':44} {'HyMemoryStore s':>16} {'PostgresStore s':>16} {'ratio':>7}")
    for name in sorted(ours):
        a = anchor.get(name, float("nan"))
        print(f"{name:44} {ours[name]:16.2f} {a:16.2f} {ours[name] / a:7.2f}")


if __name__ == "__main__":
    main()
