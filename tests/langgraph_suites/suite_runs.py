"""Runs of LangGraph's store test modules in their own pytest process.

A run executes the modules of one unpacked source distribution (see ``fetch_suites.py``)
with ``hy_suite_plugin`` loaded, writes a JUnit report and is read back as a
:class:`SuiteOutcome`. Runs are started early (``conftest.py`` starts them right after
collection when ``HY_TEST_PG_URL`` names the server) and awaited by the tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from fetch_suites import DEFAULT_DEST, suite_dir

HERE = Path(__file__).resolve().parent
MODULES = {
    "langgraph-checkpoint-sqlite": ["tests/test_store.py", "tests/test_async_store.py", "tests/test_ttl.py"],
    # Its two 6,000- and 60,000-operation batch tests (test_large_batches*) pass too but take
    # about 6 minutes here: they are the PostgreSQL write-throughput benchmark of the
    # parallel-writers work, measured there rather than in every test run.
    "langgraph-checkpoint-postgres": ["tests/test_store.py", "tests/test_async_store.py",
                                      "-k", "not large_batches"],
}
#: How long a run may take before it is taken for hung (its normal length is minutes).
HANG_SECONDS = 3600


def suite_of(package: str) -> Path | None:
    """The unpacked suite of the installed ``package``, if it was fetched."""
    folder = suite_dir(Path(os.environ.get("HY_TEST_LANGGRAPH_SUITES") or DEFAULT_DEST), package)
    return folder if (folder / "tests").is_dir() else None


def libpq_uri(sqlalchemy_url: str) -> str:
    """``postgresql+psycopg://u@h:p/db`` as the plain URI the suite's psycopg calls take."""
    plain = sqlalchemy_url.replace("postgresql+psycopg://", "postgresql://", 1)
    return plain + ("&" if "?" in plain else "?") + "sslmode=disable"


@dataclass
class SuiteOutcome:
    returncode: int
    passed: list[str] = field(default_factory=list)
    xfailed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # failed, errored, skipped, xpassed
    tail: str = ""


class SuiteRun:
    """One pytest process over ``package``'s store modules (started on construction)."""

    def __init__(self, package: str, folder: Path, pg_uri: str | None = None) -> None:
        self.package = package
        self._dir = Path(tempfile.mkdtemp(prefix="hy-lg-suite-"))
        self._report = self._dir / "report.xml"
        self._log = (self._dir / "log.txt").open("w")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        if pg_uri:
            env["HY_SUITE_PG_URI"] = pg_uri
        command = [sys.executable, "-m", "pytest", "-p", "hy_suite_plugin", "-p", "no:cacheprovider",
                   "-o", "addopts=--strict-markers", "-q", f"--junitxml={self._report}", *MODULES[package]]
        self._process = subprocess.Popen(command, cwd=folder, env=env, stdout=self._log,
                                         stderr=subprocess.STDOUT)

    def outcome(self) -> SuiteOutcome:
        """Wait for the run and read its report (its folder is removed afterwards)."""
        try:
            return self._read()
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)

    def _read(self) -> SuiteOutcome:
        try:
            code = self._process.wait(timeout=HANG_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            code = self._process.wait()
        self._log.close()
        tail = (self._dir / "log.txt").read_text(errors="replace")[-4000:]
        result = SuiteOutcome(code, tail=tail)
        if not self._report.exists():
            result.problems.append("no report: the run did not get as far as writing one")
            return result
        for case in ET.parse(self._report).getroot().iter("testcase"):
            name = f"{case.get('classname')}.{case.get('name')}"
            children = {child.tag: child for child in case}
            skipped = children.get("skipped")
            if "failure" in children or "error" in children:
                detail = children.get("failure", children.get("error"))
                result.problems.append(f"{name}: {(detail.get('message') or '')[:300]}")
            elif skipped is not None and skipped.get("type") == "pytest.xfail":
                result.xfailed.append(name)
            elif skipped is not None:
                result.problems.append(f"{name}: skipped: {skipped.get('message')}")
            else:
                result.passed.append(name)
        return result


_RUNS: dict[str, SuiteRun] = {}


def start(package: str, pg_uri: str | None = None) -> SuiteRun | None:
    """Start (once) the run of ``package``; ``None`` when its suite was not fetched."""
    if package not in _RUNS:
        folder = suite_of(package)
        if folder is None:
            return None
        _RUNS[package] = SuiteRun(package, folder, pg_uri)
    return _RUNS[package]
