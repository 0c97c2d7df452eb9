"""The bullet-line format parses back to the same entry."""

from __future__ import annotations

import pytest

from hy_memory_langgraph.workflow.entries import (
    PENDING_ID,
    Entry,
    parse_entries,
    parse_line,
)
from hy_memory_langgraph.workflow.merge import merge_entry


@pytest.mark.parametrize("entry", [
    Entry.make_alias("问题流程", "E10客户问题支持解决流程", "1003655203465764898"),
    Entry.make_alias("报销", "国内差旅费用报销流程", "待确认"),
    Entry.make_alias("leave (annual)", "Leave → Request", None),
    Entry.make("pref", "列表每页显示20条", key="pageSize"),
    Entry.make("fact", "查询待办前先看统计。"),
    Entry.make("rule", '在该流程中"成本中心"指"部门编码"字段。'),
])
def test_line_round_trip(entry: Entry) -> None:
    assert parse_line(entry.line()) == entry


def test_alias_line_is_the_seed_shape() -> None:
    entry = Entry.make_alias("问题流程", "E10客户问题支持解决流程", "1003655203465764898")
    assert entry.line() == "- [alias] 问题流程 → E10客户问题支持解决流程 (workflowId=1003655203465764898)"
    assert Entry.make_alias("a", "b", "(待确认)").target_id == PENDING_ID


def test_headings_and_prose_are_ignored_hand_bullets_kept() -> None:
    doc = "# memory.md\n\nsome prose\n- a hand-written note\n- [fact] x\n"
    assert [(e.kind, e.text) for e in parse_entries(doc)] == [("note", "a hand-written note"), ("fact", "x")]


def test_merge_rules() -> None:
    doc = [Entry.make_alias("问题流程", "E10", PENDING_ID)]
    assert merge_entry(doc, Entry.make_alias("问题流程", "E10", PENDING_ID)).reason == "duplicate"
    assert merge_entry(doc, Entry.make_alias(" 问题流程", "E10", "42")).status == "updated"
    assert merge_entry(doc, Entry.make_alias("问题流程", "E10", PENDING_ID)).reason == "duplicate"
    assert [e.target_id for e in doc] == ["42"]
    assert merge_entry(doc, Entry.make("fact", "Use stats first.")).status == "added"
    assert merge_entry(doc, Entry.make("fact", "use stats first")).reason == "duplicate"
    assert len(doc) == 2
