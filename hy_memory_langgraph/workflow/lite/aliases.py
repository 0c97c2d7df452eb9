"""Alias rules: alias fact sentences (any message) and the user's own alias statements.

Fact sentences are what agents are told to write, quoted or not::

    业务别名"问题流程"= 工作流"E10客户问题支持解决流程"，workflowId=1003655203465764898
    业务别名问题流程=工作流E10客户问题支持解决流程，workflowId=1003655203465764898
    alias "leave" = workflow "Employee Leave Request", workflowId=100003460000000052
    alias leave = workflow Employee Leave Request, workflowId=100003460000000052

Statements are what users say (user messages only)::

    我说的报销就是国内差旅费用报销流程(100003460000000071)
    问题流程就是E10客户问题支持解决流程
    By leave request I mean Employee Leave Request (100003460000000052)
    "travel claim" means the Domestic Travel Expense Reimbursement workflow

A name in display form ``名称(ID)`` is split into the name and the id (by the router).
Without an id the candidate carries ``workflow_id: None`` (missing) — the router may
fill it from the ``workflowId`` argument; an explicit ``（待确认）`` stays pending.
"""

from __future__ import annotations

import re
from typing import Any

from hy_memory_langgraph.workflow.entries import normalize_text, one_line
from hy_memory_langgraph.workflow.lite.patterns import (
    Q_CLOSE,
    Q_OPEN,
    is_zh,
    split_display,
    strip_quotes,
)

_ID = r"(?P<id>\d{1,40}|（待确认）|\(待确认\)|待确认|pending|\(pending\))"
_QUOTED = rf"[{Q_OPEN}](?P<{{name}}>[^{Q_CLOSE}\n]{{{{1,80}}}})[{Q_CLOSE}]"
_NOT_Q = f"{Q_OPEN}{Q_CLOSE}"
_ID_TAIL_ZH = r"(?:\s*[，,；;、]?\s*(?:workflowId|workflow_id|工作流\s*ID|ID)\s*[=＝:：]?\s*" + _ID + r")?"
_ID_TAIL_EN = r"(?:\s*[,;]?\s*(?:workflowId|workflow_id|workflow\s+id|id)\s*[=:]?\s*" + _ID + r")?"

#: Alias fact sentences: quoted zh, quoted en, unquoted zh, unquoted en.
_ALIAS_PATTERNS = (
    re.compile(
        r"(?:业务)?别名\s*" + _QUOTED.format(name="alias")
        + r"\s*(?:=|＝|→|->|即|对应|指|就是)\s*(?:工作流|流程)?\s*" + _QUOTED.format(name="name")
        + _ID_TAIL_ZH,
        re.IGNORECASE,
    ),
    re.compile(
        r"(?:business\s+)?alias\s*" + _QUOTED.format(name="alias")
        + r"\s*(?:=|->|→|maps\s+to|means|is)\s*(?:the\s+)?(?:workflow\s*)?" + _QUOTED.format(name="name")
        + _ID_TAIL_EN,
        re.IGNORECASE,
    ),
    re.compile(
        rf"(?:业务)?别名\s*[:：]?\s*(?P<alias>[^\s=＝→{_NOT_Q}，,；;。:：]{{1,30}}?)"
        r"\s*(?:=|＝|→|->|就是|对应|即|指)\s*(?:工作流|流程)?\s*[:：]?\s*"
        rf"(?P<name>[^\s{_NOT_Q}，,；;。]{{1,60}}?)" + _ID_TAIL_ZH + r"(?=[\s，,；;。]|$)",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b(?:business\s+)?alias\s*:?\s*(?P<alias>[^=→{_NOT_Q},;:\n]{{1,40}}?)"
        r"\s*(?:=|->|→|\bmaps\s+to\b|\bmeans\b)\s*(?:the\s+)?(?:workflow\s*:?\s*)?"
        rf"(?P<name>[^{_NOT_Q},;\n]{{1,80}}?)" + _ID_TAIL_EN + r"(?=\s*(?:[,;]|\.(?:\s|$)|$))",
        re.IGNORECASE,
    ),
)

_STATEMENTS_ZH = (
    re.compile(r"^(?:以后|今后|往后)?\s*(?:我们?|大家)?(?:说|讲|提到|叫)的?\s*"
               r"(?P<alias>[^，,。；;：:\s]{1,20}?)\s*(?:的时候)?\s*[，,]?\s*"
               r"(?:就是指|就是|是指|指的是|都是指|都是|指|是)\s*(?:工作流|流程)?\s*"
               r"(?P<name>[^，,；;\s]{2,60})(?:[，,].*)?$"),
    re.compile(r"^(?P<alias>[^，,。；;：:\s]{1,20}?)\s*(?:就是指|就是|是指|指的是|即为|即)\s*"
               r"(?:工作流|流程)?\s*(?P<name>[^，,；;\s]{2,60})(?:[，,].*)?$"),
)
_STATEMENTS_EN = (
    re.compile(r"^(?:so\s+|and\s+|also\s+)?(?:by|when\s+i\s+say)\s+(?P<alias>.{1,40}?)\s*,?\s+i\s+mean\s+"
               r"(?:the\s+)?(?P<name>.{2,80}?)(?:\s+(?:workflow|process))?(?P<disp>\s*[(（]\d{2,40}[)）])?$",
               re.IGNORECASE),
    re.compile(rf"^(?P<alias>[{Q_OPEN}][^{Q_CLOSE}]{{1,40}}[{Q_CLOSE}]|[\w'-]+(?:\s+[\w'-]+){{0,3}})\s+"
               r"(?:means|refers\s+to|is\s+short\s+for|stands\s+for|is\s+another\s+name\s+for)\s+"
               r"(?:the\s+)?(?P<name>.{2,80}?)\s+(?:workflow|process)(?P<disp>\s*[(（]\d{2,40}[)）])?$",
               re.IGNORECASE),
)
_ZH_WORKFLOW_END = re.compile(r"(?:工作流|流程|申请|审批|报销|申请单|审批单|报销单)$")
_GENERIC_ALIAS = re.compile(r"^(?:这|那|该|此|本|它|其|this|that|it|the\s+one)", re.IGNORECASE)
_INSIDE_WORDS = re.compile(r"字段|选项|浏览|下拉|节点|\bfield\b|\boption\b", re.IGNORECASE)


def _candidate(alias: str, name: str, workflow_id: str | None, text: str) -> dict[str, Any]:
    return {"dimension": "global", "alias": strip_quotes(alias), "workflow_name": strip_quotes(name),
            "workflow_id": workflow_id, "text": one_line(text)}


def parse_alias_sentence(text: str) -> list[dict[str, Any]]:
    """Alias candidates of every alias fact sentence in ``text`` (with ``span``)."""
    out: list[dict[str, Any]] = []
    taken: list[tuple[int, int]] = []
    for pattern in _ALIAS_PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            name = m["name"].strip().rstrip(".")
            if not m["alias"].strip() or not name:
                continue
            taken.append(m.span())
            candidate = _candidate(m["alias"], name, m["id"], m.group(0))
            candidate["span"] = m.span()
            out.append(candidate)
    return sorted(out, key=lambda c: c["span"][0])


def _looks_like_workflow(name: str, zh: bool, has_id: bool) -> bool:
    if has_id:
        return True
    if zh:
        return bool(_ZH_WORKFLOW_END.search(name))
    return name[:1].isupper() or name[:1].isdigit()


def _plausible_alias(alias: str, raw_alias: str, name: str, explicit: bool, display_id: str | None) -> bool:
    """Form B (``X就是Y``) needs some sign that X names a workflow, not "下一步就是提交流程"."""
    if explicit or display_id or strip_quotes(raw_alias) != raw_alias.strip():
        return True
    return bool(_ZH_WORKFLOW_END.search(alias)) or normalize_text(alias) in normalize_text(name)


def alias_statement(sentence: str) -> dict[str, Any] | None:
    """An alias stated by the user in their own words, or ``None``.

    Example:
        >>> alias_statement("我说的报销就是国内差旅费用报销流程")["workflow_name"]
        '国内差旅费用报销流程'
    """
    zh = is_zh(sentence)
    for number, pattern in enumerate(_STATEMENTS_ZH if zh else _STATEMENTS_EN):
        match = pattern.match(sentence.strip())
        if match is None:
            continue
        alias = strip_quotes(match["alias"])
        raw_name = match["name"] + (match.groupdict().get("disp") or "")
        name, display_id = split_display(raw_name)
        if (not alias or _GENERIC_ALIAS.match(alias) or _INSIDE_WORDS.search(alias)
                or alias.lower() == name.lower()
                or not _looks_like_workflow(name, zh, display_id is not None)
                or not _plausible_alias(alias, match["alias"], name, number == 0 or not zh, display_id)):
            continue
        return _candidate(alias, name, display_id, sentence)
    return None
