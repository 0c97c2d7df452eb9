"""Fakes and trace builders shared by the productivity tests.

* :class:`StageScript`: a scripted model that answers by pipeline stage, recognised
  from the system prompt, and records every call (stage, language, prompt).
* Trace builders for OpenAI-style tool-call conversations.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage

from hy_memory_langgraph.fences import read_fences
from hy_memory_langgraph.testing import ScriptedChatModel

__all__ = ["PLAIN", "WS", "Call", "StageScript", "chain_rows", "chain_search", "edit_trace", "experience", "extraction",
           "routing_script", "rows", "section", "stage_of", "three_chain_writes", "tool_trace"]

_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("coding_extract", ("memory writer of a coding agent", "编程智能体的记忆整理员")),
    ("working_extract", ("memory writer of a productivity agent", "办公智能体的记忆整理员")),
    ("experience_reconcile", ("library of reusable how-to", "可复用经验库")),
    ("fact_reconcile", ("timeline of a user's work", "用户工作的时间线")),
    ("progress_summary", ("progress note of one task", "进展小结")),
    ("scene_judge", ("memory scenes", "记忆场景")),
)


def stage_of(messages: list[BaseMessage]) -> tuple[str, str]:
    """``(stage, lang)`` of a prompt, from markers of our system prompts."""
    system = str(messages[0].content) if len(messages) > 1 else ""
    for stage, (en, zh) in _MARKERS:
        if en in system:
            return stage, "en"
        if zh in system:
            return stage, "zh"
    return "other", "en"


@dataclass
class Call:
    stage: str
    lang: str
    system: str
    user: str


@dataclass
class StageScript:
    """Answers per stage: a reply (dict → JSON, str as is), a function of the user
    prompt, or a list consumed in order (the last one repeats)."""

    replies: dict[str, Any] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)

    def __call__(self, messages: list[BaseMessage]) -> str:
        stage, lang = stage_of(messages)
        user = str(messages[-1].content)
        self.calls.append(Call(stage, lang, str(messages[0].content), user))
        reply = self.replies.get(stage, "{}")
        if isinstance(reply, list):
            reply = reply.pop(0) if len(reply) > 1 else reply[0]
        if callable(reply):
            reply = reply(user)
        return reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)

    def model(self) -> ScriptedChatModel:
        return ScriptedChatModel.from_script(self)

    def stages(self) -> list[str]:
        return [c.stage for c in self.calls]

    def count(self, stage: str) -> int:
        return sum(c.stage == stage for c in self.calls)

    def last(self, stage: str) -> Call:
        return [c for c in self.calls if c.stage == stage][-1]


def experience(task: str, solution: str = "do the thing", keys: list[str] | None = None,
               **extra: Any) -> dict[str, Any]:
    return {"task": task, "search_keys": keys or [], "solution": solution, "boundary_envs": [],
            "confidence": 0.8, "files": [], **extra}


def extraction(subject: str = "src/search.py:SearchClient", statement: str = "raised the timeout",
               experiences: list[dict[str, Any]] | None = None, **fact: Any) -> dict[str, Any]:
    return {"experiences": experiences or [],
            "fact": {"subject": subject, "statement": statement, "files": [], "details": "ok",
                     **fact}}


def tool_trace(user: str = "Fix the timeout in the search client.", *, tool: str = "apply_patch",
               args: dict[str, Any] | None = None, result: str = "Patch applied successfully",
               call_id: str = "call_1", answer: str | None = "Done.") -> list[dict[str, Any]]:
    """One user-turn: user → assistant tool call → tool result (→ assistant answer)."""
    msgs: list[dict[str, Any]] = [
        {"role": "user", "content": user},
        {"role": "assistant", "content": "", "tool_calls": [{
            "id": call_id, "type": "function",
            "function": {"name": tool, "arguments": json.dumps(args or {"path": "src/search.py"})}}]},
        {"role": "tool", "tool_call_id": call_id, "name": tool, "content": result},
    ]
    if answer is not None:
        msgs.append({"role": "assistant", "content": answer})
    return msgs


def rows(prompt: str, tag: str) -> list[Any]:
    """The rows of the data region ``tag`` of a rendered prompt, decoded."""
    return next(region.rows for region in read_fences(prompt) if region.name == tag)


def section(prompt: str, tag: str) -> str:
    """The rows of the data region ``tag`` as text, one JSON value per line (decoded)."""
    return "\n".join(json.dumps(row, ensure_ascii=False) for row in rows(prompt, tag))


# ---------------------------------------------------------------- version chain traces

#: The workspace of the version-chain helpers below.
WS = "github.com/example/service"


def edit_trace(user: str, old: str, new: str, *, call_id: str = "c1", result: str = "ok") -> list[dict[str, Any]]:
    """One ``Edit`` tool call changing the body of ``SearchClient.fetch`` in src/search.py."""
    args = {"file_path": "src/search.py",
            "old_string": f"    def fetch(self, q):\n{old}", "new_string": f"    def fetch(self, q):\n{new}"}
    return tool_trace(user, tool="Edit", args=args, result=result, call_id=call_id)


def three_chain_writes(client: Any, *, branch: str | None = "fix/search-timeout", user: str = "u1") -> list[dict[str, Any]]:
    """Raise the timeout, add retries, revert the timeout: three coding writes."""
    steps = [
        ("Raise the search timeout to 30 seconds", "        t = 10", "        t = 30"),
        ("Add retries to the search fetch", "        t = 30", "        t = 30\n        retries = 3"),
        ("Revert the search timeout back to 10 seconds", "        t = 30", "        t = 10"),
    ]
    return [client.add(edit_trace(ask, old, new), scene="coding", user_id=user, workspace_id=WS,
                       branch=branch, memory_at=f"2024-05-0{day}T09:00:00Z")
            for day, (ask, old, new) in enumerate(steps, start=1)]


def chain_search(client: Any, **kw: Any) -> dict[str, Any]:
    """A coding search of the chain writes' scope, every fact kept."""
    args = {"scene": "coding", "user_ids": ["u1"], "workspace_id": WS,
            "branch": "fix/search-timeout", "min_score": -1.0, **kw}
    return client.search("search timeout", **args)


def chain_rows(found: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of a search result's ``chain_block`` (threads and their versions)."""
    [region] = read_fences(found["chain_block"])
    return region.rows


# ---------------------------------------------------------------- routing

#: A conversation without any tool trace.
PLAIN = [{"role": "user", "content": "I like green tea."},
         {"role": "assistant", "content": "Noted!"}]


def routing_script(**replies: object) -> StageScript:
    """A script answering every extraction stage (overridable per stage)."""
    base: dict[str, object] = {"working_extract": extraction(), "coding_extract": extraction(),
                               "chat_extract": {"facts": []}}
    base.update(replies)
    return StageScript(base)
