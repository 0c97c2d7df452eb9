"""One memory entry = one markdown bullet line that parses back to the same entry.

Line formats (``kind`` in ``alias | pref | fact | rule | note``)::

    - [alias] 问题流程 → E10客户问题支持解决流程 (workflowId=1003655203465764898)
    - [alias] 报销 → 国内差旅费用报销流程 (workflowId=（待确认）)
    - [alias] 报销流程 → （名称待确认） (workflowId=100003460000000060)
    - [pref:pageSize] 列表每页显示20条
    - [fact] 查询待办前先看统计。
    - [rule] 在该流程中"成本中心"指"部门编码"字段。

An alias whose workflow name is unknown (the user picked a candidate by number and
only the id is known) shows :data:`_PENDING_NAME`; a later save with the name fills it.
A ``:key`` names a slot (one value per slot: a new value replaces the old one in
place). A bullet without a tag (hand-written) is read as ``note``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from hy_memory_langgraph.fences import defuse_control_tokens, drop_invisible

PENDING_ID = "（待确认）"
_PENDING_NAME = "（名称待确认）"
KINDS = ("alias", "pref", "fact", "rule", "note")
_PENDING_FORMS = {"", "（待确认）", "(待确认)", "待确认", "待确认）", "pending", "(pending)",
                  "unknown", "tbd", "null", "none"}
_LINE = re.compile(r"^\s*[-*]\s+\[(?P<kind>[a-z]+)(?::(?P<key>[A-Za-z0-9_]+))?\]\s+(?P<body>.+?)\s*$")
_PLAIN = re.compile(r"^\s*[-*]\s+(?P<body>.+?)\s*$")
_ALIAS_BODY = re.compile(r"^(?P<alias>.+?) → (?P<name>.+?) \(workflowId=(?P<id>[^)]*)\)$")
_MAX_TEXT = 500


def one_line(text: object) -> str:
    """Collapse whitespace (newlines included), drop invisible characters (they could hide
    an instruction in the memory prompt: :func:`~hy_memory_langgraph.fences.drop_invisible`),
    defuse chat templates' control tokens (:func:`~hy_memory_langgraph.fences.defuse_control_tokens`)
    and cut to a sane length."""
    return defuse_control_tokens(re.sub(r"\s+", " ", drop_invisible(str(text or ""))).strip()[:_MAX_TEXT])


def normalize_text(text: str) -> str:
    """Dedupe key: NFKC, lower case, only letters/digits/CJK kept."""
    folded = unicodedata.normalize("NFKC", text).lower()
    return "".join(ch for ch in folded if ch.isalnum())


def normalize_target_id(value: object) -> str:
    """An alias target id: digits/letters as given, or :data:`PENDING_ID` when unknown."""
    text = one_line(value).strip()
    if text.lower() in _PENDING_FORMS or "待确认" in text:
        return PENDING_ID
    return text.replace(")", "").replace("(", "")


def _clean_name(text: object) -> str:
    return one_line(text).replace("→", "->").strip(" \"'“”「」")


def _workflow_name(text: object) -> str:
    name = _clean_name(text)
    return _PENDING_NAME if not name or "名称待确认" in name else name


@dataclass(frozen=True)
class Entry:
    """A parsed memory line. ``text`` is the readable body (alias: rebuilt from fields).

    Example:
        >>> Entry.make_alias("报销", "国内差旅费用报销流程", None).line()
        '- [alias] 报销 → 国内差旅费用报销流程 (workflowId=（待确认）)'
    """

    kind: str
    text: str
    key: str | None = None
    alias: str | None = None
    workflow_name: str | None = None
    target_id: str | None = None

    @classmethod
    def make_alias(cls, alias: str, workflow_name: str | None, target_id: object) -> Entry:
        """An alias line; an empty name becomes :data:`_PENDING_NAME`, an unknown id :data:`PENDING_ID`."""
        alias, name = _clean_name(alias), _workflow_name(workflow_name)
        tid = normalize_target_id(target_id)
        return cls(kind="alias", text=f"{alias} → {name} (workflowId={tid})", alias=alias,
                   workflow_name=name, target_id=tid)

    @classmethod
    def make(cls, kind: str, text: str, key: str | None = None) -> Entry:
        return cls(kind=kind, text=one_line(text), key=key)

    @property
    def pending(self) -> bool:
        return self.kind == "alias" and self.target_id == PENDING_ID

    @property
    def name_pending(self) -> bool:
        return self.kind == "alias" and self.workflow_name == _PENDING_NAME

    @property
    def identity(self) -> tuple[str, ...]:
        """What makes two entries 'the same memory' in one file."""
        if self.kind == "alias":
            return ("alias", normalize_text(self.alias or ""))
        if self.key:
            return ("slot", self.kind, self.key)
        return ("text", normalize_text(self.text))

    def line(self) -> str:
        tag = f"{self.kind}:{self.key}" if self.key else self.kind
        return f"- [{tag}] {self.text}"



def parse_line(line: str) -> Entry | None:
    """The entry of one bullet line, or ``None`` for headings, blanks and prose."""
    match = _LINE.match(line)
    if match and match["kind"] in KINDS:
        kind, body = match["kind"], match["body"]
        if kind == "alias":
            alias = _ALIAS_BODY.match(body)
            if alias:
                return Entry.make_alias(alias["alias"], alias["name"], alias["id"])
            return Entry.make("note", body)
        return Entry.make(kind, body, match["key"])
    plain = _PLAIN.match(line)
    return Entry.make("note", plain["body"]) if plain else None


def parse_entries(text: str) -> list[Entry]:
    """Every entry of a markdown document, in order."""
    return [e for e in (parse_line(line) for line in text.splitlines()) if e is not None]
