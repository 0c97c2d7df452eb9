"""A tiny OpenAI-compatible HTTP server for tests (loopback only, no network).

Serves, on ``127.0.0.1`` and an ephemeral port, from a background thread:

* ``POST /v1/chat/completions``: non-streaming, and Server-Sent Events when the request
  asks ``"stream": true`` (with a final usage chunk when
  ``stream_options.include_usage`` is set);
* ``POST /v1/embeddings``: ``float`` or ``base64`` encoding;
* ``GET /v1/models``.

The reply text comes from a pluggable ``responder(request_json) -> str``; vectors from
``embedder(text) -> list[float]`` (deterministic hashing by default). A responder may
raise :class:`StubHTTPError` to answer with an OpenAI-style error. Every request is
recorded (:attr:`OpenAIStub.requests`) and every reply carries a realistic ``usage``
counted with :func:`count_tokens`.

Use it as a context manager or through the ``openai_stub`` fixture::

    def test_x(openai_stub):
        openai_stub.responder = lambda req: "hello"
        model = resolve_chat_model(env=openai_stub.env())
        ...
        assert openai_stub.chat_requests[0].prompt_text.endswith("hi")

To share the fixture, ``tests/conftest.py`` adds::

    from openai_stub import openai_stub_fixture  # noqa: F401
"""

from __future__ import annotations

import base64
import json
import os
import re
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from hy_memory_langgraph.prompts import LANGS, available_prompts, load_prompt
from hy_memory_langgraph.testing import HashingEmbeddings

__all__ = [
    "OpenAIStub",
    "StageResponder",
    "StubHTTPError",
    "StubRequest",
    "count_tokens",
    "openai_stub_fixture",
    "stage_of",
]

Responder = Callable[[dict[str, Any]], str]
Embedder = Callable[[str], list[float]]

_TOKEN_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|\w+|[^\w\s]")
_MESSAGE_OVERHEAD = 4  # role/separator tokens per chat message, as real servers count


def count_tokens(text: str) -> int:
    """A deterministic token count: words, punctuation marks and CJK characters."""
    return len(_TOKEN_RE.findall(text))


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    return ""


def _openings() -> list[tuple[str, str]]:
    """``(opening text, prompt name)``: how each packaged prompt's system message begins."""
    out = []
    for name in available_prompts():
        for lang in LANGS:
            system = load_prompt(name, lang).system.strip()
            out.append((system.split("{", 1)[0][:120].strip(), name))
    return sorted(out, key=lambda pair: -len(pair[0]))


_OPENINGS: list[tuple[str, str]] = []


def stage_of(body: dict[str, Any]) -> str:
    """The package prompt a chat request was rendered from (its system message's
    opening), or ``"unknown"``."""
    if not _OPENINGS:
        _OPENINGS.extend(_openings())
    messages = body.get("messages") or []
    system = next((_content_text(m.get("content")) for m in messages if m.get("role") == "system"), "")
    return next((name for opening, name in _OPENINGS if opening and system.strip().startswith(opening)),
                "unknown")


class StageResponder:
    """A responder answering each pipeline stage (:func:`stage_of`) in its own schema.

    Args:
        replies: Per prompt name, a reply: a dict (sent as JSON), a string, or a function
            of the request body returning either; a stage without one gets ``{}``.
        delay_s: Seconds each answer takes (a model's latency).

    Attributes:
        stages: The stage of every request answered, in order.
    """

    def __init__(self, replies: dict[str, Any], delay_s: float = 0.0) -> None:
        self.replies = dict(replies)
        self.delay_s = delay_s
        self.stages: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        stage = stage_of(body)
        with self._lock:
            self.stages.append(stage)
        if self.delay_s:
            time.sleep(self.delay_s)
        reply = self.replies.get(stage, {})
        if callable(reply):
            reply = reply(body)
        return reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)

    def count(self, stage: str) -> int:
        with self._lock:
            return self.stages.count(stage)


class StubHTTPError(Exception):
    """Raise from a responder to make the stub answer with an HTTP error.

    Args:
        status: HTTP status (e.g. 400, 429, 500).
        message: The error message placed in the OpenAI-style error body.
    """

    def __init__(self, status: int, message: str = "stub error") -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class StubRequest:
    """One request the stub received.

    Attributes:
        method: ``GET`` or ``POST``.
        path: The URL path, e.g. ``/v1/chat/completions``.
        body: The parsed JSON body (``{}`` for none).
        headers: Request headers (lower-case names).
        usage: The ``usage`` the stub answered with (``None`` on errors).
        tag: What :attr:`OpenAIStub.tagger` returned when the request arrived.
    """

    method: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    usage: dict[str, int] | None = None
    tag: Any = None

    @property
    def prompt_text(self) -> str:
        """All message contents of a chat request joined by newlines."""
        messages = self.body.get("messages") or []
        return "\n".join(_content_text(m.get("content")) for m in messages)


@dataclass
class _Reply:
    status: int
    payload: dict[str, Any] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)


class OpenAIStub:
    """An OpenAI-compatible server on ``127.0.0.1:<ephemeral port>``.

    Args:
        responder: ``request_json -> reply text`` for chat completions.
        embedder: ``text -> vector`` for embeddings.
        embedding_dims: Size of the default hashing embedder's vectors.
        tagger: Called as each request arrives; its value is kept as ``StubRequest.tag``
            (a benchmark labels requests with the write in progress).

    Example:
        >>> with OpenAIStub(responder=lambda req: "pong") as stub:
        ...     stub.base_url.startswith("http://127.0.0.1:")
        True
    """

    def __init__(
        self,
        responder: Responder | None = None,
        embedder: Embedder | None = None,
        embedding_dims: int = 16,
        tagger: Callable[[], Any] | None = None,
    ) -> None:
        self.responder: Responder = responder or (lambda request: "stub reply")
        self.embedder: Embedder = embedder or HashingEmbeddings(dims=embedding_dims).embed_query
        self.tagger = tagger
        self.requests: list[StubRequest] = []
        self._lock = threading.Lock()
        self._counter = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> OpenAIStub:
        """Bind an ephemeral loopback port and serve from a daemon thread."""
        if self._server is not None:
            return self
        server = _Server(("127.0.0.1", 0), _make_handler(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05},
            name="openai-stub", daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ accessors

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("OpenAIStub is not running; use it as a context manager")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, the value for ``OPENAI_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def env(self, **extra: str) -> dict[str, str]:
        """Variables that point ``resolve_chat_model``/``resolve_embeddings`` here."""
        return {"OPENAI_API_KEY": "test", "OPENAI_BASE_URL": self.base_url, **extra}

    def _matching(self, path: str) -> list[StubRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    @property
    def chat_requests(self) -> list[StubRequest]:
        return self._matching("/v1/chat/completions")

    @property
    def embedding_requests(self) -> list[StubRequest]:
        return self._matching("/v1/embeddings")

    def _record(self, request: StubRequest) -> int:
        if self.tagger is not None:
            request.tag = self.tagger()
        with self._lock:
            self.requests.append(request)
            self._counter += 1
            return self._counter

    # ------------------------------------------------------------------ endpoints

    def _chat(self, request: StubRequest, number: int) -> _Reply:
        body = request.body
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            raise StubHTTPError(400, "'messages' must be a non-empty list")
        text = self.responder(body)
        if not isinstance(text, str):
            raise StubHTTPError(500, f"stub responder returned {type(text).__name__}, not str")
        prompt_tokens = sum(
            _MESSAGE_OVERHEAD + count_tokens(_content_text(m.get("content")))
            for m in body["messages"]
        ) + 3
        completion_tokens = max(1, count_tokens(text))
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        request.usage = usage
        model = str(body.get("model") or "stub-model")
        common = {"id": f"chatcmpl-stub-{number}", "created": int(time.time()), "model": model,
                  "system_fingerprint": "stub"}
        if not body.get("stream"):
            return _Reply(200, {
                **common,
                "object": "chat.completion",
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }],
                "usage": usage,
            })
        chunk = {**common, "object": "chat.completion.chunk"}
        pieces = re.findall(r"\S+\s*|\s+", text) or [""]
        events = [{**chunk, "choices": [{"index": 0, "delta": {"role": "assistant",
                                                                "content": ""},
                                         "logprobs": None, "finish_reason": None}]}]
        events += [{**chunk, "choices": [{"index": 0, "delta": {"content": piece},
                                          "logprobs": None, "finish_reason": None}]}
                   for piece in pieces]
        events.append({**chunk, "choices": [{"index": 0, "delta": {}, "logprobs": None,
                                             "finish_reason": "stop"}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**chunk, "choices": [], "usage": usage})
        return _Reply(200, events=events)

    def _embeddings(self, request: StubRequest) -> _Reply:
        body = request.body
        raw = body.get("input")
        if isinstance(raw, str):
            texts = [raw]
        elif isinstance(raw, list) and raw and all(isinstance(t, str) for t in raw):
            texts = list(raw)
        else:
            # Token-id input means the client tokenized locally (tiktoken): refuse, so a
            # test notices that a tokenizer (and maybe its download) was involved.
            raise StubHTTPError(400, "the stub accepts only text input (string or list of strings)")
        data = []
        for index, text in enumerate(texts):
            vector = [float(x) for x in self.embedder(text)]
            if body.get("encoding_format") == "base64":
                packed = struct.pack(f"<{len(vector)}f", *vector)
                embedding: Any = base64.b64encode(packed).decode("ascii")
            else:
                embedding = vector
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = sum(max(1, count_tokens(t)) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        request.usage = usage
        return _Reply(200, {"object": "list", "data": data,
                            "model": str(body.get("model") or "stub-embedding"),
                            "usage": usage})

    def _models(self) -> _Reply:
        return _Reply(200, {"object": "list", "data": [
            {"id": "stub-model", "object": "model", "created": 0, "owned_by": "stub"},
        ]})

    def handle(self, request: StubRequest) -> _Reply:
        """Route one request (called from the server threads)."""
        number = self._record(request)
        try:
            if request.method == "POST" and request.path == "/v1/chat/completions":
                return self._chat(request, number)
            if request.method == "POST" and request.path == "/v1/embeddings":
                return self._embeddings(request)
            if request.method == "GET" and request.path == "/v1/models":
                return self._models()
            raise StubHTTPError(404, f"no route {request.method} {request.path}")
        except StubHTTPError as exc:
            kind = "invalid_request_error" if exc.status < 500 else "server_error"
            return _Reply(exc.status, {"error": {"message": exc.message, "type": kind,
                                                 "param": None, "code": None}})


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-reply (a killed worker process) is not an error."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def _make_handler(stub: OpenAIStub) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return  # keep test output clean

        def _read_body(self) -> dict[str, Any] | None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not raw:
                return {}
            try:
                parsed = json.loads(raw)
            except ValueError:
                return None
            return parsed if isinstance(parsed, dict) else None

        def _send_json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

        def _send_events(self, events: list[dict[str, Any]]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in [*map(json.dumps, events), "[DONE]"]:
                self.wfile.write(f"data: {event}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True

        def _dispatch(self, method: str) -> None:
            body = self._read_body() if method == "POST" else {}
            path = self.path.split("?", 1)[0]
            if body is None:
                self._send_json(400, {"error": {"message": "body is not a JSON object",
                                                "type": "invalid_request_error"}})
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply = stub.handle(StubRequest(method, path, body, headers))
            if reply.events:
                self._send_events(reply.events)
            else:
                self._send_json(reply.status, reply.payload or {})

        def do_POST(self) -> None:
            self._dispatch("POST")

        def do_GET(self) -> None:
            self._dispatch("GET")

    return _Handler


@pytest.fixture(name="openai_stub")
def openai_stub_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStub]:
    """A running :class:`OpenAIStub`; loopback traffic bypasses any HTTP proxy."""
    for name in ("NO_PROXY", "no_proxy"):
        hosts = [h for h in os.environ.get(name, "").split(",") if h.strip()]
        monkeypatch.setenv(name, ",".join([*hosts, "127.0.0.1", "localhost"]))
    with OpenAIStub() as stub:
        yield stub
