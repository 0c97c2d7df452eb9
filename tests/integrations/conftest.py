"""Fixtures of the integration tests: a scripted model that answers from its prompt."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from hy_memory_langgraph.testing import ScriptedChatModel


def system_text(messages: list[BaseMessage]) -> str:
    """Every system message of one prompt, joined."""
    return "\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))


def cat_answer(messages: list[BaseMessage]) -> AIMessage:
    """Answers the cat question from the memory block only; acknowledges anything else."""
    if "cat" in str(messages[-1].content).lower() and "?" in str(messages[-1].content):
        known = "Miso" in system_text(messages)
        return AIMessage(content="Your cat is called Miso." if known else "I don't know your cat's name.")
    return AIMessage(content="Noted!")


@pytest.fixture
def cat_model() -> Callable[[], ScriptedChatModel]:
    return lambda: ScriptedChatModel.from_script(cat_answer)
