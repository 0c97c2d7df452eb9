"""memory_prompt: sections per dimension, oaContext, failures as diagnosis."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.client import WorkflowMemoryService
from hy_memory_langgraph.workflow.errors import MemoryNotSupportedError
from hy_memory_langgraph.workflow.files import escape_name
from hy_memory_langgraph.workflow.oa_context import (
    build_oa_context,
    parse_version,
    smart_grouping,
)
from tests.workflow.conftest import ALIAS_ZH, WF_ID, msgs
from tests.workflow.support import prompt_text

OA = {"version": "10.0.10000.01",
      "user": {"position": "工程师", "department": "研发部", "subcompany": "", "employeeId": "E42"}}


@pytest.fixture
def filled(service: WorkflowMemoryService) -> WorkflowMemoryService:
    service.memory_extract("u1", msg_list=msgs(ALIAS_ZH, "以后回复简洁点"))
    service.memory_extract("u1", msg_list=msgs('选项"加急"的意思是"当天处理"'), workflow_id=WF_ID)
    return service


def test_prompt_without_workflow_id_has_profile_and_global_only(filled: WorkflowMemoryService) -> None:
    result = filled.memory_prompt("u1")
    assert result["available"] is True and result["dataEmpty"] is False
    prompt = prompt_text(result["memoryPrompt"])
    assert prompt.startswith("## 用户画像 (user.md)\n- [pref:replyStyle] 以后回复简洁点\n")
    assert "## 长期记忆 (memory.md)\n- [alias] 问题流程 → E10客户问题支持解决流程" in prompt
    assert "工作流记忆" not in prompt and "加急" not in prompt
    assert result["counts"] == {"user": 1, "global": 1}


def test_prompt_with_workflow_id_adds_its_section(filled: WorkflowMemoryService) -> None:
    prompt = prompt_text(filled.memory_prompt("u1", WF_ID)["memoryPrompt"])
    assert prompt.index("## 用户画像") < prompt.index("## 长期记忆") < prompt.index(f"## 工作流记忆 (workflow:{WF_ID})")
    assert '- [rule] 选项"加急"的意思是"当天处理"' in prompt
    other = prompt_text(filled.memory_prompt("u1", "999")["memoryPrompt"])
    assert "## 工作流记忆 (workflow:999)\n- （暂无）" in other


def test_empty_memory_is_available_with_data_empty(service: WorkflowMemoryService) -> None:
    result = service.memory_prompt("nobody", WF_ID)
    assert result["available"] is True and result["dataEmpty"] is True
    assert result["memoryPrompt"] == "" and result["diagnosis"] is None


def test_oa_context_missing_by_default(filled: WorkflowMemoryService) -> None:
    result = filled.memory_prompt("u1")
    assert result["oaContext"] is None and result["oaContextMissing"] is True
    assert result["available"] is True and result["memoryNotSupported"] is False


def test_oa_context_from_provider(make_service: Any) -> None:
    service = make_service(oa_context_provider=lambda user_id: OA)
    result = service.memory_prompt("u1")
    assert result["oaContextMissing"] is False
    assert result["oaContext"] == {"version": "10.0.10000.01", "smartGrouping": True,
                                   "user": {"position": "工程师", "department": "研发部",
                                            "subcompany": None, "employeeId": "E42"}}


@pytest.mark.parametrize(("version", "expected"), [
    ("10.0.9909.01", True),
    ("10.0.9909.1", True),
    ("10.0.9909.02", True),
    ("10.0.10000.01", True),       # numerically larger although "1" < "9" as text
    ("10.0.9909.00", False),
    ("10.0.9908.99", False),
    ("10.0.999.01", False),        # textually larger, numerically smaller
    ("10.1", True),
    ("10.0.9909", False),          # missing segment counts as 0
    ("11", True),
    ("9.99.99999.99", False),
    ("V10.0.9910.01", True),
    ("10.0.x.01", False),
    ("", False),
    (None, False),
])
def test_smart_grouping_numeric_comparison(version: Any, expected: bool) -> None:
    assert smart_grouping(version) is expected
    assert build_oa_context({"version": version})["smartGrouping"] is expected


def test_parse_version() -> None:
    assert parse_version("10.0.9909.01") == (10, 0, 9909, 1)


class _Raising:
    def get_oa_context(self, user_id: str) -> Mapping[str, Any] | None:
        raise ConnectionError("OA down")


class _Unsupported:
    def get_oa_context(self, user_id: str) -> Mapping[str, Any] | None:
        raise MemoryNotSupportedError()


def test_provider_failure_keeps_the_memory_body_and_reports_it(filled: WorkflowMemoryService,
                                                               make_service: Any) -> None:
    expected = filled.memory_prompt("u1")
    result = make_service(oa_context_provider=_Raising()).memory_prompt("u1")
    assert result["available"] is True and result["memoryNotSupported"] is False
    assert prompt_text(result["memoryPrompt"]) == prompt_text(expected["memoryPrompt"]) != ""
    assert result["oaContext"] is None and result["oaContextMissing"] is True
    diagnosis = result["diagnosis"]
    assert {k: diagnosis[k] for k in ("code", "status", "fail", "dataEmpty")} == {
        "code": "OA_CONTEXT_FAILED", "status": 502, "fail": "oaContext", "dataEmpty": False}
    assert "ConnectionError: OA down" in diagnosis["message"]


@pytest.mark.parametrize("provider", [_Unsupported(), lambda user_id: {"memorySupported": False}])
def test_memory_not_supported(make_service: Any, provider: Any) -> None:
    result = make_service(oa_context_provider=provider).memory_prompt("u1")
    assert result["available"] is False and result["memoryNotSupported"] is True
    assert result["diagnosis"]["code"] == "MEMORY_NOT_SUPPORTED"


def test_memory_supported_flag_off(make_service: Any) -> None:
    service = make_service(memory_supported=False)
    assert service.memory_prompt("u1")["memoryNotSupported"] is True
    assert service.memory_extract("u1", msg_list=msgs(ALIAS_ZH)) == {
        "saved": False, "memoryNotSupported": True, "entries": [], "skipped": []}


def test_unreadable_storage_gives_diagnosis(service: WorkflowMemoryService, workflow_root: Path) -> None:
    (workflow_root / escape_name("u1") / "user.md").mkdir(parents=True)
    result = service.memory_prompt("u1")
    assert result["available"] is False
    assert result["diagnosis"]["code"] == "STORAGE_UNREADABLE" and result["diagnosis"]["fail"] == "storage"


def test_undecodable_file_gives_diagnosis(service: WorkflowMemoryService, workflow_root: Path) -> None:
    path = workflow_root / "u1" / "memory.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xff\xfe\xfa broken")
    assert service.memory_prompt("u1")["diagnosis"]["code"] == "STORAGE_UNREADABLE"


def test_hand_edited_file_is_read(service: WorkflowMemoryService, workflow_root: Path) -> None:
    path = workflow_root / "u1" / "memory.md"
    path.parent.mkdir(parents=True)
    path.write_text("# my notes\n- 周五下午不提交报销\n", encoding="utf-8")
    assert "- [note] 周五下午不提交报销" in service.memory_prompt("u1")["memoryPrompt"]
