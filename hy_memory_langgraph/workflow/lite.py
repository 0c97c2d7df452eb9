"""Lite mode: deterministic extraction rules (zero LLM calls).

Recognised, and nothing else (otherwise nothing is saved):

* alias fact sentences, in any message (agents are told to write them):
  ``业务别名"问题流程"= 工作流"E10客户问题支持解决流程"，workflowId=1003655203465764898``
  and ``alias "X" = workflow "Y", workflowId=N``; a missing id or ``（待确认）`` → pending;
* explicit preference sentences of the user → ``user`` (page size, reply style,
  "以后/from now on …" display and communication habits);
* a field/option/node/approval definition stated by the user (a quoted term plus
  "就是/是指/means …") → ``workflow`` when a workflow id is known (hint or dynamic context).
"""

from __future__ import annotations

import re
from typing import Any

from hy_memory_langgraph.messages import is_cjk
from hy_memory_langgraph.workflow.entries import one_line
from hy_memory_langgraph.workflow.validation import Message

__all__ = ["ALIAS_PATTERNS", "lite_candidates", "parse_alias_sentence"]

_Q_OPEN = "\"“「『'‘"
_Q_CLOSE = "\"”」』'’"
_QUOTED = rf"[{_Q_OPEN}](?P<{{name}}>[^{_Q_CLOSE}\n]{{{{1,80}}}})[{_Q_CLOSE}]"
_ID = r"(?P<id>\d{1,40}|（待确认）|\(待确认\)|待确认|pending|\(pending\))"
ALIAS_PATTERNS = (
    re.compile(
        r"(?:业务)?别名\s*" + _QUOTED.format(name="alias")
        + r"\s*(?:=|＝|→|->|即|对应|指|就是)\s*(?:工作流|流程)?\s*" + _QUOTED.format(name="name")
        + r"(?:\s*[，,；;、]?\s*(?:workflowId|workflow_id|工作流\s*ID|ID)\s*[=＝:：]?\s*" + _ID + r")?",
        re.IGNORECASE,
    ),
    re.compile(
        r"(?:business\s+)?alias\s*" + _QUOTED.format(name="alias")
        + r"\s*(?:=|->|→|maps\s+to|means|is)\s*(?:the\s+)?(?:workflow\s*)?" + _QUOTED.format(name="name")
        + r"(?:\s*[,;]?\s*(?:workflowId|workflow_id|workflow\s+id|id)\s*[=:]?\s*" + _ID + r")?",
        re.IGNORECASE,
    ),
)

_PAGE_SIZE = (
    re.compile(r"每页\s*(?:只)?(?:显示|展示|列出|返回)?\s*(?P<n>\d{1,3})\s*(?:条|个|项|行)"),
    re.compile(r"(?P<n>\d{1,3})\s*(?:items?|rows?|results?|records?|entries)\s+(?:per|a|each)\s+page", re.IGNORECASE),
    re.compile(r"page\s*size\s*(?:of|=|:|to)?\s*(?P<n>\d{1,3})", re.IGNORECASE),
)
_REPLY_STYLE_ZH = re.compile(r"(回复|回答|答复|说话).{0,6}(简洁|简短|简单|精简|详细|啰嗦)|(简洁|简短|详细)\s*(点|些|一点)?\s*(回复|回答)")
_REPLY_STYLE_EN = re.compile(r"\b(repl(?:y|ies)|answers?|respon(?:d|ses?))\b.{0,30}\b(short|concise|brief|detailed|terse)\b"
                             r"|\b(short|concise|brief|detailed|terse)\s+(answers?|repl(?:y|ies)|responses?)\b", re.IGNORECASE)
_HABIT_ZH = re.compile(r"以后|今后|往后|之后都|从现在起|从今天起|默认|一律|总是|始终|每次都|不要再|别再|我习惯|我喜欢|我希望")
_HABIT_EN = re.compile(r"\b(from now on|going forward|in (the )?future|always|never|by default|i prefer|please don't ever)\b", re.IGNORECASE)
_DISPLAY_ZH = re.compile(r"显示|展示|回复|回答|输出|列出|排序|提醒|确认|中文|英文|简洁|详细|requestId|统计|分页|停止|置顶|优先")
_DISPLAY_EN = re.compile(r"\b(show|display|reply|answer|respond|list|sort|remind|confirm|chinese|english|language|concise|short|detailed|stop|first)\b", re.IGNORECASE)
_FIELD_WORD = re.compile(r"字段|选项|节点|审批|浏览按钮|表单|\b(field|option|node|approv\w*|form)\b", re.IGNORECASE)
_DEFINES = re.compile(r"就是|是指|指的是|即为|表示|对应|意思是|代表|\b(means|refers to|stands for|maps to|is the)\b|=", re.IGNORECASE)
_HAS_QUOTE = re.compile(rf"[{_Q_OPEN}][^{_Q_CLOSE}\n]+[{_Q_CLOSE}]")
_ID_TALK = re.compile(r"workflowId|fieldId|工作流\s*ID|别名|alias", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[。！？!?；;\n])|(?<=\.)\s+")
_CLAUSES_ZH = re.compile(r"[，,、]")


def parse_alias_sentence(text: str) -> list[dict[str, Any]]:
    """Alias candidates of every alias fact sentence in ``text``."""
    out: list[dict[str, Any]] = []
    for pattern in ALIAS_PATTERNS:
        for m in pattern.finditer(text):
            out.append({"dimension": "global", "alias": m["alias"].strip(),
                        "workflow_name": m["name"].strip(), "workflow_id": m["id"],
                        "text": one_line(m.group(0))})
    return out


def _zh(text: str) -> bool:
    return any(is_cjk(ch) for ch in text)


def _sentences(text: str) -> list[str]:
    return [s.strip(" \t。！？!?；;.") for s in _SENTENCES.split(text) if s and s.strip(" \t。！？!?；;.")]


def _preferences(sentence: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if _ID_TALK.search(sentence):
        return out
    zh = _zh(sentence)
    parts = [p.strip() for p in _CLAUSES_ZH.split(sentence) if p.strip()] if zh else [sentence]
    for part in parts:
        part = re.sub(r"^(另外|还有|并且|而且|然后|also|and)\s*", "", part, flags=re.IGNORECASE).strip()
        for pattern in _PAGE_SIZE:
            if m := pattern.search(part):
                n = int(m["n"])
                text = f"列表每页显示{n}条" if zh else f"Show {n} items per page in lists."
                out.append({"dimension": "user", "key": "pageSize", "text": text})
                break
        else:
            style = _REPLY_STYLE_ZH if zh else _REPLY_STYLE_EN
            habit = _HABIT_ZH if zh else _HABIT_EN
            display = _DISPLAY_ZH if zh else _DISPLAY_EN
            if style.search(part) and (habit.search(part) or re.search(r"请|please", part, re.IGNORECASE)):
                out.append({"dimension": "user", "key": "replyStyle", "text": part})
            elif habit.search(part) and display.search(part):
                out.append({"dimension": "user", "text": part})
    return out


def _field_rule(sentence: str) -> dict[str, Any] | None:
    if _ID_TALK.search(sentence):
        return None
    if _FIELD_WORD.search(sentence) and _DEFINES.search(sentence) and _HAS_QUOTE.search(sentence):
        return {"dimension": "workflow", "text": sentence}
    return None


def lite_candidates(messages: tuple[Message, ...] | list[Message]) -> list[dict[str, Any]]:
    """Candidates found by the rules, in message order (not yet routed nor deduplicated)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        aliases = parse_alias_sentence(message.text)
        out.extend(aliases)
        if message.role != "user":
            continue
        for sentence in _sentences(message.text):
            if any(a["text"] in sentence or sentence in a["text"] for a in aliases):
                continue
            rule = _field_rule(sentence)
            if rule is not None:
                out.append(rule)
            else:
                out.extend(_preferences(sentence))
    return out
