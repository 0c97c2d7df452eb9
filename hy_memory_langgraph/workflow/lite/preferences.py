"""Preference rules: explicit habits of the user → the ``user`` dimension (profile).

Page size (``每页显示20条`` / ``50 items per page``, one ``pageSize`` slot), reply
style (``回复简洁点`` / ``keep answers short``, one ``replyStyle`` slot) and "from now
on …" display or communication habits (``以后不要展示requestId``).
"""

from __future__ import annotations

import re
from typing import Any

from hy_memory_langgraph.workflow.lite.patterns import is_zh

_PAGE_SIZE = (
    re.compile(r"每页\s*(?:只)?(?:显示|展示|列出|返回)?\s*(?P<n>\d{1,3})\s*(?:条|个|项|行)"),
    re.compile(r"(?P<n>\d{1,3})\s*(?:items?|rows?|results?|records?|entries)\s+(?:per|a|each)\s+page", re.IGNORECASE),
    re.compile(r"page\s*size\s*(?:of|=|:|to)?\s*(?P<n>\d{1,3})", re.IGNORECASE),
)
_REPLY_STYLE_ZH = re.compile(r"(回复|回答|答复|说话).{0,6}(简洁|简短|简单|精简|详细|啰嗦)|(简洁|简短|详细)\s*(点|些|一点)?\s*(回复|回答)")
_REPLY_STYLE_EN = re.compile(r"\b(repl(?:y|ies)|answers?|respon(?:d|ses?))\b.{0,30}\b(short|concise|brief|detailed|terse)\b"
                             r"|\b(short|concise|brief|detailed|terse)\s+(answers?|repl(?:y|ies)|responses?)\b", re.IGNORECASE)
_HABIT_ZH = re.compile(r"以后|今后|往后|之后都|从现在起|从今天起|默认|一律|总是|始终|每次都|不要再|别再|我习惯|我喜欢|我希望")
_HABIT_EN = re.compile(r"\b(from now on|going forward|in (the )?future|always|never|by default|i prefer|please don't ever)\b",
                       re.IGNORECASE)
_DISPLAY_ZH = re.compile(r"显示|展示|回复|回答|输出|列出|排序|提醒|确认|中文|英文|简洁|详细|requestId|统计|分页|停止|置顶|优先")
_DISPLAY_EN = re.compile(r"\b(show|display|reply|answer|respond|list|sort|remind|confirm|chinese|english|language|concise"
                         r"|short|detailed|stop|first)\b", re.IGNORECASE)
_ID_TALK = re.compile(r"workflowId|fieldId|工作流\s*ID|别名|alias", re.IGNORECASE)
_CLAUSES_ZH = re.compile(r"[，,、]")
_LEAD = re.compile(r"^(另外|还有|并且|而且|然后|also|and)\s*", re.IGNORECASE)


def _page_size(part: str, zh: bool) -> dict[str, Any] | None:
    for pattern in _PAGE_SIZE:
        if (m := pattern.search(part)) is not None:
            n = int(m["n"])
            text = f"列表每页显示{n}条" if zh else f"Show {n} items per page in lists."
            return {"dimension": "user", "key": "pageSize", "text": text}
    return None


def _habit(part: str, zh: bool) -> dict[str, Any] | None:
    style = _REPLY_STYLE_ZH if zh else _REPLY_STYLE_EN
    habit = _HABIT_ZH if zh else _HABIT_EN
    display = _DISPLAY_ZH if zh else _DISPLAY_EN
    if style.search(part) and (habit.search(part) or re.search(r"请|please", part, re.IGNORECASE)):
        return {"dimension": "user", "key": "replyStyle", "text": part}
    if habit.search(part) and display.search(part):
        return {"dimension": "user", "text": part}
    return None


def preference_candidates(sentence: str) -> list[dict[str, Any]]:
    """``user`` candidates of one sentence of the user (one per clause at most).

    Example:
        >>> [c["text"] for c in preference_candidates("以后回复简洁点，每页显示20条")]
        ['以后回复简洁点', '列表每页显示20条']
    """
    if _ID_TALK.search(sentence):
        return []
    zh = is_zh(sentence)
    parts = [p.strip() for p in _CLAUSES_ZH.split(sentence) if p.strip()] if zh else [sentence]
    out: list[dict[str, Any]] = []
    for part in parts:
        part = _LEAD.sub("", part).strip()
        found = _page_size(part, zh) or _habit(part, zh)
        if found is not None:
            out.append(found)
    return out
