"""Chat-model and mode resolution.

See :mod:`hy_memory_langgraph.models` for the resolution order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final, Literal

from hy_memory_langgraph.config.parsing import env_value
from hy_memory_langgraph.errors import ConfigError, InvalidInputError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

Mode = Literal["lite", "pro"]

DEFAULT_LLM_MODEL: Final = "gpt-4o-mini"


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
    if llm is not None:
        # LangChain's chat-model classes load only when a model is given (about 0.1 s)
        from langchain_core.language_models import BaseChatModel

        if isinstance(llm, BaseChatModel):
            return llm
        hint = (
            " To choose a model by name, set HY_MEMORY_LLM_MODEL (with OPENAI_API_KEY)."
            if isinstance(llm, str)
            else ""
        )
        raise InvalidInputError(
            f"llm={llm!r} is invalid: expected a LangChain BaseChatModel "
            f"(e.g. ChatOpenAI(...)) or None.{hint}"
        )
    api_key = env_value(env, "OPENAI_API_KEY")
    if not api_key:
        return None
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=env_value(env, "HY_MEMORY_LLM_MODEL") or DEFAULT_LLM_MODEL,
        base_url=env_value(env, "OPENAI_BASE_URL"),
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
