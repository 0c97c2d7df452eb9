"""Background writes run on the backends that persist: SQLite files and PostgreSQL."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
