"""What each prompt's reply is: one typed shape per prompt, parsed once.

Any OpenAI-compatible server may answer, so replies are read leniently: a number where a
string belongs, a bare string where an object belongs, one item where a list belongs, an
unknown value of a choice, extra keys. Each model below coerces what it can (the
``as_*`` helpers of :mod:`hy_memory_langgraph.models.parsing`) and drops what it cannot
(an unusable item of a list is left out), so the nodes read typed fields and check
nothing again. A reply that cannot be what its prompt asks for at all (a required list
missing or not a list) does not validate: the caller gets ``None`` and takes its
documented fallback (:func:`hy_memory_langgraph.services.llm.ask`).

Example:
    >>> ChatExtract.model_validate({"facts": ["Has a cat", {"content": 7, "owner": "USER"}, 3.5e9]}).facts
    [ChatFact(content='Has a cat', subject='', owner='user'), ChatFact(content='7', subject='', owner='user'), ChatFact(content='3500000000.0', subject='', owner='user')]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, model_validator

from hy_memory_langgraph.models.parsing import as_choice, as_float, as_list, as_str, as_str_list
from hy_memory_langgraph.scenes import DEFAULT_SCENE, SCENES


class Reply(BaseModel):
    """A reply of a prompt: unknown keys ignored, fields coerced."""

    model_config = ConfigDict(extra="ignore", frozen=True)


def _choice(options: Iterable[str], default: str) -> Callable[[Any], str]:
    options = tuple(options)
    return lambda value: as_choice(value, options, default)


def _items(kind: type[Reply], wrap: str | None = None) -> Callable[[Any], list[Any]]:
    """A list of ``kind`` items; a bare scalar item becomes ``{wrap: item}``; items that
    do not validate are dropped."""

    def parse(value: Any) -> list[Any]:
        out = []
        for item in as_list(value):
            if wrap is not None and not isinstance(item, dict):
                item = {wrap: item}
            try:
                out.append(kind.model_validate(item))
            except ValidationError:
                continue
        return out

    return parse


def _required_list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError("a list is required")
    return value


def _object_or_none(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _confidence(value: Any) -> float | None:
    number = as_float(value, math.nan, lo=0.0, hi=1.0)
    return None if math.isnan(number) else number


def _nonblank(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("a non-empty text is required")
    return value.strip()


Text = Annotated[str, BeforeValidator(as_str)]
Texts = Annotated[list[str], BeforeValidator(as_str_list)]
Confidence = Annotated[float | None, BeforeValidator(_confidence)]


# ----------------------------------------------------------------------- routing
class SceneJudge(Reply):
    """``scene_judge``: the scene of a write with a tool trace."""

    scene: Annotated[str, BeforeValidator(_choice(SCENES, DEFAULT_SCENE))] = DEFAULT_SCENE


class TimeRange(Reply):
    start: Text = ""
    end: Text = ""


class QueryAnalysis(Reply):
    """``query_analysis`` / ``query_classify`` / ``query_rewrite``: the scene, a standalone
    rewrite and a time range of a search (each prompt asks for some of them)."""

    scene: Annotated[str, BeforeValidator(_choice(SCENES, DEFAULT_SCENE))] = DEFAULT_SCENE
    rewrite: Text = ""
    time_range: Annotated[TimeRange, BeforeValidator(lambda v: v if isinstance(v, dict) else {})] = TimeRange()


# ----------------------------------------------------------------------- chat
OWNERS = ("user", "assistant")
CHAT_OPS = ("ADD", "UPDATE", "SUPERSEDE", "SKIP")


class ChatFact(Reply):
    content: Annotated[str, BeforeValidator(lambda v: _nonblank(as_str(v)))]
    subject: Text = ""
    owner: Annotated[str, BeforeValidator(_choice(OWNERS, "user"))] = "user"


class ChatExtract(Reply):
    """``chat_extract``: self-contained facts (``facts`` must be a list)."""

    facts: Annotated[list[ChatFact], BeforeValidator(_items(ChatFact, wrap="content")),
                     BeforeValidator(_required_list)]


class ChatDecision(Reply):
    op: Annotated[str, BeforeValidator(_choice(CHAT_OPS, "ADD"))] = "ADD"
    fact: Text = ""
    target: Text = ""
    content: Text = ""


class ChatReconcile(Reply):
    """``chat_reconcile``: an operation per new fact (``n0``…) on a candidate (``c0``…)."""

    operations: Annotated[list[ChatDecision], BeforeValidator(_items(ChatDecision))] = []


# ----------------------------------------------------------------------- working / coding
EXPERIENCE_OPS = ("ADD", "UPDATE", "DELETE", "SKIP")


class ExperienceDraft(Reply):
    task: Text = ""
    search_keys: Texts = []
    solution: Text = ""
    boundary_envs: Texts = []
    confidence: Confidence = None
    files: Texts = []


class FactDraft(Reply):
    subject: Text = ""
    statement: Text = ""
    files: Texts = []
    details: Text = ""


class ProductivityExtract(Reply):
    """``productivity_extract_working`` / ``_coding``: experiences and the write's fact.

    ``fact`` is what the model gave as the fact (``None`` when it gave none);
    :attr:`fact_draft` is it parsed (``None`` unless it is an object).
    """

    experiences: Annotated[list[ExperienceDraft], BeforeValidator(_items(ExperienceDraft))] = []
    fact: Any = None
    #: Whether the reply named ``experiences`` or ``fact`` at all.
    answered: bool = False

    @model_validator(mode="before")
    @classmethod
    def _answered(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {**data, "answered": "experiences" in data or "fact" in data}
        return data

    @property
    def fact_draft(self) -> FactDraft | None:
        return FactDraft.model_validate(self.fact) if isinstance(self.fact, dict) else None


class ExperienceMerge(Reply):
    task: Text = ""
    solution: Text = ""
    search_keys: Texts = []
    boundary_envs: Texts = []
    confidence: Confidence = None


class ExperienceDecision(Reply):
    op: Annotated[str, BeforeValidator(_choice(EXPERIENCE_OPS, "ADD"))] = "ADD"
    draft: Text = ""
    target: Text = ""
    merged: Annotated[ExperienceMerge | None, BeforeValidator(_object_or_none)] = None


class ExperienceReconcile(Reply):
    """``experience_reconcile``: an operation per draft (``d0``…) on a candidate."""

    operations: Annotated[list[ExperienceDecision], BeforeValidator(_items(ExperienceDecision))] = []


class FactReconcile(Reply):
    """``fact_reconcile``: the aliases of the candidates the new fact supersedes."""

    supersede: Texts = []


class ProgressSummary(Reply):
    """``progress_summary``: the task's progress over the facts it supersedes."""

    summary: Text = ""


# ----------------------------------------------------------------------- workflow
class WorkflowEntry(Reply):
    dimension: Literal["user", "global", "workflow"]
    text: Annotated[str, BeforeValidator(_nonblank)]
    workflow_id: Annotated[str | None, BeforeValidator(lambda v: as_str(v) or None)] = None
    alias: Annotated[str | None, BeforeValidator(lambda v: as_str(v) or None)] = None
    workflow_name: Annotated[str | None, BeforeValidator(lambda v: as_str(v) or None)] = None


class WorkflowExtract(Reply):
    """``workflow_extract``: entries for the user, global and workflow dimensions
    (``entries`` must be a list; entries without text or dimension are dropped)."""

    entries: Annotated[list[WorkflowEntry], BeforeValidator(_items(WorkflowEntry)),
                       BeforeValidator(_required_list)]
    #: Entries the model gave, usable or not.
    given: int = 0

    @model_validator(mode="before")
    @classmethod
    def _given(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("entries"), list):
            return {**data, "given": len(data["entries"])}
        return data
