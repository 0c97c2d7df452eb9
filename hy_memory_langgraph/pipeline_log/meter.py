"""The meter of the stage being run: LLM calls, tokens, errors and fallbacks.

A node wrapper opens :func:`stage_meter` around one node; the LLM gateway and the nodes
report into the running stage's meter (a context variable, so concurrent requests in other
threads or tasks never mix). Outside a stage the reports go nowhere.

Example:
    >>> with stage_meter() as meter:
    ...     note_fallback("judge failed: routed to chat")
    >>> meter.fallbacks
    ['judge failed: routed to chat']
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


@dataclass
class StageMeter:
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


_CURRENT: ContextVar[StageMeter | None] = ContextVar("hy_memory_stage_meter", default=None)


@contextmanager
def stage_meter() -> Iterator[StageMeter]:
    """Meter everything reported until the block ends."""
    meter = StageMeter()
    token = _CURRENT.set(meter)
    try:
        yield meter
    finally:
        _CURRENT.reset(token)


def count_llm(prompt_tokens: int, completion_tokens: int, *, failed: bool = False) -> None:
    """Count one LLM call (or failed call) in the running stage."""
    meter = _CURRENT.get()
    if meter is None:
        return
    meter.llm_calls += 1
    meter.llm_failures += int(failed)
    meter.prompt_tokens += prompt_tokens
    meter.completion_tokens += completion_tokens


def note_llm_error(reason: str) -> None:
    """Record why a model answer could not be used (the call failed, no JSON…)."""
    meter = _CURRENT.get()
    if meter is not None:
        meter.llm_errors.append(reason)


def note_fallback(description: str) -> None:
    """Record a documented fallback the stage took (e.g. ``"every fact added"``)."""
    meter = _CURRENT.get()
    if meter is not None:
        meter.fallbacks.append(description)
