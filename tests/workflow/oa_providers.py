"""OA context providers importable by ``MEMORY_OA_CONTEXT_PROVIDER`` in tests (and CLI subprocesses).

Point the variable at ``tests.workflow.oa_providers:<name>`` with the repository root on
``PYTHONPATH``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hy_memory_langgraph.workflow.errors import MemoryNotSupportedError

NOT_A_PROVIDER = "just a string"


def by_user(user_id: str) -> Mapping[str, Any]:
    """A smart-grouping OA version; the employee id is the user id."""
    return {"version": "10.0.9909.01", "smartGrouping": False,  # ignored: computed from version
            "user": {"position": "工程师", "department": "研发部", "subcompany": None, "employeeId": user_id}}


def old_version(user_id: str) -> Mapping[str, Any]:
    return {"version": "10.0.9908.99", "user": {"employeeId": user_id}}


def returns_none(user_id: str) -> None:
    return None


def raising(user_id: str) -> Mapping[str, Any]:
    raise ConnectionError("OA is down")


def unsupported(user_id: str) -> Mapping[str, Any]:
    raise MemoryNotSupportedError("this OA has no memory")


def not_a_mapping(user_id: str) -> Any:
    return ["10.0.9909.01"]


class _Provider:
    def get_oa_context(self, user_id: str) -> Mapping[str, Any] | None:
        return {"version": "11.0", "user": {"employeeId": f"obj-{user_id}"}}


PROVIDER = _Provider()
