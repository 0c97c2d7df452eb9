"""Stored memory records: one dataclass per kind, sharing the fields every record has.

* :class:`ChatMemory`: one chat memory (a fact from extraction or a lite turn).
* :class:`Experience`: a reusable how-to of a productivity scene (task, keys, solution).
* :class:`Fact`: the episodic record of one productivity write.

Every record has an id, an owner, a status (``active``, ``superseded`` or ``deleted``),
the time it speaks of (``memory_at`` / ``memory_ts``), a version, the records it
superseded and the one that superseded it. Only active records are indexed for
vector search; their ``index_fields`` say which text is embedded.

Example:
    >>> m = ChatMemory(memory_id="m1", user_id="u1", content="Alice likes tea",
    ...                memory_at="2024-05-01T00:00:00+00:00", memory_ts=0.0)
    >>> m.kind, m.text, m.index_paths()
    ('chat', 'Alice likes tea', ['content'])
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal

from hy_memory_langgraph.errors import StoreCorruptionError
from hy_memory_langgraph.messages.signal import is_question_only

log = logging.getLogger(__name__)

ACTIVE: Final = "active"
SUPERSEDED: Final = "superseded"
DELETED: Final = "deleted"


@functools.cache
def _stored_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.name != "score")


def _copied(value: Any) -> Any:
    """``value`` with its lists and dicts copied all the way down (JSON values)."""
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    return value


@dataclass(kw_only=True)
class Record:
    """Fields shared by every stored memory.

    ``created_at`` / ``updated_at`` are ISO-8601 times set by the repository; ``score``
    is transient (set on search hits, never stored).
    """

    kind: ClassVar[str] = ""
    index_fields: ClassVar[tuple[str, ...]] = ()
    #: Stored fields left out of the caller-facing dict.
    internal_fields: ClassVar[frozenset[str]] = frozenset()

    memory_id: str
    user_id: str
    memory_at: str
    memory_ts: float
    status: str = ACTIVE
    version: int = 1
    supersedes: list[str] = field(default_factory=list)
    superseded_by: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    request_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""
    score: float | None = None

    @property
    def text(self) -> str:
        """The record's main text (what history events and logs show)."""
        raise NotImplementedError

    def index_paths(self) -> list[str] | Literal[False]:
        """Fields to embed when stored: the kind's fields while active, else none."""
        return list(self.index_fields) if self.status == ACTIVE else False

    def stored_value(self) -> dict[str, Any]:
        """The JSON value written to the store (``kind`` included, ``score`` left out);
        lists and dicts are copies, as with :func:`dataclasses.asdict`."""
        value = {name: _copied(getattr(self, name)) for name in _stored_names(type(self))}
        value["kind"] = self.kind
        return value

    def to_dict(self) -> dict[str, Any]:
        """The caller-facing dict: every public field, ``score`` rounded when set."""
        out = {k: v for k, v in self.stored_value().items() if k not in self.internal_fields}
        out["score"] = None if self.score is None else round(float(self.score), 6)
        return out

    def event_fields(self) -> dict[str, Any]:
        """Kind-specific fields a history event keeps of this version."""
        return {}

    def quoted_texts(self) -> list[str]:
        """The texts of this record that may quote conversation messages (erasure)."""
        return [self.text]

    @classmethod
    def from_value(cls, value: dict[str, Any], score: float | None = None) -> Record:
        """Rebuild a record from its stored value (unknown keys are ignored).

        Raises:
            StoreCorruptionError: the value lacks a field or holds one of the wrong type.
        """
        if not isinstance(value, dict):
            raise StoreCorruptionError(f"a stored {cls.kind} record is a {type(value).__name__}, not an object")
        data = {k: v for k, v in value.items() if k in _field_types(cls)}
        wrong = [k for k, v in data.items() if not _conforms(v, _field_types(cls)[k])]
        if wrong:
            raise StoreCorruptionError(f"stored {cls.kind} record {value.get('memory_id')!r} has a bad "
                                       f"{', '.join(sorted(wrong))}")
        data["score"] = score
        try:
            return cls(**data)
        except TypeError as exc:
            raise StoreCorruptionError(f"stored {cls.kind} record {value.get('memory_id')!r} is "
                                       f"incomplete: {exc}") from None


@dataclass(kw_only=True)
class ChatMemory(Record):
    """One chat memory; only ``content`` is embedded.

    ``context`` is the last message with content before a lite turn, and ``carried`` the
    trivial and question-only turns (acknowledgements, emoji, plain questions) said between
    it and this turn, which are not memories of their own; both serve lexical retrieval only. ``owner`` says whose fact
    it is (``user`` or ``assistant``); ``subject`` names who or what it is about (empty
    when unknown). ``turn_hash`` identifies a lite turn for duplicate detection and
    ``turn_index`` orders the turns one write stored (both internal). ``question``
    (internal) says whether a lite turn only asks (see :attr:`asks_only`).
    """

    kind: ClassVar[str] = "chat"
    index_fields: ClassVar[tuple[str, ...]] = ("content",)
    internal_fields: ClassVar[frozenset[str]] = frozenset({"turn_hash", "turn_index", "question"})

    content: str
    subject: str = ""
    owner: str = "user"
    role: str | None = None
    source: str = "extract"
    context: str = ""
    carried: str = ""
    turn_hash: str = ""
    turn_index: int = 0
    question: bool | None = None

    @property
    def text(self) -> str:
        return self.content

    @property
    def asks_only(self) -> bool:
        """Whether this memory is a lite turn that only asks a question (search ranks such
        turns lower, ``ChatRanking.question_weight``).

        The flag stored when the turn was written; a lite turn written before the flag
        existed (``question`` is ``None``) is classified from its text now. Extracted
        facts never count as questions.
        """
        if self.question is not None:
            return self.question
        return self.source == "turn" and is_question_only(self.content)

    @property
    def own_text(self) -> str:
        """The turn with the trivial turns it carries (what its session neighbours see)."""
        return f"{self.content}\n{self.carried}" if self.carried else self.content

    @property
    def retrieval_text(self) -> str:
        """What lexical search matches: the content, the trivial turns it carries and the
        message before them."""
        return "\n".join(t for t in (self.content, self.carried, self.context) if t)

    def quoted_texts(self) -> list[str]:
        return [t for t in (self.content, self.carried) if t]


@dataclass(kw_only=True)
class _ProductivityRecord(Record):
    """Fields of both productivity layers: the scene (``variant``) and the scope."""

    variant: str
    workspace_id: str | None = None
    branch: str | None = None
    files: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class Experience(_ProductivityRecord):
    """A reusable how-to; ``task`` and each of ``search_keys`` are separate vectors."""

    kind: ClassVar[str] = "experience"
    index_fields: ClassVar[tuple[str, ...]] = ("task", "search_keys[*]")

    task: str
    solution: str
    search_keys: list[str] = field(default_factory=list)
    boundary_envs: list[str] = field(default_factory=list)
    confidence: float = 0.5
    last_op: str = "ADD"

    @property
    def text(self) -> str:
        return self.task

    def event_fields(self) -> dict[str, Any]:
        return {"task": self.task, "solution": self.solution,
                "search_keys": list(self.search_keys)}

    def quoted_texts(self) -> list[str]:
        return [self.task, self.solution, *self.search_keys]


@dataclass(kw_only=True)
class Fact(_ProductivityRecord):
    """The episodic record of one write; only ``embed_text`` is embedded.

    ``details`` (a verbatim trace excerpt) is never embedded. ``summary`` is the
    progress summary over the facts it superseded.
    """

    kind: ClassVar[str] = "fact"
    index_fields: ClassVar[tuple[str, ...]] = ("embed_text",)
    internal_fields: ClassVar[frozenset[str]] = frozenset({"embed_text", "subject_key"})

    subject: str
    statement: str
    subject_key: str = ""
    embed_text: str = ""
    details: str = ""
    source: str = "extract"
    summary: str | None = None
    experience_ids: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.statement

    def event_fields(self) -> dict[str, Any]:
        return {"subject": self.subject, "summary": self.summary}

    def quoted_texts(self) -> list[str]:
        return [self.statement, self.details]


_KINDS: Final[dict[str, type[Record]]] = {
    cls.kind: cls for cls in (ChatMemory, Experience, Fact)
}


def record_from_value(value: dict[str, Any], score: float | None = None) -> Record:
    """The record a stored value describes (its ``kind`` picks the class).

    Raises:
        StoreCorruptionError: the value is not a record this package wrote.
    """
    kind = value.get("kind") or "chat" if isinstance(value, dict) else None
    if kind not in _KINDS:
        raise StoreCorruptionError(f"a stored record has an unknown kind {kind!r}")
    return _KINDS[str(kind)].from_value(value, score)


def readable_record(value: Any, score: float | None = None) -> Record | None:
    """:func:`record_from_value`, or ``None`` (logged) for a damaged value: one bad row is
    skipped, never fatal for the user's other memories."""
    try:
        return record_from_value(value, score)
    except StoreCorruptionError as exc:
        log.warning("skipped a damaged memory record: %s", exc)
        return None


@functools.cache
def _field_types(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _conforms(value: Any, hint: Any) -> bool:
    """Whether a JSON value fits a field's annotation (``str``, ``int``, ``float``,
    ``bool``, ``list[...]``, ``dict[...]``, ``X | None``)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return isinstance(value, list) and all(_conforms(v, item) for v in value)
    if origin is dict or hint is dict:
        return isinstance(value, dict)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint in (str, bool):
        return isinstance(value, hint)
    return True
