"""Shared vocabulary of the lite rules: quotes, sentences, workflow words, values.

Everything here is a pure function of text (zh and en); the rule modules combine them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hy_memory_langgraph.messages.language import is_cjk

Q_OPEN = "\"“「『'‘"
Q_CLOSE = "\"”」』'’"
_QUOTES = Q_OPEN + Q_CLOSE + "《》"
_QUOTED_ANY = re.compile(rf"[{Q_OPEN}]([^{Q_CLOSE}\n]{{1,80}})[{Q_CLOSE}]")

_SENTENCE_END = re.compile(r"[。！？!?；;\n]+|\.(?=\s|$)\s*")
_QUESTION = re.compile(r"[?？]\s*$|[吗呢]\s*[?？。]?\s*$|哪一?[个项条种]|是什么|什么意思"
                       r"|^\s*(?:which|what|whether)\b", re.IGNORECASE)

# Display form "name(ID)" / "name (ID)" / "名称（ID）".
_DISPLAY = re.compile(r"^(?P<name>.*?\S)\s*[(（]\s*(?P<id>\d{2,40})\s*[)）]$")

# "流程" and friends: the head word of a workflow phrase.
_WF_HEAD_ZH = re.compile(r"工作流|流程|申请单|申请|审批单|报销单")
_WF_HEAD_EN = (r"(?:workflows?|process(?:es)?|requests?|claims?|forms?|applications?"
               r"|reimbursements?|approvals?|tickets?)")
_WF_PHRASE_EN = re.compile(
    r"\b(?:my|our|the|this|that|these|those|a|an|all|any)\s+"
    rf"(?P<phrase>(?:[a-z][\w-]*\s+){{0,3}}{_WF_HEAD_EN})\b",
    re.IGNORECASE,
)
_NAMED_WF_EN = re.compile(
    rf"(?:[{Q_OPEN}][^{Q_CLOSE}\n]{{2,80}}[{Q_CLOSE}]|(?<![\w])(?:[A-Z0-9][\w&/-]*\s+){{1,8}})"
    r"(?:workflow|process)\b"
)
# Words that end a verb/time prefix before a zh workflow phrase ("我本月发起的|报销流程").
_ZH_BOUNDARIES = ("的", "了", "我", "看", "查", "发起", "提交", "提的", "提了", "办理", "帮我",
                  "一下", "这个", "那个", "一个", "哪个", "每个", "某个", "本月", "这个月", "上个月",
                  "今天", "最近", "所有", "全部", "哪些", "在", "于", "对于", "关于", "针对", "把")
_ZH_GENERIC = ("这", "那", "该", "此", "本", "其", "各", "某", "每", "整", "当前", "其他", "别的", "个")
_STOP_MODIFIERS_ZH = ("待办", "待审批", "待处理", "已办", "已审批", "新建", "所有", "全部")
_STOP_MODIFIERS_EN = {"pending", "open", "all", "new", "recent", "approved", "rejected", "outstanding",
                      "my", "our", "current", "other", "same", "last", "next", "this", "that"}

_DATE = re.compile(
    r"\d{4}\s*[-/.年]\s*\d{1,2}(?:\s*[-/.月]\s*\d{1,2}\s*[日号]?)?|\d{1,2}\s*月\s*\d{1,2}\s*[日号]"
    r"|\d{1,2}/\d{1,2}(?:/\d{2,4})?|(?:今天|明天|后天|昨天|下周.|本周.|上周.)"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
    r"|\b(?:today|tomorrow|yesterday|next\s+\w+day)\b",
    re.IGNORECASE,
)
_AMOUNT = re.compile(
    r"[¥$￥]\s*\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s*(?:元|块|万元?|千元?|rmb|cny|usd|yuan|dollars?|euros?)",
    re.IGNORECASE,
)
_RANGE_JOIN = re.compile(r"^\s*(?:到|至|-|~|–|to|until)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Sentence:
    """One sentence of a message: its span in the message and its text."""

    start: int
    end: int
    raw: str

    @property
    def text(self) -> str:
        """The sentence without surrounding blanks and end punctuation."""
        return self.raw.strip().strip("。！？!?；;.").strip()


def is_zh(text: str) -> bool:
    """Whether ``text`` holds any CJK ideograph."""
    return any(is_cjk(ch) for ch in text)


def split_sentences(text: str) -> list[Sentence]:
    """Sentences with their spans; end punctuation stays in ``raw``."""
    out: list[Sentence] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if text[start:end].strip():
            out.append(Sentence(start, end, text[start:end]))
        start = end
    if text[start:].strip():
        out.append(Sentence(start, len(text), text[start:]))
    return [s for s in out if s.text]


def is_question(raw: str) -> bool:
    """A question asks; it does not clarify (``成本中心是指哪个字段？``)."""
    return bool(_QUESTION.search(raw.strip()))


def strip_quotes(text: str) -> str:
    """``"报销"`` → ``报销`` (surrounding quotes, book marks and blanks)."""
    return text.strip().strip(_QUOTES).strip()


def quoted(text: str) -> list[str]:
    """The quoted terms of ``text``, in order."""
    return [m.group(1).strip() for m in _QUOTED_ANY.finditer(text)]


def split_display(name: str) -> tuple[str, str | None]:
    """``"国内差旅费用报销流程(100003460000000071)"`` → ``("国内差旅费用报销流程", "1000…71")``."""
    match = _DISPLAY.match(strip_quotes(name))
    if match is None:
        return strip_quotes(name), None
    return strip_quotes(match["name"]), match["id"]


def is_value_like(text: str) -> bool:
    """A date, an amount, a bare number (or a range of them): a value, not a meaning."""
    rest = strip_quotes(text.strip(" ，,。.；;：:"))
    if not rest:
        return False
    for pattern in (_DATE, _AMOUNT):
        rest = pattern.sub(" ", rest)
    rest = re.sub(r"\d+(?:\.\d+)?", " ", rest)
    leftover = [w for w in re.split(r"\s+", rest.strip(" ，,。.；;：:")) if w]
    return all(_RANGE_JOIN.match(w) or not any(ch.isalnum() for ch in w) for w in leftover)


def _zh_prefix(text: str, head_start: int) -> str:
    """The CJK/alnum run right before a head word, cut after its last boundary word."""
    i = head_start
    while i > 0 and (is_cjk(text[i - 1]) or text[i - 1].isalnum()) and head_start - i < 16:
        i -= 1
    run = text[i:head_start]
    cut = 0
    for word in _ZH_BOUNDARIES:
        pos = run.rfind(word)
        if pos >= 0:
            cut = max(cut, pos + len(word))
    return run[cut:]


def _zh_phrase(text: str) -> str | None:
    for match in _WF_HEAD_ZH.finditer(text):
        prefix = _zh_prefix(text, match.start())
        for stop in _STOP_MODIFIERS_ZH:
            prefix = prefix.removeprefix(stop)
        if len(prefix) >= 2 and not prefix.startswith(_ZH_GENERIC):
            return prefix + match.group(0)
    return None


def _en_phrase(text: str) -> str | None:
    for match in _WF_PHRASE_EN.finditer(text):
        words = match["phrase"].split()
        while len(words) > 1 and words[0].lower() in _STOP_MODIFIERS_EN:
            words = words[1:]
        if len(words) >= 2:
            return " ".join(words)
    return None


def workflow_phrase(text: str) -> str | None:
    """The user's own wording for a workflow, or ``None`` when only generic words are used.

    Example:
        >>> workflow_phrase("我本月发起的报销流程怎么样了"), workflow_phrase("Show my travel claims")
        ('报销流程', 'travel claims')
    """
    return _zh_phrase(text) if is_zh(text) else _en_phrase(text)


def names_workflow(text: str) -> bool:
    """Whether ``text`` names a particular workflow (not "this workflow" / "该流程").

    Example:
        >>> names_workflow("在国内差旅费用报销流程里成本中心指部门编码"), names_workflow("这个流程里成本中心指部门编码")
        (True, False)
    """
    for match in re.finditer(r"工作流|流程", text):
        prefix = _zh_prefix(text, match.start())
        if len(prefix) >= 2 and not prefix.startswith(_ZH_GENERIC):
            return True
    return bool(_NAMED_WF_EN.search(text))
