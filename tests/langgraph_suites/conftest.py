"""Start LangGraph's store suites as soon as the session knows it will run them.

Each suite runs in its own pytest process (minutes, mostly waiting on TTL sleeps and
the database), so it is started right after collection and runs beside the rest of
the session; its test only waits for it. The PostgreSQL run starts early only when
``HY_TEST_PG_URL`` names the server (CI); otherwise its test starts it once the
session's server is up.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import suite_runs


def pytest_collection_finish(session: pytest.Session) -> None:
    selected = {item.name for item in session.items if item.path.parent == Path(__file__).parent}
    if "test_langgraph_sqlite_store_modules_pass" in selected:
        suite_runs.start("langgraph-checkpoint-sqlite")
    url = os.environ.get("HY_TEST_PG_URL", "").strip()
    if url and "test_langgraph_postgres_store_modules_pass" in selected:
        suite_runs.start("langgraph-checkpoint-postgres", suite_runs.libpq_uri(url))
