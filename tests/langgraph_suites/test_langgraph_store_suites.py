"""LangGraph's own SqliteStore / PostgresStore test modules pass on HyMemoryStore.

The modules come from the source distributions of the installed
``langgraph-checkpoint-sqlite`` and ``langgraph-checkpoint-postgres`` (fetched by
``python tests/langgraph_suites/fetch_suites.py``; ``.ci/run`` does it) and run
unchanged in their own process, only their store-building fixtures adapted
(``hy_suite_plugin.py``). Without the fetched suites these tests skip, or fail under
``HY_TEST_REQUIRE_LANGGRAPH_SUITES=1`` (CI).
"""

from __future__ import annotations

import os

import pytest
import suite_runs
from hy_suite_plugin import DIVERGENT
from pg_server import PgServer

pytestmark = pytest.mark.slow


def _run_or_skip(package: str, pg_uri: str | None = None) -> suite_runs.SuiteRun:
    run = suite_runs.start(package, pg_uri)
    if run is None:
        message = (f"LangGraph's store suite of {package} is not fetched: "
                   "run python tests/langgraph_suites/fetch_suites.py")
        if os.environ.get("HY_TEST_REQUIRE_LANGGRAPH_SUITES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return run


def _check(outcome: suite_runs.SuiteOutcome, package: str, least: int) -> None:
    assert not outcome.problems, "\n".join([*outcome.problems, outcome.tail])
    assert outcome.returncode == 0, outcome.tail
    assert len(outcome.passed) >= least, outcome.tail  # the modules really ran
    expected = {key[1].split("::")[1] for key in DIVERGENT if key[0] == package}
    assert {name.rsplit(".", 1)[-1].split("[")[0] for name in outcome.xfailed} <= expected
    print(f"{package}: {len(outcome.passed)} passed, {len(outcome.xfailed)} expected divergences")


def test_langgraph_sqlite_store_modules_pass() -> None:
    outcome = _run_or_skip("langgraph-checkpoint-sqlite").outcome()
    _check(outcome, "sqlite", least=140)


def test_langgraph_postgres_store_modules_pass(pg_server: PgServer) -> None:
    outcome = _run_or_skip("langgraph-checkpoint-postgres", suite_runs.libpq_uri(pg_server.url)).outcome()
    _check(outcome, "postgres", least=270)
