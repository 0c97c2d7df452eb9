"""Deterministic stand-ins for models, for tests, benchmarks and notebooks.

* :class:`HashingEmbeddings`: character n-gram hashing embeddings. Same text, same
  vector, on every machine; texts that share n-grams are close. No model, no network.
* :class:`ScriptedChatModel`: a chat model that answers from a script (a list of
  replies or a function of the prompt) and whose ``bind_tools`` returns itself.
* :class:`RaisingChatModel`: a chat model that fails the test if it is ever called.

Example:
    >>> emb = HashingEmbeddings(dims=64)
    >>> len(emb.embed_query("hello"))
    64
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

__all__ = ["HashingEmbeddings", "ScriptedChatModel", "RaisingChatModel"]


def _ngrams(text: str, n: int) -> Iterator[str]:
    text = f" {text.lower()} "
    for size in range(1, n + 1):
        for i in range(len(text) - size + 1):
            yield text[i : i + size]


class HashingEmbeddings(Embeddings):
    """Deterministic character n-gram hashing embeddings (L2-normalised).

    Args:
        dims: Vector size.
        ngram: Largest character n-gram hashed (1..ngram are all used).

    Example:
        >>> e = HashingEmbeddings()
        >>> a, b = e.embed_documents(["apple pie", "apple tart"])
    """

    def __init__(self, dims: int = 64, ngram: int = 3) -> None:
        self.dims = dims
        self.ngram = ngram

    def _embed(self, text: str) -> list[float]:
        vec = [0.0] * self.dims
        for gram in _ngrams(text, self.ngram):
            digest = hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dims
            sign = 1.0 if digest[4] & 1 else -1.0
            vec[bucket] += sign * (1.0 + 0.5 * (len(gram) - 1))
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        return [v / norm for v in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embed(text)

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Several queries in one call (what the embedded e5 offers too)."""
        return [self._embed(t) for t in texts]


Script = Sequence[str | AIMessage] | Callable[[list[BaseMessage]], str | AIMessage]


class ScriptedChatModel(GenericFakeChatModel):
    """A chat model that replies from a script; ``bind_tools`` returns itself.

    The script is either a sequence of replies, consumed in order, or a function
    receiving the prompt messages and returning the reply (so a test can answer by
    pipeline stage). Every prompt seen is kept in ``prompts``.

    Example:
        >>> model = ScriptedChatModel.from_script(["first", "second"])
        >>> model.invoke("hi").content
        'first'
    """

    responder: Callable[[list[BaseMessage]], str | AIMessage] | None = None
    stage_replies: dict[str, Any] | None = None
    prompts: list[list[BaseMessage]] = []
    stages: list[str] = []
    usage: tuple[int, int] | None = None

    @classmethod
    def from_script(cls, script: Script, **kwargs: Any) -> ScriptedChatModel:
        if callable(script):
            return cls(messages=iter(()), responder=script, prompts=[], stages=[], **kwargs)
        return cls(messages=iter(list(script)), prompts=[], stages=[], **kwargs)

    @classmethod
    def from_stages(cls, replies: dict[str, Any], **kwargs: Any) -> ScriptedChatModel:
        """Answer by pipeline stage (the ``hy_memory_stage`` run metadata).

        Each value is a reply (a str, or a dict dumped as JSON), a function of the
        prompt messages, or a list of such replies consumed in order (the last one
        repeats). A stage without an entry gets ``"{}"``.
        """
        return cls(messages=iter(()), stage_replies=dict(replies), prompts=[], stages=[], **kwargs)

    def _stage_reply(self, stage: str, messages: list[BaseMessage]) -> str | AIMessage:
        assert self.stage_replies is not None
        reply = self.stage_replies.get(stage, "{}")
        if isinstance(reply, list):
            reply = reply.pop(0) if len(reply) > 1 else reply[0]
        if callable(reply):
            reply = reply(messages)
        if isinstance(reply, dict):
            reply = json.dumps(reply, ensure_ascii=False)
        return reply

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        metadata = getattr(run_manager, "metadata", None) or {}
        stage = str(metadata.get("hy_memory_stage", ""))
        self.stages.append(stage)
        if self.stage_replies is not None:
            reply = self._stage_reply(stage, list(messages))
        elif self.responder is not None:
            reply = self.responder(list(messages))
        else:
            try:
                reply = next(self.messages)
            except StopIteration as exc:
                raise AssertionError("ScriptedChatModel ran out of scripted replies") from exc
        message = reply if isinstance(reply, AIMessage) else AIMessage(content=reply)
        if self.usage is not None and message.usage_metadata is None:
            prompt_tokens, completion_tokens = self.usage
            message.usage_metadata = {
                "input_tokens": prompt_tokens,
                "output_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            }
        return ChatResult(generations=[ChatGeneration(message=message)])

    @property
    def call_count(self) -> int:
        return len(self.prompts)


class RaisingChatModel(ScriptedChatModel):
    """A chat model that raises ``AssertionError`` whenever it is called."""

    @classmethod
    def create(cls) -> RaisingChatModel:
        return cls(messages=iter(()), prompts=[], stages=[])

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.prompts.append(list(messages))
        raise AssertionError("this chat model must not be called on this path")
