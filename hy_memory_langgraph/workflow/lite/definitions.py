"""Definition rules: the user clarified something inside one workflow.

The sentence is kept verbatim (it is the clarification) and proposed for the
``workflow`` dimension; the router files it under ``workflow:{id}`` when an id is known,
under ``global`` when the sentence names its workflow, and skips it otherwise.

A sentence counts when it talks about a field, an option, a browse button, a node or an
approval step **and** clarifies it:

* a structural statement: ``"出差城市"字段是浏览按钮`` / ``the Destination City field is a
  browse button``;
* a meaning: ``"一线城市"指北上广深``, ``成本中心指的是部门编码字段``, ``"Urgent" means same-day``;
* a plain ``就是`` / ``is`` whose right side is itself a field or option
  (``成本中心就是部门编码那个字段``), or that explains a picked option
  (``"紧急程度"选"高"就是当天处理``);
* a correction: ``不是部门字段，是成本中心字段``.

Never saved: questions, alias talk (left to the alias rules), one-off values typed into
this form (``填`` / ``写`` / ``set … to``, or a right side that is a date, an amount or
a number: ``金额字段就是1200元``).
"""

from __future__ import annotations

import re
from typing import Any

from hy_memory_langgraph.workflow.lite.patterns import (
    Q_CLOSE,
    Q_OPEN,
    Sentence,
    is_question,
    is_value_like,
)

_INSIDE = re.compile(
    r"字段|栏位|选项|下拉|浏览按钮|浏览框|浏览|节点|审批人|审批|流转|表单|必填"
    r"|\bfields?\b|\boptions?\b|\bdrop-?downs?\b|\bbrowse\b|\bnodes?\b|\bapprovers?\b|\bapproval\b|\bform\b",
    re.IGNORECASE,
)
_OPTION_PICK = re.compile(
    rf"[{Q_OPEN}][^{Q_CLOSE}\n]+[{Q_CLOSE}]\s*(?:选|选择|勾选|选中|选了)\s*[{Q_OPEN}][^{Q_CLOSE}\n]+[{Q_CLOSE}]"
    rf"|\b(?:choos\w*|select\w*|pick\w*)\s+[{Q_OPEN}]",
    re.IGNORECASE,
)
_STRONG = re.compile(
    r"就是指|是指|指的是|意思是|代表|表示|即为|即是|等同于|对应|也叫|又叫|简称|俗称|也就是"
    r"|(?<![手食拇中])指(?![定导示标南令出明望引点责派挥数纹])"
    r"|\bmeans?\b|\bmeant\b|\brefers?\s+to\b|\bstands?\s+for\b|\bis\s+short\s+for\b|\bis\s+the\s+same\s+as\b"
    r"|\bcorresponds?\s+to\b|\bmaps?\s+to\b|\bi\.e\.",
    re.IGNORECASE,
)
_WEAK = re.compile(r"就是|=|＝|\bis\b|\bare\b", re.IGNORECASE)
_STRUCTURAL = re.compile(
    r"是(?:一个|个)?(?:浏览按钮|浏览框|下拉框?|下拉选项|下拉菜单|单选框?|多选框?|选择框|人员选择|部门选择|选项字段|必填项?|只读)"
    r"|\b(?:is|are)\s+(?:an?\s+)?(?:browse(?:\s+(?:button|field))?|drop-?down|lookup|select(?:ion)?\s+field"
    r"|option\s+field|required(?:\s+field)?|read-only(?:\s+field)?)\b",
    re.IGNORECASE,
)
_ASSIGN = re.compile(r"填写?|写上?|录入|输入|改成|改为|设为|设置为|填成"
                     r"|\bset\b.{0,40}\bto\b|\bfill(?:\s+in)?\b|\benter\b|\bput\b|\btype\b", re.IGNORECASE)
_CORRECTION = re.compile(r"不是.{1,30}?[，,]?\s*(?:而)?是|\bnot\b.{1,40}?,?\s*but\b", re.IGNORECASE)
_ID_TALK = re.compile(r"workflowId|fieldId|工作流\s*ID|别名|\balias\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[，,；;]")
_PRONOUN = re.compile(r"^(?:我们?|你们?|他们?|她|它|这|那|this|that|it|i|we|you|they)$", re.IGNORECASE)


def _right_clause(text: str, start: int) -> str:
    return _CLAUSE_END.split(text[start:], maxsplit=1)[0]


_GENERIC_SUBJECT = re.compile(
    r"这个|那个|这|那|该|此|本|它|流程|工作流|字段|栏位|的|里|中|\b(?:the|this|that|it|field|workflow|in|of)\b"
    rf"|[\s{Q_OPEN}{Q_CLOSE}，,：:]",
    re.IGNORECASE,
)


def _names_something(subject: str) -> bool:
    """Whether a subject names a field or a term (not just "这个字段" / "this field")."""
    return len(_GENERIC_SUBJECT.sub("", subject)) >= 2


def _clarifies(text: str) -> bool:
    if (structural := _STRUCTURAL.search(text)) is not None:
        return _names_something(re.split(r"[，,；;]", text[:structural.start()])[-1])
    if (strong := _STRONG.search(text)) is not None:
        subject = re.split(r"[，,；;]", text[:strong.start()])[-1].strip(" 的")
        if not subject or _PRONOUN.match(subject):
            return False  # "我代表部门提交", "This means …": nothing is being defined
        return not is_value_like(_right_clause(text, strong.end()))
    if _ASSIGN.search(text):
        return False
    if (weak := _WEAK.search(text)) is not None:
        rhs = _right_clause(text, weak.end())
        if (_INSIDE.search(rhs) or _OPTION_PICK.search(text)) and not is_value_like(rhs):
            return True
    return bool(_CORRECTION.search(text))


def definition_candidate(sentence: Sentence) -> dict[str, Any] | None:
    """A ``workflow`` candidate holding the sentence verbatim, or ``None``.

    Example:
        >>> from hy_memory_langgraph.workflow.lite.patterns import split_sentences
        >>> [s] = split_sentences('选项"加急"的意思是"当天处理"')
        >>> definition_candidate(s)
        {'dimension': 'workflow', 'text': '选项"加急"的意思是"当天处理"'}
    """
    text = sentence.text
    if is_question(sentence.raw) or _ID_TALK.search(text):
        return None
    if not (_INSIDE.search(text) or _OPTION_PICK.search(text)):
        return None
    return {"dimension": "workflow", "text": text} if _clarifies(text) else None
