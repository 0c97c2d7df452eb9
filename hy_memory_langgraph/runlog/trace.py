"""The meter of the stage being run: LLM calls, tokens, errors and fallbacks.

A node wrapper opens :func:`stage_trace` around one node; the LLM gateway and the nodes
report into :func:`current_trace` (a context variable, so concurrent requests in other
threads or tasks never mix). Outside a stage the reports go nowhere.

Example:
    >>> with stage_trace() as trace:
    ...     note_fallback("judge failed: routed to chat")
    >>> trace.fallbacks
    ['judge failed: routed to chat']
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

__all__ = ["StageTrace", "count_llm", "current_trace", "note_fallback", "note_llm_error",
           "stage_trace"]


@dataclass
class StageTrace:
    """What happened inside one stage besides its output."""

    llm_calls: int = 0
    llm_failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_errors: list[str] = field(default_factory=list)
    fallbacks: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, Any]:
        """The meters that recorded something, fallbacks aside (a stage record's fields)."""
        values = {"llm_calls": self.llm_calls, "llm_failures": self.llm_failures,
                  "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                  "llm_errors": self.llm_errors}
        return {k: v for k, v in values.items() if v}


_CURRENT: ContextVar[StageTrace | None] = ContextVar("hy_memory_stage_trace", default=None)


@contextmanager
def stage_trace() -> Iterator[StageTrace]:
    """Meter everything reported until the block ends."""
    trace = StageTrace()
    token = _CURRENT.set(trace)
    try:
        yield trace
    finally:
        _CURRENT.reset(token)


def current_trace() -> StageTrace | None:
    """The meter of the running stage, or ``None`` outside one."""
    return _CURRENT.get()


def count_llm(prompt_tokens: int, completion_tokens: int, *, failed: bool = False) -> None:
    """Count one LLM call (or failed call) in the running stage."""
    trace = _CURRENT.get()
    if trace is None:
        return
    trace.llm_calls += 1
    trace.llm_failures += int(failed)
    trace.prompt_tokens += prompt_tokens
    trace.completion_tokens += completion_tokens


def note_llm_error(reason: str) -> None:
    """Record why a model answer could not be used (the call failed, no JSON…)."""
    trace = _CURRENT.get()
    if trace is not None:
        trace.llm_errors.append(reason)


def note_fallback(description: str) -> None:
    """Record a documented fallback the stage took (e.g. ``"every fact added"``)."""
    trace = _CURRENT.get()
    if trace is not None:
        trace.fallbacks.append(description)
