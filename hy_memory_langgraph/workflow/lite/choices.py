"""Choice rules: the assistant asked the user to pick or name something, the user answered.

Two kinds of question, told apart by what the assistant asked about:

* **which workflow** (a workflow-name disambiguation or a name clarification): the
  user's own wording for the workflow (from their request before the question)
  becomes an alias of the workflow they picked — its name and id from the listed
  candidate (``名称(ID)``), else the name they typed; a missing id is left to the
  router (the ``workflowId`` argument fills it) → ``global``;
* **which value of a form field** (a browse button or an option field named in the
  question): ``字段"项目"（浏览按钮）："E10"指"E10升级项目"`` → ``workflow``. Dates,
  amounts and bare numbers are never saved as field values.

The answer is the user message right after the question: an index (``5``, ``第一个``,
``the second one``), a candidate's name or part of it (``国内那个``), or a name.
"""

from __future__ import annotations

import re
from typing import Any

from hy_memory_langgraph.retrieval.relative_time import zh_number
from hy_memory_langgraph.workflow.entries import normalize_text, one_line
from hy_memory_langgraph.workflow.lite.patterns import (
    Q_CLOSE,
    Q_OPEN,
    is_value_like,
    is_zh,
    quoted,
    split_display,
    split_sentences,
    strip_quotes,
    workflow_phrase,
)
from hy_memory_langgraph.workflow.validation import Message

_ASKS = re.compile(
    r"哪一?[个项条种](?![月年日天号时人次])|请选择|选择一个|选一个|请确认要|请确认是|多个.{0,30}请确认|完整名称|全称|具体名称|请提供|请明确|指的是哪"
    r"|\b(?:multiple|several)\b.{0,60}\bconfirm\b"
    r"|\bwhich\b|\bplease\s+(?:choose|select|pick|specify|confirm\s+which)\b|\bdid\s+you\s+mean\b"
    r"|\bfull\s+name\b|\bexact\s+name\b",
    re.IGNORECASE,
)
_FIELD_CONTEXT = re.compile(r"字段|浏览按钮|浏览框|浏览|选项|下拉|\bfield\b|\boption\b|\bbrowse\b|\bdrop-?down\b",
                            re.IGNORECASE)
_BROWSE = re.compile(r"浏览|\bbrowse\b|\blookup\b", re.IGNORECASE)
_WORKFLOW_CONTEXT = re.compile(r"工作流|流程|\bworkflows?\b|\bprocess(?:es)?\b", re.IGNORECASE)
_NUMBERED = re.compile(r"(?:^|(?<=[\s：:，,；;。]))(?P<n>\d{1,2})\s*[.、．)）](?!\d)\s*")
_ITEM_END = re.compile(r"[；;。，\n?？]|,\s|\.(?:\s|$)")
_DISPLAYED = re.compile(
    r"(?P<name>(?:[A-Z0-9][\w&/-]*\s+){0,8}[A-Z0-9][\w&/-]*|[^\s：:，,；;。、()（）" + Q_OPEN + Q_CLOSE + r"]{2,60}?)"
    r"\s*[(（](?P<id>\d{2,40})[)）]"
)
_FIELD_QUOTED = re.compile(
    rf"[{Q_OPEN}](?P<f>[^{Q_CLOSE}\n]{{1,30}})[{Q_CLOSE}]\s*(?:这个|该)?\s*(?:是|为|is|\(|（)?\s*"
    r"(?:一个|an?\s+)?(?:浏览按钮|浏览框|浏览|选项|下拉|字段|field|option|browse|drop-?down)",
    re.IGNORECASE,
)
_FIELD_ZH = re.compile(r"(?P<f>[\u4e00-\u9fffA-Za-z0-9]{2,10}?)(?:这个|该)?(?:字段|浏览按钮|浏览框|选项字段|下拉框)")
_FIELD_EN = re.compile(r"\b(?:[Tt]he\s+)?(?P<f>(?:[A-Z][\w-]*\s+){1,3})(?:browse\s+|option\s+|drop-?down\s+)?"
                       r"(?:field|button)\b")

_EN_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
                "eighth": 8, "ninth": 9, "tenth": 10, "1st": 1, "2nd": 2, "3rd": 3}
_INDEX_ZH = re.compile(r"^(?:我)?(?:选|要|选择|是|就是|就)?\s*第?\s*(?P<n>\d{1,2}|[一二两三四五六七八九十]{1,3})\s*"
                       r"(?:个|项|条|种|号)?\s*(?:吧|那个|的那个|这个|那一个)?$")
_INDEX_EN = re.compile(
    r"^(?:(?:i(?:'ll|\s+will)?\s+)?(?:choose|pick|take|want|mean|select|go\s+with)\s+)?(?:the\s+)?"
    r"(?:number\s+|no\.?\s*|option\s+|#)?(?P<n>\d{1,2}|first|second|third|fourth|fifth|sixth|seventh|eighth"
    r"|ninth|tenth|last|1st|2nd|3rd|\d{1,2}th)(?:\s+one)?(?:\s+please)?$",
    re.IGNORECASE,
)
_LAST = re.compile(r"^(?:最后一个|最后那个|最后一项)$")
_REPLY_LEAD = re.compile(r"^(?:不是.{0,30}?[，,]\s*(?:而)?是|我说的是|我指的是|我要的是|我要|就是|是|选|"
                         r"i\s+meant?\s+|not\s+.{0,40}?,\s*(?:but\s+)?|the\s+)", re.IGNORECASE)
_REPLY_TAIL = re.compile(r"(?:的那个|那个|那一个|这个|吧|的|\s+one)$", re.IGNORECASE)
_ZH_WF_NAME = re.compile(r"[^\s，,。；;：:]{2,40}(?:工作流|流程|申请|审批)")


def _index(reply: str) -> int | None:
    """1-based index the reply picks, -1 for "the last one", ``None`` when not an index."""
    text = reply.strip().strip("。.!！").strip()
    if _LAST.match(text) or text.lower() in {"the last one", "last one", "the last"}:
        return -1
    if (m := _INDEX_ZH.match(text)) is not None:
        return zh_number(m["n"])
    if (m := _INDEX_EN.match(text)) is not None:
        word = m["n"].lower()
        if word == "last":
            return -1
        if word.isdigit():
            return int(word)
        return _EN_ORDINALS.get(word) or (int(word[:-2]) if word[:-2].isdigit() else None)
    return None


def _listed(text: str) -> list[tuple[str, str | None]]:
    """Candidates the assistant listed: ``[(name, id | None)]``, in order."""
    marks = list(_NUMBERED.finditer(text))
    items: list[tuple[str, str | None]] = []
    if [int(m["n"]) for m in marks][:2] == [1, 2]:
        for i, mark in enumerate(marks):
            if int(mark["n"]) != i + 1:
                break
            end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            body = _ITEM_END.split(text[mark.end():end], maxsplit=1)[0]
            body = re.sub(r"[\s,，、]*(?:或者?|还是|or|and)?[\s,，、]*$", "", body, flags=re.IGNORECASE)
            if body.strip():
                items.append(split_display(body))
        if len(items) >= 2:
            return items
    return [(strip_quotes(m["name"]), m["id"]) for m in _DISPLAYED.finditer(text)]


def _reply_core(reply: str) -> str:
    text = reply.strip().strip("。.!！").strip()
    for _ in range(2):  # "I meant the …", "不是…，是…"
        text = _REPLY_LEAD.sub("", text, count=1).strip()
    return strip_quotes(_REPLY_TAIL.sub("", text).strip())


def _pick(reply: str, items: list[tuple[str, str | None]]) -> tuple[str, str | None] | None:
    """The listed candidate the reply picks (by index or by name), or ``None``."""
    index = _index(reply)
    if index is None:
        index = _index(_reply_core(reply))  # "不是这个，是第二个"
    if index is not None:
        if items and (index == -1 or 1 <= index <= len(items)):
            return items[index - 1] if index > 0 else items[-1]
        return None
    core = normalize_text(_reply_core(reply))
    if len(core) < 2:
        return None
    hits = [item for item in items if core in normalize_text(item[0]) or normalize_text(item[0]) in core]
    return hits[0] if len(hits) == 1 else None


def _typed_name(reply: str, zh: bool) -> str | None:
    """A workflow name the user typed instead of picking from a list."""
    if _index(reply) is not None:
        return None
    core = _reply_core(reply)
    if zh:
        found = _ZH_WF_NAME.findall(core)
        return max(found, key=len) if found else None
    return core if core[:1].isupper() and len(core.split()) <= 10 else None


def _workflow_choice(request: str, question: str, reply: str) -> dict[str, Any] | None:
    alias = workflow_phrase(request)
    if alias is None:
        return None
    items = _listed(question)
    picked = _pick(reply, items)
    name, wid = picked if picked else (_typed_name(reply, is_zh(request + reply)), None)
    if name is not None and normalize_text(name) == normalize_text(alias):
        return None  # the user already used the official name: no alias to learn
    if name is None and _index(reply) is None and not items:
        return None
    return {"dimension": "global", "alias": alias, "workflow_name": name, "workflow_id": wid,
            "text": one_line(f"{request} → {reply}")}


def _field_name(question: str) -> str | None:
    for pattern in (_FIELD_QUOTED, _FIELD_ZH, _FIELD_EN):
        if (m := pattern.search(question)) is not None:
            return strip_quotes(m["f"])
    return None


def _user_term(field: str, request: str, question: str, value: str, items: list[tuple[str, str | None]]) -> str | None:
    listed = {normalize_text(name) for name, _ in items} | {normalize_text(field), normalize_text(value)}
    for term in quoted(question):
        if normalize_text(term) not in listed:
            return term
    pattern = re.compile(re.escape(field) + r"\s*(?:填|写|选|是|为|用|要|[:：=]|\bis\b|\bto\b|\bas\b)?\s*"
                         r"(?P<t>[^，,。；;.\n]{1,30})", re.IGNORECASE)
    match = pattern.search(request)
    term = strip_quotes(match["t"]) if match else ""
    return term if term and normalize_text(term) not in listed else None


def _field_choice(request: str, question: str, reply: str) -> dict[str, Any] | None:
    field = _field_name(question)
    if field is None:
        return None
    items = _listed(question)
    picked = _pick(reply, items)
    value = picked[0] if picked else (_reply_core(reply) if _index(reply) is None else "")
    if not value or is_value_like(value):
        return None
    term = _user_term(field, request, question, value, items)
    zh = is_zh(request + reply) or (not any(ch.isalpha() for ch in request + reply) and is_zh(question))
    browse = bool(_BROWSE.search(question))
    if zh:
        kind = "浏览按钮" if browse else "选项"
        tail = f'："{term}"指"{value}"' if term else f'选"{value}"'
        text = f'字段"{field}"（{kind}）{tail}'
    else:
        kind = "browse button" if browse else "option"
        tail = f'"{term}" means "{value}"' if term else f'choose "{value}"'
        text = f'Field "{field}" ({kind}): {tail}'
    return {"dimension": "workflow", "text": text}


def choice_candidates(messages: tuple[Message, ...] | list[Message], *,
                      workflow_choices: bool = True) -> list[dict[str, Any]]:
    """Candidates from every question of the assistant answered by the next user message.

    Args:
        messages: The exchange.
        workflow_choices: ``False`` skips workflow choices (an alias was already stated).
    """
    out: list[dict[str, Any]] = []
    for i, question in enumerate(messages):
        if question.role != "assistant" or i + 1 >= len(messages) or messages[i + 1].role != "user":
            continue
        request = next((m.text for m in reversed(messages[:i]) if m.role == "user"), "")
        found = _answered(request, question.text, messages[i + 1].text, workflow_choices)
        if found is not None:
            out.append(found)
    return out


def _answered(request: str, question: str, answer: str, workflow_choices: bool) -> dict[str, Any] | None:
    """The candidate of one question and the user's answer (its first sentence), if any."""
    sentences = split_sentences(answer)
    if not _ASKS.search(question) or not sentences:
        return None
    reply = sentences[0].text
    if _FIELD_CONTEXT.search(question) and (found := _field_choice(request, question, reply)):
        return found
    if workflow_choices and (_WORKFLOW_CONTEXT.search(question) or _DISPLAYED.search(question)):
        return _workflow_choice(request, question, reply)
    return None
