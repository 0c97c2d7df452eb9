"""Pro mode: one ``workflow_extract`` call; garbage → lite rules; lite makes zero calls."""

from __future__ import annotations

from typing import Any

import pytest

from hy_memory_langgraph.fences import read_fences
from hy_memory_langgraph.testing import RaisingChatModel, ScriptedChatModel
from hy_memory_langgraph.workflow.entries import PENDING_ID
from tests.workflow.conftest import ALIAS_ZH, WF_ID, msgs

EXCHANGE = msgs(
    "看看我这个月提的问题流程",
    ("assistant", f"匹配到两个工作流：1. E10客户问题支持解决流程({WF_ID}) 2. 内部问题流程(55)。请问是哪一个？"),
    '第一个。这个流程里"紧急程度"选"高"就是当天处理。另外以后列表先显示待处理的。',
)


def _entry(dimension: str, text: str, workflow_id: str | None = None, alias: str | None = None,
           name: str | None = None) -> dict[str, Any]:
    return {"dimension": dimension, "workflow_id": workflow_id, "text": text, "alias": alias, "workflow_name": name}


def test_one_call_routes_every_dimension(make_service: Any) -> None:
    model = ScriptedChatModel.from_stages({"workflow_extract": {"entries": [
        # mislabelled as workflow by the model: an alias still lands in global
        _entry("workflow", f'业务别名"问题流程" = 工作流"E10客户问题支持解决流程"，workflowId={WF_ID}。',
               WF_ID, "问题流程", "E10客户问题支持解决流程"),
        _entry("workflow", '在E10客户问题支持解决流程中，"紧急程度"选"高"表示当天处理。', None),
        _entry("user", "用户希望列表结果优先显示待处理的事项。"),
    ]}})
    service = make_service("pro", model)
    result = service.memory_extract("u1", msg_list=EXCHANGE, workflow_id=WF_ID)
    assert model.call_count == 1 and model.stages == ["workflow_extract"]
    assert result["source"] == "llm" and result["saved"] is True
    assert [(e["dimension"], e["kind"]) for e in result["entries"]] == [
        ("global", "alias"), (f"workflow:{WF_ID}", "rule"), ("user", "pref")]
    assert result["entries"][0]["workflowId"] == WF_ID


def test_prompt_carries_messages_hint_context_and_existing_memory(make_service: Any) -> None:
    make_service().memory_extract("u1", msg_list=msgs("以后回复简洁点"))
    model = ScriptedChatModel.from_stages({"workflow_extract": {"entries": []}})
    result = make_service("pro", model).memory_extract(
        "u1", msg_list=EXCHANGE, workflow_id=WF_ID, dynamic_context={"scene": "search"})
    assert result["saved"] is False and result["source"] == "llm"
    system, user = (m.content for m in model.prompts[0])
    assert "维度" in system  # Chinese exchange → zh template
    assert f'工作流 ID 提示："{WF_ID}"' in user
    regions = {region.name: region.rows for region in read_fences(user)}
    assert regions["dynamic_context"] == [{"scene": "search"}]
    assert "- [pref:replyStyle] 以后回复简洁点" in regions["existing"]
    assert any(row.get("assistant", "").startswith("匹配到两个工作流") for row in regions["messages"])


def test_alias_id_not_in_exchange_becomes_pending(make_service: Any) -> None:
    model = ScriptedChatModel.from_stages({"workflow_extract": {"entries": [
        _entry("global", "业务别名…", "123456789", "报销", "国内差旅费用报销流程")]}})
    result = make_service("pro", model).memory_extract("u1", msg_list=msgs("我说的报销就是国内差旅那个"))
    assert result["entries"][0]["workflowId"] == PENDING_ID


def test_workflow_entry_without_any_id_is_skipped(make_service: Any) -> None:
    model = ScriptedChatModel.from_stages({"workflow_extract": {"entries": [
        _entry("workflow", '"成本中心"指"部门编码"字段。')]}})
    result = make_service("pro", model).memory_extract("u1", msg_list=msgs("x"))
    assert result["saved"] is False and result["skipped"][0]["reason"] == "no_workflow_id"


def test_entries_with_credentials_are_dropped(make_service: Any) -> None:
    model = ScriptedChatModel.from_stages({"workflow_extract": {"entries": [
        _entry("user", "用户的 ETEAMSID 是 abc"), _entry("user", "以后回复用中文")]}})
    result = make_service("pro", model).memory_extract("u1", msg_list=msgs("以后回复用中文"))
    assert [e["line"] for e in result["entries"]] == ["- [pref] 以后回复用中文"]
    assert result["skipped"][0]["reason"] == "credentials"


@pytest.mark.parametrize("reply", [
    "I cannot help with that.",
    '{"entries": "none"}',
    '{"entries": [{"foo": 1}, "bar"]}',
    "[1, 2, 3]",
])
def test_garbage_falls_back_to_lite_rules(make_service: Any, reply: str) -> None:
    model = ScriptedChatModel.from_stages({"workflow_extract": reply})
    result = make_service("pro", model).memory_extract("u1", msg_list=msgs(ALIAS_ZH), workflow_id=WF_ID)
    assert model.call_count == 1
    assert result["source"] == "lite_fallback" and result["saved"] is True
    assert result["entries"][0]["dimension"] == "global"


def test_failing_model_falls_back_to_lite_rules(make_service: Any) -> None:
    service = make_service("pro", RaisingChatModel.create())
    result = service.memory_extract("u1", msg_list=msgs(ALIAS_ZH))
    assert result["source"] == "lite_fallback" and result["saved"] is True
    assert service.context.llm.usage.snapshot()["workflow_extract"]["failures"] == 1


def test_lite_service_never_calls_a_given_model(make_service: Any) -> None:
    model = RaisingChatModel.create()
    result = make_service("lite", model).memory_extract("u1", msg_list=EXCHANGE + msgs(ALIAS_ZH))
    assert result["saved"] is True and model.call_count == 0


def test_lite_client_makes_zero_llm_calls(make_client: Any) -> None:
    model = RaisingChatModel.create()
    client = make_client("lite", model)
    assert client.memory_extract("u1", msg_list=EXCHANGE + msgs(ALIAS_ZH))["saved"] is True
    assert client.memory_prompt("u1")["available"] is True
    assert model.call_count == 0 and client.llm_usage.total_calls == 0


def test_pro_client_counts_the_call(make_client: Any) -> None:
    model = ScriptedChatModel.from_stages({"workflow_extract": {"entries": [_entry("user", "以后回复简洁点")]}})
    client = make_client("pro", model)
    assert client.memory_extract("u1", user_message=["以后回复简洁点"], assistant_message=["好的"])["saved"]
    assert client.llm_usage.snapshot()["workflow_extract"]["calls"] == 1


def test_one_extraction_saves_a_bounded_number_of_entries(make_service: Any) -> None:
    from hy_memory_langgraph.workflow.nodes import MAX_ENTRIES

    model = ScriptedChatModel.from_stages({"workflow_extract": {"entries": [
        _entry("user", f"用户偏好第{i}号设置。") for i in range(400)]}})
    service = make_service("pro", model)
    result = service.memory_extract("u1", msg_list=EXCHANGE, workflow_id=WF_ID)
    assert result["saved"] is True and len(result["entries"]) == MAX_ENTRIES
    assert result["entries"][0]["line"].endswith("用户偏好第0号设置。")
