"""Node: validate the ``memory_extract`` arguments (and refuse credentials)."""

from __future__ import annotations

from typing import Any

from hy_memory_langgraph.workflow.state import WorkflowExtractState
from hy_memory_langgraph.workflow.validation import validate_extract


def validate_input(state: WorkflowExtractState) -> dict[str, Any]:
    """Raises :class:`~hy_memory_langgraph.errors.InvalidInputError` on bad input."""
    return {"request": validate_extract(**state["args"])}
