"""Lite mode: deterministic rules, dimension routing, pending ids, duplicates."""

from __future__ import annotations

from pathlib import Path

from hy_memory_langgraph.client import WorkflowMemoryService
from hy_memory_langgraph.workflow.entries import PENDING_ID
from hy_memory_langgraph.workflow.files import escape_name
from tests.workflow.conftest import ALIAS_ZH, ALIAS_ZH_PENDING, WF_ID, msgs


def _read(root: Path, user: str, rel: str) -> str:
    return (root / escape_name(user) / rel).read_text(encoding="utf-8")


def test_alias_with_workflow_id_hint_still_goes_to_global(service: WorkflowMemoryService, workflow_root: Path) -> None:
    result = service.memory_extract("u1", msg_list=msgs(
        "我本月发起的问题流程怎么样了",
        ("assistant", "匹配到多个工作流，请确认要查看哪一个。"),
        "E10那个",
        ("assistant", ALIAS_ZH),
    ), workflow_id=WF_ID)
    assert result["saved"] is True
    [entry] = result["entries"]
    assert entry["dimension"] == "global" and entry["kind"] == "alias"
    assert entry["workflowId"] == WF_ID and entry["file"] == "memory.md"
    assert f"- [alias] 问题流程 → E10客户问题支持解决流程 (workflowId={WF_ID})" in _read(workflow_root, "u1", "memory.md")
    assert not (workflow_root / "u1" / "workflows").exists()


def test_field_rule_with_workflow_id_goes_to_that_workflow(service: WorkflowMemoryService, workflow_root: Path) -> None:
    result = service.memory_extract("u1", user_message=['在这个流程里说"成本中心"就是指"部门编码"字段'],
                                    assistant_message=["好的，已记住。"], workflow_id=WF_ID)
    assert [(e["dimension"], e["kind"]) for e in result["entries"]] == [(f"workflow:{WF_ID}", "rule")]
    assert result["entries"][0]["file"] == f"workflows/{WF_ID}.md"
    assert '"成本中心"就是指"部门编码"字段' in _read(workflow_root, "u1", f"workflows/{WF_ID}.md")


def test_field_rule_takes_the_id_from_dynamic_context(service: WorkflowMemoryService) -> None:
    result = service.memory_extract("u1", msg_list=msgs('选项"加急"的意思是"当天处理"'),
                                    dynamic_context={"workflowId": "777001"})
    assert result["entries"][0]["dimension"] == "workflow:777001"


def test_field_rule_without_any_workflow_id_is_not_saved(service: WorkflowMemoryService) -> None:
    result = service.memory_extract("u1", msg_list=msgs('说"成本中心"就是指"部门编码"字段'))
    assert result["saved"] is False and result["entries"] == []


def test_preferences_go_to_user_md(service: WorkflowMemoryService, workflow_root: Path) -> None:
    result = service.memory_extract("u1", msg_list=msgs("以后回复简洁点，每页显示20条"), workflow_id=WF_ID)
    assert {e["dimension"] for e in result["entries"]} == {"user"}
    text = _read(workflow_root, "u1", "user.md")
    assert "- [pref:pageSize] 列表每页显示20条" in text and "以后回复简洁点" in text


def test_english_alias_and_preferences(service: WorkflowMemoryService) -> None:
    result = service.memory_extract("u1", msg_list=msgs(
        'alias "leave" = workflow "Employee Leave Request", workflowId=100003460000000052',
        "From now on, keep answers short. Show 50 items per page.",
    ))
    by_dim = sorted((e["dimension"], e["kind"]) for e in result["entries"])
    assert by_dim == [("global", "alias"), ("user", "pref"), ("user", "pref")]
    alias = next(e for e in result["entries"] if e["kind"] == "alias")
    assert (alias["alias"], alias["workflowId"]) == ("leave", "100003460000000052")


def test_page_size_preference_is_updated_in_place(service: WorkflowMemoryService) -> None:
    service.memory_extract("u1", msg_list=msgs("每页显示20条"))
    result = service.memory_extract("u1", msg_list=msgs("每页显示50条"))
    assert result["entries"][0]["status"] == "updated"
    assert "列表每页显示50条" in service.memory_prompt("u1")["memoryPrompt"]
    assert "20条" not in service.memory_prompt("u1")["memoryPrompt"]


def test_nothing_recognised_saves_nothing(service: WorkflowMemoryService, workflow_root: Path) -> None:
    result = service.memory_extract("u1", msg_list=msgs(
        "我本月发起的报销流程怎么样了", ("assistant", "你本月发起了3条报销流程，都在审批中。"), "好的，谢谢",
    ), workflow_id="100003460000000060")
    assert result == {**result, "saved": False, "entries": [], "source": "lite"}
    assert not (workflow_root / "u1").exists()


def test_pending_alias_is_completed_in_place(service: WorkflowMemoryService, workflow_root: Path) -> None:
    first = service.memory_extract("u1", msg_list=msgs(ALIAS_ZH_PENDING))
    assert first["entries"][0]["workflowId"] == PENDING_ID
    service.memory_extract("u1", msg_list=msgs('另外，业务别名"请假"= 工作流"员工休假申请流程"，workflowId=52'))
    second = service.memory_extract("u1", msg_list=msgs(ALIAS_ZH), workflow_id=WF_ID)
    [entry] = second["entries"]
    assert entry["status"] == "updated" and entry["workflowId"] == WF_ID
    assert entry["previous"].endswith(f"(workflowId={PENDING_ID})")
    lines = [line for line in _read(workflow_root, "u1", "memory.md").splitlines() if line.startswith("- ")]
    assert lines == [
        f"- [alias] 问题流程 → E10客户问题支持解决流程 (workflowId={WF_ID})",
        "- [alias] 请假 → 员工休假申请流程 (workflowId=52)",
    ]


def test_pending_save_does_not_downgrade_a_known_id(service: WorkflowMemoryService) -> None:
    service.memory_extract("u1", msg_list=msgs(ALIAS_ZH))
    result = service.memory_extract("u1", msg_list=msgs(ALIAS_ZH_PENDING))
    assert result["saved"] is False
    assert result["skipped"][0]["reason"] == "duplicate"


def test_duplicates_are_not_saved_again(service: WorkflowMemoryService, workflow_root: Path) -> None:
    payload = msgs(ALIAS_ZH, "以后回复简洁点")
    assert service.memory_extract("u1", msg_list=payload)["saved"] is True
    before = {p: p.read_text(encoding="utf-8") for p in (workflow_root / "u1").glob("*.md")}
    again = service.memory_extract("u1", msg_list=payload, workflow_id=WF_ID)
    assert again["saved"] is False and again["entries"] == []
    assert {s["reason"] for s in again["skipped"]} == {"duplicate"}
    assert {p: p.read_text(encoding="utf-8") for p in (workflow_root / "u1").glob("*.md")} == before


def test_users_are_separate_and_ids_escaped(service: WorkflowMemoryService, workflow_root: Path) -> None:
    service.memory_extract("a.b@example.com", msg_list=msgs(ALIAS_ZH))
    service.memory_extract("../evil", msg_list=msgs("每页显示10条"))
    assert (workflow_root / "a%2Eb%40example%2Ecom" / "memory.md").is_file()
    assert (workflow_root / "%2E%2E%2Fevil" / "user.md").is_file()
    assert service.memory_prompt("other")["dataEmpty"] is True
