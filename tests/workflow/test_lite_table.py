"""Lite mode, measured as an agent uses it: a table of zh and en exchanges → dimension and line.

One row per exchange: the messages, the ``workflowId`` argument, and exactly the entries
that must be saved (``[]``: nothing may be saved). The four clarification kinds of the
contract (workflow name / disambiguation, field name, browse-button value, option
value), content routing without a ``workflowId``, and what must never be saved
(one-off text, date and amount values of this form, a normal completed form).
"""

from __future__ import annotations

from typing import Any

import pytest

from hy_memory_langgraph.client import WorkflowMemoryService
from tests.workflow.conftest import msgs
from tests.workflow.support import prompt_text

A = "assistant"
W = "100003460000000060"          # the seed's workflowId
ISSUE_ID = "1003655203465764898"
DOMESTIC = "100003460000000071"
LEAVE = "100003460000000052"
WF = f"workflow:{W}"


def row(case_id: str, messages: list[dict[str, str]], workflow_id: str | None,
        expected: list[tuple[str, str]]) -> Any:
    return pytest.param(messages, workflow_id, expected, id=case_id)


ALIASES = [
    row("zh-seed-number-choice", msgs(
        "我本月发起的报销流程怎么样了", (A, "匹配到多个报销相关工作流，请确认要查看哪一个。"), "5"), W,
        [("global", f"- [alias] 报销流程 → （名称待确认） (workflowId={W})")]),
    row("zh-listed-candidates-by-index", msgs(
        "看看我这个月提的问题流程",
        (A, f"匹配到两个工作流：1. E10客户问题支持解决流程({ISSUE_ID}) 2. 内部问题流程(55)。请问是哪一个？"),
        "第一个"), None,
        [("global", f"- [alias] 问题流程 → E10客户问题支持解决流程 (workflowId={ISSUE_ID})")]),
    row("zh-listed-candidates-by-name-part", msgs(
        "看看我的差旅报销流程",
        (A, (f"匹配到两个工作流：国内差旅费用报销流程({DOMESTIC})、海外差旅费用报销流程(100003460000000088)，"
             "请问是哪一个？")),
        "不是海外的，是国内的"), None,
        [("global", f"- [alias] 差旅报销流程 → 国内差旅费用报销流程 (workflowId={DOMESTIC})")]),
    row("zh-correction-by-index", msgs(
        "看看我的报销流程",
        (A, (f"找到多个流程：1. 国内差旅费用报销流程({DOMESTIC}) 2. 海外差旅费用报销流程(100003460000000088)，"
             "请问您要查看哪个？")),
        "不是这个，是第二个"), None,
        [("global", "- [alias] 报销流程 → 海外差旅费用报销流程 (workflowId=100003460000000088)")]),
    row("zh-name-clarification-with-workflowId", msgs(
        "查一下我的用车流程", (A, '没有找到名为"用车流程"的工作流，请提供完整名称。'), "公务用车申请流程"),
        "100003460000000099",
        [("global", "- [alias] 用车流程 → 公务用车申请流程 (workflowId=100003460000000099)")]),
    row("zh-statement-display-form", msgs(f"我说的报销就是国内差旅费用报销流程({DOMESTIC})"), None,
        [("global", f"- [alias] 报销 → 国内差旅费用报销流程 (workflowId={DOMESTIC})")]),
    row("zh-statement-takes-workflowId", msgs("以后说报销就是指国内差旅费用报销流程"), DOMESTIC,
        [("global", f"- [alias] 报销 → 国内差旅费用报销流程 (workflowId={DOMESTIC})")]),
    row("zh-fact-sentence-unquoted", msgs(
        f"业务别名问题流程=工作流E10客户问题支持解决流程，workflowId={ISSUE_ID}"), None,
        [("global", f"- [alias] 问题流程 → E10客户问题支持解决流程 (workflowId={ISSUE_ID})")]),
    row("zh-fact-sentence-display-form", msgs(f'业务别名"报销"= 工作流"国内差旅费用报销流程({DOMESTIC})"'), None,
        [("global", f"- [alias] 报销 → 国内差旅费用报销流程 (workflowId={DOMESTIC})")]),
    row("zh-alias-with-workflowId-still-global", msgs(
        f'业务别名"问题流程"= 工作流"E10客户问题支持解决流程"，workflowId={ISSUE_ID}'), ISSUE_ID,
        [("global", f"- [alias] 问题流程 → E10客户问题支持解决流程 (workflowId={ISSUE_ID})")]),
    row("en-number-choice", msgs(
        "How are the expense claims I started this month?",
        (A, "Several expense workflows match, please confirm which one."), "5"), W,
        [("global", f"- [alias] expense claims → （名称待确认） (workflowId={W})")]),
    row("en-listed-candidates-by-ordinal", msgs(
        "Show my travel claims from this month.",
        (A, (f"Two workflows match: 1. Domestic Travel Expense Reimbursement({DOMESTIC}) "
             "2. Overseas Travel Expense Reimbursement(100003460000000088). Which one?")),
        "the first one"), None,
        [("global", f"- [alias] travel claims → Domestic Travel Expense Reimbursement (workflowId={DOMESTIC})")]),
    row("en-listed-candidates-by-name-part", msgs(
        "Show my travel claims from this month.",
        (A, (f"Did you mean Domestic Travel Expense Reimbursement ({DOMESTIC}) or "
             "Overseas Travel Expense Reimbursement (100003460000000088)?")),
        "I meant the domestic one"), None,
        [("global", f"- [alias] travel claims → Domestic Travel Expense Reimbursement (workflowId={DOMESTIC})")]),
    row("en-statement-display-form", msgs(f"By leave request I mean Employee Leave Request ({LEAVE})."), None,
        [("global", f"- [alias] leave request → Employee Leave Request (workflowId={LEAVE})")]),
    row("en-statement-workflow-word", msgs('"travel claim" means the Domestic Travel Expense Reimbursement workflow'),
        DOMESTIC,
        [("global", f"- [alias] travel claim → Domestic Travel Expense Reimbursement (workflowId={DOMESTIC})")]),
    row("en-when-i-say", msgs("When I say PTO, I mean Employee Leave Request."), LEAVE,
        [("global", f"- [alias] PTO → Employee Leave Request (workflowId={LEAVE})")]),
    row("en-fact-sentence-unquoted", msgs(f"alias leave = workflow Employee Leave Request, workflowId={LEAVE}"), None,
        [("global", f"- [alias] leave → Employee Leave Request (workflowId={LEAVE})")]),
    row("en-alias-with-workflowId-still-global", msgs(
        f'alias "leave" = workflow "Employee Leave Request", workflowId={LEAVE}'), LEAVE,
        [("global", f"- [alias] leave → Employee Leave Request (workflowId={LEAVE})")]),
]

FIELDS = [
    row("zh-field-quoted", msgs('在这个流程里说"成本中心"就是指"部门编码"字段'), W,
        [(WF, '- [rule] 在这个流程里说"成本中心"就是指"部门编码"字段')]),
    row("zh-field-unquoted", msgs("成本中心就是部门编码那个字段"), W,
        [(WF, "- [rule] 成本中心就是部门编码那个字段")]),
    row("zh-field-correction", msgs("不是部门字段，是成本中心字段"), W,
        [(WF, "- [rule] 不是部门字段，是成本中心字段")]),
    row("zh-field-names-its-workflow-no-id", msgs("在国内差旅费用报销流程里，成本中心指的是部门编码字段"), None,
        [("global", "- [fact] 在国内差旅费用报销流程里，成本中心指的是部门编码字段")]),
    row("zh-field-this-workflow-no-id", msgs("这个流程里成本中心就是部门编码字段"), None, []),
    row("en-field-quoted", msgs('In this workflow "cost center" means the Dept Code field.'), W,
        [(WF, '- [rule] In this workflow "cost center" means the Dept Code field')]),
    row("en-field-unquoted", msgs("cost center refers to the department code field"), W,
        [(WF, "- [rule] cost center refers to the department code field")]),
    row("en-field-names-its-workflow-no-id", msgs(
        "In the Domestic Travel Expense Reimbursement workflow, cost center means the department code field."), None,
        [("global", ("- [fact] In the Domestic Travel Expense Reimbursement workflow, cost center means the "
                     "department code field"))]),
    row("en-field-this-workflow-no-id", msgs("In this workflow cost center means the department code field."), None,
        []),
]

BROWSE = [
    row("zh-browse-issue-example", msgs('这个流程的"出差城市"字段是浏览按钮，选项里"一线城市"指北上广深'), W,
        [(WF, '- [rule] 这个流程的"出差城市"字段是浏览按钮，选项里"一线城市"指北上广深')]),
    row("zh-browse-choice", msgs(
        "帮我发起出差申请，项目填E10",
        (A, '"项目"是浏览按钮字段，匹配到多个项目：1. E10升级项目 2. E10运维项目，请选择。'), "1"), W,
        [(WF, '- [rule] 字段"项目"（浏览按钮）："E10"指"E10升级项目"')]),
    row("zh-browse-issue-example-no-id", msgs('这个流程的"出差城市"字段是浏览按钮，选项里"一线城市"指北上广深'), None,
        []),
    row("en-browse-statement", msgs(
        'In this workflow the Destination City field is a browse button, "tier-1 cities" means Beijing, '
        "Shanghai, Guangzhou and Shenzhen."), W,
        [(WF, ('- [rule] In this workflow the Destination City field is a browse button, "tier-1 cities" means '
               "Beijing, Shanghai, Guangzhou and Shenzhen"))]),
    row("en-browse-choice", msgs(
        "Start a travel request, project E10.",
        (A, ('The "Project" browse field matches several projects: 1. E10 Upgrade Project '
             "2. E10 Operations Project. Which one?")), "the first"), W,
        [(WF, '- [rule] Field "Project" (browse button): "E10" means "E10 Upgrade Project"')]),
]

OPTIONS = [
    row("zh-option-quoted", msgs('选项"加急"的意思是"当天处理"'), W, [(WF, '- [rule] 选项"加急"的意思是"当天处理"')]),
    row("zh-option-unquoted", msgs("紧急程度这个选项里，高表示当天处理"), W,
        [(WF, "- [rule] 紧急程度这个选项里，高表示当天处理")]),
    row("zh-option-pick-means", msgs('这个流程里"紧急程度"选"高"就是当天处理'), W,
        [(WF, '- [rule] 这个流程里"紧急程度"选"高"就是当天处理')]),
    row("zh-option-choice", msgs(
        "出差类型填省外", (A, '"出差类型"是选项字段，可选：1. 国内 2. 国外，"省外"对应哪一个？'), "国内"), W,
        [(WF, '- [rule] 字段"出差类型"（选项）："省外"指"国内"')]),
    row("en-option-quoted", msgs('The option "Urgent" means same-day handling.'), W,
        [(WF, '- [rule] The option "Urgent" means same-day handling')]),
    row("en-option-choice", msgs(
        "trip type: out of province",
        (A, '"Trip type" is an option field: 1. Domestic 2. International. Which one does "out of province" mean?'),
        "Domestic"), W,
        [(WF, '- [rule] Field "Trip type" (option): "out of province" means "Domestic"')]),
]

MUST_NOT_SAVE = [
    row("zh-text-value", msgs('帮我发起出差申请，事由填"拜访客户"'), W, []),
    row("zh-text-value-field", msgs('标题字段就是"3月北京出差"'), W, []),
    row("zh-date-value", msgs("出差日期是3月5日到3月8日"), W, []),
    row("zh-date-choice", msgs("帮我发起出差申请", (A, "请选择出差日期字段的值"), "3月5日"), W, []),
    row("zh-amount-value", msgs("报销金额就是1200元"), W, []),
    row("zh-amount-field", msgs("金额字段就是1200元"), W, []),
    row("zh-completed-form", msgs(
        "帮我发起一个出差申请，去北京，3月5日到3月8日，金额3000元", (A, "已填好表单，请确认提交。"), "提交",
        (A, "已提交，requestId=202403050001。")), W, []),
    row("zh-question", msgs("成本中心是指哪个字段？"), W, []),
    row("zh-which-month", msgs("看看我的报销流程", (A, "您要查看哪一个月的报销？"), "3"), W, []),
    row("zh-next-step-choice", msgs("帮我发起出差申请", (A, "请选择下一步操作：1. 提交 2. 保存草稿"), "1"), W, []),
    row("zh-pronoun-subject", msgs("我代表部门提交这个表单"), W, []),
    row("zh-unnamed-field", msgs("这个字段是必填的"), W, []),
    row("zh-todo-list-pick", msgs("看看我的报销流程待办",
                                  (A, "以下是你的待办：1. 差旅报销-张三(123456) 2. 差旅报销-李四(123457)"), "1"), W, []),
    row("en-text-value", msgs('Set the reason field to "client visit".'), W, []),
    row("en-date-value", msgs("The start date is 2024-03-05."), W, []),
    row("en-amount-value", msgs("The amount field is 1200 yuan."), W, []),
    row("en-completed-form", msgs(
        "Start a leave request for March 5 to March 8", (A, "The form is filled in, please confirm submission."),
        "submit", (A, "Submitted, requestId=202403050001.")), W, []),
    row("en-date-choice", msgs("Start a leave request", (A, 'Which date should the "Start date" field have?'),
                               "2024-03-05"), W, []),
]


@pytest.mark.parametrize(("messages", "workflow_id", "expected"),
                         ALIASES + FIELDS + BROWSE + OPTIONS + MUST_NOT_SAVE)
def test_lite_table(service: WorkflowMemoryService, messages: list[dict[str, str]], workflow_id: str | None,
                    expected: list[tuple[str, str]]) -> None:
    result = service.memory_extract("u1", msg_list=messages, workflow_id=workflow_id)
    assert result["source"] == "lite"
    assert [(e["dimension"], e["line"]) for e in result["entries"]] == expected
    assert result["saved"] is bool(expected)
    if expected:  # what is saved is what the next prompt shows
        prompt = prompt_text(service.memory_prompt("u1", workflow_id)["memoryPrompt"])
        assert all(line in prompt for _, line in expected if not _.startswith("workflow:") or workflow_id)


def test_table_covers_every_kind_in_both_languages() -> None:
    for group in (ALIASES, FIELDS, BROWSE, OPTIONS, MUST_NOT_SAVE):
        ids = [p.id for p in group]
        assert any(i.startswith("zh-") for i in ids) and any(i.startswith("en-") for i in ids)


def test_a_this_workflow_clarification_without_id_is_reported_skipped(service: WorkflowMemoryService) -> None:
    result = service.memory_extract("u1", msg_list=msgs("这个流程里成本中心就是部门编码字段"))
    assert result["skipped"] == [{"dimension": "workflow", "text": "这个流程里成本中心就是部门编码字段",
                                  "reason": "no_workflow_id"}]


def test_number_choice_without_any_id_saves_nothing(service: WorkflowMemoryService) -> None:
    result = service.memory_extract("u1", msg_list=msgs(
        "我本月发起的报销流程怎么样了", (A, "匹配到多个报销相关工作流，请确认要查看哪一个。"), "5"))
    assert result["saved"] is False and result["skipped"][0]["reason"] == "unresolved"


def test_pending_name_is_filled_by_a_later_save(service: WorkflowMemoryService) -> None:
    service.memory_extract("u1", msg_list=msgs(
        "我本月发起的报销流程怎么样了", (A, "匹配到多个报销相关工作流，请确认要查看哪一个。"), "5"), workflow_id=W)
    result = service.memory_extract("u1", msg_list=msgs(f'业务别名"报销流程"= 工作流"国内差旅费用报销流程"，workflowId={W}'))
    [entry] = result["entries"]
    assert entry["status"] == "updated" and entry["line"] == f"- [alias] 报销流程 → 国内差旅费用报销流程 (workflowId={W})"
    assert entry["previous"] == f"- [alias] 报销流程 → （名称待确认） (workflowId={W})"
    # a later number choice (name unknown again) adds nothing
    again = service.memory_extract("u1", msg_list=msgs(
        "我本月发起的报销流程怎么样了", (A, "匹配到多个报销相关工作流，请确认要查看哪一个。"), "5"), workflow_id=W)
    assert again["saved"] is False and again["skipped"][0]["reason"] == "duplicate"


def test_a_name_without_id_keeps_the_known_id(service: WorkflowMemoryService) -> None:
    service.memory_extract("u1", msg_list=msgs(
        "我本月发起的报销流程怎么样了", (A, "匹配到多个报销相关工作流，请确认要查看哪一个。"), "5"), workflow_id=W)
    result = service.memory_extract("u1", msg_list=msgs('业务别名"报销流程"= 工作流"国内差旅费用报销流程"，workflowId=（待确认）'))
    assert result["entries"][0]["line"] == f"- [alias] 报销流程 → 国内差旅费用报销流程 (workflowId={W})"


def test_hint_fills_only_a_single_alias_without_id(service: WorkflowMemoryService) -> None:
    result = service.memory_extract("u1", msg_list=msgs(
        '业务别名"报销"= 工作流"国内差旅费用报销流程"', '业务别名"请假"= 工作流"员工休假申请流程"'), workflow_id=W)
    assert [e["workflowId"] for e in result["entries"]] == ["（待确认）", "（待确认）"]


def test_fact_sentence_wins_over_the_choice_it_summarises(service: WorkflowMemoryService) -> None:
    result = service.memory_extract("u1", msg_list=msgs(
        "我本月发起的报销流程怎么样了", (A, "匹配到多个报销相关工作流，请确认要查看哪一个。"), "5",
        (A, f'业务别名"报销"= 工作流"国内差旅费用报销流程"，workflowId={W}')), workflow_id=W)
    assert [e["line"] for e in result["entries"]] == [f"- [alias] 报销 → 国内差旅费用报销流程 (workflowId={W})"]
