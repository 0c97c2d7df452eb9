"""LLM call accounting: every LLM call of the package goes through :class:`LLMGateway`."""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from hy_memory_langgraph.errors import InvalidInputError, LLMCallError
from hy_memory_langgraph.pipeline_log.meter import count_llm

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


@dataclass
class StageUsage:
    """LLM usage of one pipeline stage.

    Attributes:
        calls: Model calls made (failed ones included).
        prompt_tokens: Input tokens.
        completion_tokens: Output tokens.
        failures: Calls that raised.
        estimated: ``True`` when any count of this stage is an estimate.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: int = 0
    estimated: bool = False


class LLMUsage:
    """Thread-safe per-stage counters of LLM calls and tokens.

    Example:
        >>> usage = LLMUsage()
        >>> usage.record("judge", 120, 8, estimated=False)
        >>> usage.snapshot()["judge"]["prompt_tokens"], usage.total_calls
        (120, 1)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stages: dict[str, StageUsage] = {}

    def record(
        self,
        stage: str,
        prompt_tokens: int,
        completion_tokens: int,
        *,
        estimated: bool,
        failed: bool = False,
    ) -> None:
        """Add one call to ``stage`` (and to the pipeline log's running stage, if any)."""
        count_llm(max(0, int(prompt_tokens)), max(0, int(completion_tokens)), failed=failed)
        with self._lock:
            entry = self._stages.setdefault(stage, StageUsage())
            entry.calls += 1
            entry.prompt_tokens += max(0, int(prompt_tokens))
            entry.completion_tokens += max(0, int(completion_tokens))
            entry.failures += 1 if failed else 0
            entry.estimated = entry.estimated or estimated

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """A copy: ``{stage: {calls, prompt_tokens, completion_tokens, failures, estimated}}``."""
        with self._lock:
            return {stage: asdict(entry) for stage, entry in self._stages.items()}

    @property
    def total_calls(self) -> int:
        """Calls over all stages."""
        with self._lock:
            return sum(entry.calls for entry in self._stages.values())

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens over all stages."""
        with self._lock:
            return sum(e.prompt_tokens + e.completion_tokens for e in self._stages.values())

    def reset(self) -> None:
        """Forget every count."""
        with self._lock:
            self._stages.clear()


def _content_text(content: Any) -> str:
    """Text of a message ``content``: a string, or the text blocks of a list joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") in (None, "text"):
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
        return "".join(parts)
    return "" if content is None else str(content)


def _estimate_tokens(chars: int) -> int:
    return max(1, math.ceil(chars / 4))


class LLMGateway:
    """The one place the package calls a chat model: returns text, counts usage.

    Token counts come from the reply's ``usage_metadata``; when the model reports
    none they are estimated (characters / 4, at least 1) and the stage is marked
    ``estimated``. Calls are tagged ``hy_memory`` and ``nostream`` so internal memory
    calls never appear in a LangGraph ``messages`` stream.

    Args:
        model: Any LangChain chat model.
        usage: Where to count; a fresh :class:`LLMUsage` by default.
        raise_errors: A failed call raises to the graph run instead of taking the
            caller's fallback (a background run retries it later; see
            :meth:`for_background`).

    Example:
        >>> from hy_memory_langgraph.testing import ScriptedChatModel
        >>> gateway = LLMGateway(ScriptedChatModel.from_script(["ok"]))
        >>> gateway.invoke("judge", "Is this coding?", system="Answer briefly.")
        'ok'
        >>> gateway.usage.snapshot()["judge"]["calls"]
        1
    """

    def __init__(self, model: BaseChatModel, usage: LLMUsage | None = None, *,
                 raise_errors: bool = False) -> None:
        from langchain_core.language_models import BaseChatModel  # loaded with the first model

        if not isinstance(model, BaseChatModel):
            raise InvalidInputError(
                f"model={model!r} is invalid: expected a LangChain BaseChatModel."
            )
        self.model = model
        self.usage = usage if usage is not None else LLMUsage()
        self.raise_errors = raise_errors
        #: Calls of this gateway that failed.
        self.failures = 0

    def for_background(self, *, raise_errors: bool) -> LLMGateway:
        """A gateway for one background run: the same model and usage counters, its own
        count of failed calls, failures raised (``raise_errors``) or left to the fallbacks."""
        return LLMGateway(self.model, self.usage, raise_errors=raise_errors)

    @staticmethod
    def _messages(
        stage: str, prompt: str | Sequence[BaseMessage], system: str | None
    ) -> list[BaseMessage]:
        if not isinstance(stage, str) or not stage.strip():
            raise InvalidInputError(f"stage={stage!r} is invalid: expected a non-empty name.")
        if isinstance(prompt, str):
            messages: list[BaseMessage] = [HumanMessage(content=prompt)]
        elif isinstance(prompt, Sequence) and all(isinstance(m, BaseMessage) for m in prompt):
            messages = [m for m in prompt if isinstance(m, BaseMessage)]
        else:
            raise InvalidInputError(
                f"prompt={prompt!r} is invalid: expected a string or a list of BaseMessage."
            )
        if system:
            messages.insert(0, SystemMessage(content=system))
        return messages

    @staticmethod
    def _config(stage: str) -> RunnableConfig:
        return {
            "run_name": f"hy_memory:{stage}",
            "tags": ["hy_memory", "nostream"],
            "metadata": {"hy_memory_stage": stage},
        }

    def _failed(self, stage: str, exc: Exception) -> LLMCallError:
        self.failures += 1
        self.usage.record(stage, 0, 0, estimated=False, failed=True)
        return LLMCallError(
            f"The LLM call of stage {stage!r} failed ({type(exc).__name__}: {exc}).",
            stage=stage,
        )

    def _finish(self, stage: str, messages: list[BaseMessage], reply: Any) -> str:
        text = _content_text(getattr(reply, "content", reply))
        usage = getattr(reply, "usage_metadata", None) or {}
        prompt_tokens = int(usage.get("input_tokens") or 0)
        completion_tokens = int(usage.get("output_tokens") or 0)
        if prompt_tokens + completion_tokens > 0:
            self.usage.record(stage, prompt_tokens, completion_tokens, estimated=False)
        else:
            prompt_chars = sum(len(_content_text(m.content)) for m in messages)
            self.usage.record(
                stage,
                _estimate_tokens(prompt_chars),
                _estimate_tokens(len(text)),
                estimated=True,
            )
        return text

    def invoke(
        self, stage: str, prompt: str | list[BaseMessage], *, system: str | None = None
    ) -> str:
        """Call the model once for ``stage`` and return the reply text.

        Args:
            stage: Pipeline stage name the usage is counted under (e.g. ``"judge"``).
            prompt: The user prompt, or a full list of messages.
            system: Optional system message placed first.

        Raises:
            LLMCallError: The model call failed (the original error is chained).
        """
        messages = self._messages(stage, prompt, system)
        try:
            reply = self.model.invoke(messages, self._config(stage))
        except Exception as exc:
            raise self._failed(stage, exc) from exc
        return self._finish(stage, messages, reply)

    async def ainvoke(
        self, stage: str, prompt: str | list[BaseMessage], *, system: str | None = None
    ) -> str:
        """Async twin of :meth:`invoke`."""
        messages = self._messages(stage, prompt, system)
        try:
            reply = await self.model.ainvoke(messages, self._config(stage))
        except Exception as exc:
            raise self._failed(stage, exc) from exc
        return self._finish(stage, messages, reply)
