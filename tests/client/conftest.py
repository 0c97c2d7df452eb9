"""Client fixtures (clients themselves come from tests/conftest.py)."""

from __future__ import annotations

import pytest

from hy_memory_langgraph.testing import RaisingChatModel


@pytest.fixture
def raising_model() -> RaisingChatModel:
    return RaisingChatModel.create()
