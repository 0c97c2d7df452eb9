"""The real ChatOpenAI / OpenAIEmbeddings, resolved from the environment, against the
local OpenAI-compatible stub: replies, token accounting, request bodies, no network."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any, TypedDict

import numpy as np
import openai
import pytest
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from langgraph.graph import END, START, StateGraph
from openai_stub import (  # the fixture until tests/conftest.py imports it
    OpenAIStub,
    StubHTTPError,
    count_tokens,
    openai_stub_fixture,  # noqa: F401
)

from hy_memory_langgraph.errors import LLMCallError
from hy_memory_langgraph.models import (
    LLMGateway,
    embedding_dims,
    resolve_chat_model,
    resolve_embeddings,
)

_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Fail any connection or tokenizer load that would need the outside network."""
    attempts: list[Any] = []
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else None
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in _LOOPBACK:
            attempts.append(address)
            raise OSError(f"network disabled in this test: {address!r}")
        return real_connect(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name not in _LOOPBACK:
            attempts.append(name)
            raise OSError(f"name resolution disabled in this test: {name!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    try:
        import tiktoken
    except ImportError:  # pragma: no cover - tiktoken is optional
        pass
    else:
        def no_tokenizer(*args: Any, **kwargs: Any) -> Any:
            attempts.append(("tiktoken", args))
            raise AssertionError("tiktoken must not be used (it may download encodings)")

        monkeypatch.setattr(tiktoken, "get_encoding", no_tokenizer)
        monkeypatch.setattr(tiktoken, "encoding_for_model", no_tokenizer)
    yield attempts
    assert attempts == [], f"outside network/tokenizer was needed: {attempts}"


def _echo(request: dict[str, Any]) -> str:
    last = request["messages"][-1]["content"]
    return f"pong: {last}"


# --------------------------------------------------------------------------- chat


def test_gateway_with_real_chat_openai(openai_stub: OpenAIStub,
                                       loopback_only: list[Any]) -> None:
    openai_stub.responder = _echo
    model = resolve_chat_model(env=openai_stub.env(HY_MEMORY_LLM_MODEL="qwen-stub"))
    assert isinstance(model, ChatOpenAI)
    gateway = LLMGateway(model)

    text = gateway.invoke("judge", "Is fixing a failing pytest a coding task?",
                          system="Classify the conversation.")

    assert text == "pong: Is fixing a failing pytest a coding task?"
    [request] = openai_stub.chat_requests
    assert request.body["model"] == "qwen-stub"
    assert request.body["temperature"] == 0
    assert not request.body.get("stream")
    assert request.headers["authorization"] == "Bearer test"
    assert request.body["messages"] == [
        {"role": "system", "content": "Classify the conversation."},
        {"role": "user", "content": "Is fixing a failing pytest a coding task?"},
    ]
    assert "failing pytest" in request.prompt_text
    assert request.usage is not None
    assert gateway.usage.snapshot() == {"judge": {
        "calls": 1,
        "prompt_tokens": request.usage["prompt_tokens"],
        "completion_tokens": request.usage["completion_tokens"],
        "failures": 0,
        "estimated": False,
    }}
    assert request.usage["completion_tokens"] == count_tokens(text)


async def test_async_gateway_with_real_chat_openai(openai_stub: OpenAIStub,
                                                   loopback_only: list[Any]) -> None:
    openai_stub.responder = lambda req: "结果：coding"
    gateway = LLMGateway(resolve_chat_model(env=openai_stub.env()))  # type: ignore[arg-type]
    assert await gateway.ainvoke("extract", "请总结这次修改") == "结果：coding"
    assert await gateway.ainvoke("extract", "again") == "结果：coding"
    usage = gateway.usage.snapshot()["extract"]
    recorded = [r.usage for r in openai_stub.chat_requests]
    assert usage["calls"] == 2
    assert usage["prompt_tokens"] == sum(u["prompt_tokens"] for u in recorded if u)
    assert usage["completion_tokens"] == sum(u["completion_tokens"] for u in recorded if u)
    assert usage["estimated"] is False
    assert openai_stub.chat_requests[0].body["model"] == "gpt-4o-mini"


def test_client_error_is_recorded_as_failure(openai_stub: OpenAIStub,
                                             loopback_only: list[Any]) -> None:
    def reject(request: dict[str, Any]) -> str:
        raise StubHTTPError(400, "context length exceeded")

    openai_stub.responder = reject
    gateway = LLMGateway(resolve_chat_model(env=openai_stub.env()))  # type: ignore[arg-type]
    with pytest.raises(LLMCallError, match="context length exceeded") as info:
        gateway.invoke("reconcile", "p")
    assert isinstance(info.value.__cause__, openai.BadRequestError)
    assert len(openai_stub.chat_requests) == 1  # 4xx is not retried
    assert gateway.usage.snapshot()["reconcile"]["failures"] == 1


def test_server_error_is_retried_once(openai_stub: OpenAIStub,
                                      loopback_only: list[Any]) -> None:
    def explode(request: dict[str, Any]) -> str:
        raise StubHTTPError(500, "overloaded")

    openai_stub.responder = explode
    gateway = LLMGateway(resolve_chat_model(env=openai_stub.env()))  # type: ignore[arg-type]
    with pytest.raises(LLMCallError) as info:
        gateway.invoke("judge", "p")
    assert isinstance(info.value.__cause__, openai.InternalServerError)
    assert len(openai_stub.chat_requests) == 2  # max_retries=1
    assert gateway.usage.snapshot()["judge"] == {
        "calls": 1, "prompt_tokens": 0, "completion_tokens": 0,
        "failures": 1, "estimated": False,
    }


class _State(TypedDict):
    reply: str


def test_gateway_inside_a_streamed_graph_stays_internal(openai_stub: OpenAIStub,
                                                        loopback_only: list[Any]) -> None:
    openai_stub.responder = lambda req: "internal memory reply"
    gateway = LLMGateway(resolve_chat_model(env=openai_stub.env()))  # type: ignore[arg-type]

    def node(state: _State) -> dict[str, str]:
        return {"reply": gateway.invoke("judge", "route me")}

    builder = StateGraph(_State)
    builder.add_node("memory", node)
    builder.add_edge(START, "memory")
    builder.add_edge("memory", END)
    graph = builder.compile()

    streamed = list(graph.stream({"reply": ""}, stream_mode=["messages", "values"]))

    assert [kind for kind, _ in streamed if kind == "messages"] == []
    assert streamed[-1] == ("values", {"reply": "internal memory reply"})
    assert not openai_stub.chat_requests[0].body.get("stream")
    assert gateway.usage.snapshot()["judge"]["estimated"] is False


def test_stub_streams_sse_with_usage(openai_stub: OpenAIStub,
                                     loopback_only: list[Any]) -> None:
    openai_stub.responder = lambda req: "streamed reply in pieces"
    model = ChatOpenAI(model="m", base_url=openai_stub.base_url, api_key="test",  # type: ignore[arg-type]
                       stream_usage=True, max_retries=0)
    chunks = list(model.stream("hello there"))
    text = "".join(str(c.content) for c in chunks)
    assert text == "streamed reply in pieces"
    assert len([c for c in chunks if c.content]) >= 4
    [request] = openai_stub.chat_requests
    assert request.body["stream"] is True
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk  # type: ignore[assignment]
    assert total.usage_metadata is not None
    assert total.usage_metadata["output_tokens"] == request.usage["completion_tokens"]  # type: ignore[index]


# --------------------------------------------------------------------------- embeddings


def test_openai_embeddings_against_the_stub(openai_stub: OpenAIStub,
                                            loopback_only: list[Any]) -> None:
    emb = resolve_embeddings(env=openai_stub.env())
    assert isinstance(emb, OpenAIEmbeddings)

    docs = emb.embed_documents(["My cat is named Whiskers", "我的猫叫什么名字"])
    query = emb.embed_query("cat name")

    expected = [openai_stub.embedder(t) for t in
                ["My cat is named Whiskers", "我的猫叫什么名字", "cat name"]]
    assert np.allclose(docs, expected[:2], atol=1e-6)
    assert np.allclose(query, expected[2], atol=1e-6)
    requests = openai_stub.embedding_requests
    assert requests[0].body["input"] == ["My cat is named Whiskers", "我的猫叫什么名字"]
    assert requests[0].body["model"] == "text-embedding-3-small"
    assert all(isinstance(t, str) for r in requests for t in r.body["input"])
    # The size is probed from the server (custom base URL: no built-in table).
    assert embedding_dims(emb) == 16


async def test_openai_embeddings_async(openai_stub: OpenAIStub,
                                       loopback_only: list[Any]) -> None:
    emb = resolve_embeddings(env=openai_stub.env(HY_MEMORY_EMBEDDING_MODEL="bge-m3"))
    vectors = await emb.aembed_documents(["a", "b", "c"])
    assert len(vectors) == 3 and len(vectors[0]) == 16
    assert openai_stub.embedding_requests[0].body["model"] == "bge-m3"


# --------------------------------------------------------------------------- the stub itself


def _post(url: str, payload: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=payload,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        body = json.loads(exc.read())
        exc.close()
        return exc.code, body


def test_stub_http_surface(openai_stub: OpenAIStub) -> None:
    base = openai_stub.base_url
    status, body = _post(f"{base}/nowhere", b"{}")
    assert status == 404 and "no route" in body["error"]["message"]
    status, body = _post(f"{base}/chat/completions", b"not json")
    assert status == 400
    status, body = _post(f"{base}/chat/completions", b'{"messages": []}')
    assert status == 400
    status, body = _post(f"{base}/embeddings", b'{"input": [[1, 2, 3]]}')
    assert status == 400 and "text input" in body["error"]["message"]
    status, body = _post(f"{base}/embeddings",
                         b'{"input": "x", "encoding_format": "base64"}')
    assert status == 200
    decoded = np.frombuffer(__import__("base64").b64decode(body["data"][0]["embedding"]),
                            dtype="<f4")
    assert np.allclose(decoded, openai_stub.embedder("x"), atol=1e-6)
    with urllib.request.urlopen(f"{base}/models", timeout=60) as response:
        assert json.loads(response.read())["data"][0]["id"] == "stub-model"
    status, body = _post(f"{base}/chat/completions",
                         b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}')
    assert status == 200
    assert body["choices"][0]["message"]["content"] == "stub reply"
    usage = body["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert len(openai_stub.requests) == 6  # the unparsable body is answered, not recorded


def test_stub_context_manager_releases_the_port() -> None:
    with OpenAIStub(responder=lambda req: "x") as stub:
        port = stub.port
        assert stub.env()["OPENAI_BASE_URL"] == f"http://127.0.0.1:{port}/v1"
    with pytest.raises(RuntimeError, match="not running"):
        _ = stub.port
    probe = socket.socket()
    try:
        probe.bind(("127.0.0.1", port))
    finally:
        probe.close()


def test_count_tokens() -> None:
    assert count_tokens("Hello, world!") == 4
    assert count_tokens("我的猫") == 3
    assert count_tokens("") == 0
