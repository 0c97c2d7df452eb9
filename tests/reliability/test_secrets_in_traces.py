"""Secrets never reach a run's callbacks or tracers.

A deployment that traces its LangChain runs (LangSmith through ``LANGSMITH_TRACING``,
any callback handler) records every run's inputs and outputs, our memory graphs' runs and
their nodes' included. The client hands a graph its arguments already redacted, so what
a tracer records is what the memory stores. A recording callback handler stands in for
the tracer, installed the way the environment installs LangSmith's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.context import register_configure_hook

from hy_memory_langgraph import HyMemoryClient
from hy_memory_langgraph.client import WorkflowMemoryService
from hy_memory_langgraph.testing import HashingEmbeddings, ScriptedChatModel
from hy_memory_langgraph.workflow.errors import CredentialsRefusedError
from tests.productivity.support import tool_trace

KEY = "sk-proj-Zq8vN3kLm2Xw9RtY7uP4sA1dF6gH0jKe"
PASSWORD = "Tr0ub4dor&3xyz"
SCOPE_TOKEN = "ghp_" + "a1B2c3D4e5" * 4
NEEDLES = (KEY, "Tr0ub4dor", SCOPE_TOKEN)
SAID = f"my openai key is {KEY} and the vpn password: {PASSWORD}"


class _Tracer(BaseCallbackHandler):
    """Keeps what a tracer would send: every run's inputs, outputs, prompts and errors."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.runs = 0

    def _keep(self, *values: Any) -> None:
        self.kept.append(json.dumps(values, default=repr, ensure_ascii=False))

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.runs += 1
        self._keep(inputs, kwargs.get("metadata"))

    def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
        self._keep(outputs)

    def on_chain_error(self, error: BaseException, **kwargs: Any) -> None:
        self._keep(str(error))

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self._keep([[m.content for m in batch] for batch in messages])

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self._keep(response)


# Installed the way LANGSMITH_TRACING installs LangSmith's tracer: for every run in the
# context (nested ones included), with no ``config`` argument.
_TRACER: ContextVar[_Tracer | None] = ContextVar("hy_test_tracer", default=None)
register_configure_hook(_TRACER, inheritable=True)


@contextmanager
def _tracing() -> Iterator[_Tracer]:
    tracer = _Tracer()
    token = _TRACER.set(tracer)
    try:
        yield tracer
    finally:
        _TRACER.reset(token)


def _traced(call: Callable[[], Any]) -> tuple[str, int]:
    with _tracing() as tracer:
        call()
    return "\n".join(tracer.kept), tracer.runs


def _leaks(text: str) -> list[str]:
    return [needle for needle in NEEDLES if needle in text]


def _client(tmp_path: Path, llm: Any = None) -> HyMemoryClient:
    return HyMemoryClient(data_dir=tmp_path / "d", mode="pro" if llm else "lite", llm=llm,
                          embeddings=HashingEmbeddings())


def _writes(client: HyMemoryClient) -> None:
    scoped = {"workspace_id": f"https://x:{SCOPE_TOKEN}@github.com/org/repo", "branch": "main"}
    client.add([{"role": "user", "content": SAID}], user_id="u1", metadata={"note": SAID})
    client.add(tool_trace(SAID, args={"path": "a.py", "password": PASSWORD}, result=SAID),
               "working", user_id="u1", **scoped)
    client.add(tool_trace(SAID, tool="Edit", args={"file_path": "a.py", "old_string": "x = 1",
                                                   "new_string": f"key = '{KEY}'"}),
               "coding", user_id="u1", **scoped)


def _searches(client: HyMemoryClient) -> None:
    client.search(f"what was {KEY}?", user_ids=["u1"])
    client.search(queries=["the vpn", f"password: {PASSWORD}"], user_ids=["u1"], search_mode="agentic")
    client.search(SAID, scene="working", user_ids=["u1"], workspace_id=f"https://x:{SCOPE_TOKEN}@github.com/org/repo")


@pytest.mark.parametrize("mode", ["lite", "pro"])
def test_a_tracer_records_no_secret_of_writes_and_searches(tmp_path: Path, mode: str) -> None:
    model = ScriptedChatModel.from_stages({}) if mode == "pro" else None
    client = _client(tmp_path, model)
    recorded, runs = _traced(lambda: (_writes(client), _searches(client)))
    client.close()
    assert runs > 20  # the graphs' runs and their nodes' were traced
    assert "[REDACTED:openai_key]" in recorded  # what they stored and searched for is there
    assert _leaks(recorded) == []
    if model is not None:
        assert model.call_count > 0
        assert _leaks(json.dumps([[m.content for m in p] for p in model.prompts], ensure_ascii=False)) == []


async def test_the_async_twins_give_a_tracer_no_secret(tmp_path: Path) -> None:
    client = _client(tmp_path)
    with _tracing() as tracer:
        await client.aadd([{"role": "user", "content": SAID}], user_id="u1")
        await client.asearch(f"password: {PASSWORD}", user_ids=["u1"])
    client.close()
    recorded = "\n".join(tracer.kept)
    assert "[REDACTED:password]" in recorded
    assert _leaks(recorded) == []


def test_a_search_query_is_redacted_before_it_is_embedded(tmp_path: Path) -> None:
    seen: list[str] = []

    class Recording(HashingEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            seen.extend(texts)
            return super().embed_documents(texts)

        def embed_query(self, text: str) -> list[float]:
            seen.append(text)
            return super().embed_query(text)

    client = HyMemoryClient(data_dir=tmp_path / "d", mode="lite", embeddings=Recording())
    client.add(SAID, user_id="u1")
    found = client.search(f"my openai key is {KEY}", user_ids=["u1"])["memories"]
    client.close()
    assert found and "[REDACTED:openai_key]" in found[0]["content"]  # placeholders match placeholders
    assert seen and _leaks("\n".join(seen)) == []


def test_malformed_messages_fail_as_before_with_nothing_traced(tmp_path: Path) -> None:
    client = _client(tmp_path)
    with _tracing() as tracer, pytest.raises(ValueError, match=r"messages\[0\]\.role='robot'"):
        client.add([{"role": "robot", "content": SAID}], user_id="u1")
    client.close()
    assert _leaks("\n".join(tracer.kept)) == []


def test_refused_workflow_credentials_are_never_traced(tmp_path: Path) -> None:
    service = WorkflowMemoryService(tmp_path / "wf")
    said = [{"msgRole": "user", "msgValue": SAID}, {"msgRole": "assistant", "msgValue": "noted"}]
    recorded, _ = _traced(lambda: pytest.raises(CredentialsRefusedError, service.memory_extract, "u1",
                                                msg_list=said, workflow_id="wf-1"))
    assert _leaks(recorded) == []
    recorded, runs = _traced(lambda: service.memory_extract(  # a clean input is traced as before
        "u1", msg_list=[{"msgRole": "user", "msgValue": "I prefer the weekly report"},
                        {"msgRole": "assistant", "msgValue": "noted"}]))
    assert runs > 1 and "weekly report" in recorded


def test_turning_redaction_off_hands_the_graph_the_text_as_given(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_REDACT_SECRETS", "false")
    client = _client(tmp_path)
    recorded, _ = _traced(lambda: client.add(SAID, user_id="u1"))
    client.close()
    assert KEY in recorded


def test_error_messages_quote_no_secret(tmp_path: Path) -> None:
    """Errors quote what was passed and end up in logs and traces: a key passed by mistake
    where an id goes is named by its placeholder."""
    client = _client(tmp_path)
    calls = [lambda: client.add("hi", user_id="u1", session_id=f" {KEY}"),
             lambda: client.add("hi", user_id="u1", scene=f"scene {KEY}"),
             lambda: client.search("tea", user_ids=["u1"], limit=f"password: {PASSWORD}"),
             lambda: client.add([{"role": f"token={SCOPE_TOKEN}", "content": "hi"}], user_id="u1")]
    for call in calls:
        with pytest.raises(ValueError) as info:
            call()
        assert _leaks(str(info.value)) == [] and "[REDACTED:" in str(info.value), str(info.value)
    client.close()
