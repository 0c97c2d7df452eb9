"""Workflow-memory fixtures: services and clients on a temp dir, message helpers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.client import WorkflowMemoryService
from hy_memory_langgraph.models import LLMGateway

WF_ID = "1003655203465764898"
ALIAS_ZH = f'业务别名"问题流程"= 工作流"E10客户问题支持解决流程"，workflowId={WF_ID}'
ALIAS_ZH_PENDING = '业务别名"问题流程"= 工作流"E10客户问题支持解决流程"，workflowId=（待确认）'


def msgs(*items: tuple[str, str] | str) -> list[dict[str, str]]:
    """``msgs("hi", ("assistant", "hello"))`` → a seed msgList (bare strings are user turns)."""
    out = []
    for item in items:
        role, text = ("user", item) if isinstance(item, str) else item
        out.append({"msgRole": role, "msgValue": text})
    return out


@pytest.fixture
def workflow_root(tmp_path: Path) -> Path:
    return tmp_path / "workflow"


@pytest.fixture
def make_service(workflow_root: Path) -> Callable[..., WorkflowMemoryService]:
    def make(mode: str = "lite", model: Any = None, **kwargs: Any) -> WorkflowMemoryService:
        llm = LLMGateway(model) if model is not None else None
        return WorkflowMemoryService(workflow_root, mode=mode, llm=llm, **kwargs)

    return make


@pytest.fixture
def service(make_service: Callable[..., WorkflowMemoryService]) -> WorkflowMemoryService:
    return make_service()
