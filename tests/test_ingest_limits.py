"""Bounded ingest cost: the message-size cap, linear-time redaction, model windows, query cache."""

from __future__ import annotations

import base64
import random

import pytest
from cpu_time import cpu_seconds
from langchain_openai import OpenAIEmbeddings

from hy_memory_langgraph import redact
from hy_memory_langgraph.messages.compression import cap_message_bytes, cut_marker
from hy_memory_langgraph.messages.types import Msg, ToolCall
from hy_memory_langgraph.models import BoundedEmbeddings
from hy_memory_langgraph.models.bounded import (
    DEFAULT_INPUT_BYTES,
    OPENAI_INPUT_BYTES,
    input_bytes_limit,
)
from hy_memory_langgraph.models.embeddings import WINDOW_JOIN, head_tail_bytes
from hy_memory_langgraph.testing import HashingEmbeddings

MB = 1_000_000


class Recording(HashingEmbeddings):
    """Hashing embeddings that keep every text they were given."""

    def __init__(self) -> None:
        super().__init__(dims=64)
        self.documents: list[str] = []
        self.queries: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents += texts
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return super().embed_query(text)


# --------------------------------------------------------------------------- message cap


def test_cut_marker_is_visible_and_grouped() -> None:
    assert cut_marker(4_200_000) == "\n…[cut 4,200,000 bytes]…\n"


def test_a_long_message_keeps_head_and_tail_within_the_cap() -> None:
    text = "HEAD " + "é" * 800_000 + " TAIL"  # 1.6 MB, two bytes per é
    [msg] = cap_message_bytes([Msg(role="user", content=text)], MB)
    data = msg.content.encode("utf-8")
    assert len(data) <= MB
    assert msg.content.startswith("HEAD ") and msg.content.endswith(" TAIL")
    assert "…[cut 6" in msg.content  # about 600,000 bytes left out
    data.decode("utf-8")  # never a broken character


def test_small_messages_are_the_same_objects() -> None:
    msgs = [Msg(role="user", content="short"), Msg(role="assistant", content="x" * 1000)]
    assert all(a is b for a, b in zip(cap_message_bytes(msgs, 2048), msgs, strict=True))


def test_tool_call_arguments_are_capped_too() -> None:
    call = ToolCall(id="c1", name="write_file", arguments={"path": "a.txt", "content": "z" * 50_000},
                    raw_arguments='{"path": "a.txt", "content": "' + "z" * 50_000 + '"}')
    [msg] = cap_message_bytes([Msg(role="assistant", content="", tool_calls=(call,))], 4096)
    capped = msg.tool_calls[0]
    assert capped.arguments["path"] == "a.txt" and "[cut " in capped.arguments["content"]
    assert len(capped.raw_arguments.encode()) <= 4096 and "[cut " in capped.raw_arguments


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])  # the cut is the client's: two stores suffice
def test_client_cuts_a_5_mb_message_and_redacts_before(make_client) -> None:
    client = make_client("lite")
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0L1m2N3"
    text = "My notes start here. " + "lorem ipsum dolor " * 290_000 + f"my key is {secret} end."
    assert len(text.encode()) > 5 * MB
    result, spent = cpu_seconds(lambda: client.add(text, user_id="u1", session_id="big"))
    stored = client.get(result["memory_ids"][0])["content"]
    assert len(stored.encode()) <= MB and "…[cut " in stored
    assert stored.startswith("My notes start here.") and stored.endswith("[REDACTED:openai_key] end.")
    assert secret not in stored
    assert spent < 40  # about 3.5 CPU s here; the README has the figure


def test_the_cap_is_configurable(make_client) -> None:
    client = make_client("lite", max_message_bytes=2048)
    result = client.add("start " + "word " * 2000 + "finish", user_id="u1")
    stored = client.get(result["memory_ids"][0])["content"]
    assert len(stored.encode()) <= 2048 and stored.startswith("start ") and stored.endswith("finish")


# --------------------------------------------------------------------------- redaction


def test_redaction_of_a_megabyte_of_base64_is_fast() -> None:
    blob = base64.urlsafe_b64encode(random.Random(7).randbytes(750_000)).decode()
    _, spent = cpu_seconds(lambda: redact.redact_text(blob))
    assert spent < 5  # about 0.3 CPU s here; the regexes alone took minutes


# --------------------------------------------------------------------------- model windows


def test_head_tail_bytes() -> None:
    assert head_tail_bytes("short", 100) == "short"
    cut = head_tail_bytes("a" * 50 + "b" * 50, 20)
    assert cut == "a" * 10 + WINDOW_JOIN + "b" * 10
    assert head_tail_bytes("é" * 100, 21).encode("utf-8")  # cut on character boundaries


def test_input_limits_per_model() -> None:
    assert input_bytes_limit(HashingEmbeddings()) == DEFAULT_INPUT_BYTES
    assert input_bytes_limit(OpenAIEmbeddings(api_key="k")) == OPENAI_INPUT_BYTES  # type: ignore[arg-type]

    class Declared(HashingEmbeddings):
        max_input_bytes = 100

    assert input_bytes_limit(Declared()) == 100


@pytest.mark.parametrize("backend", ["sqlite"])  # the window is the embedding model's: one store suffices
def test_the_model_never_gets_more_than_its_window(make_client) -> None:
    model = Recording()
    client = make_client("lite", embeddings=model)
    client.add("start " + "token " * 100_000 + "finish", user_id="u1")
    client.search("query " * 10_000, user_ids=["u1"])  # 60 kB: within MEMORY_MAX_QUERY_BYTES, over the window
    assert max(len(t.encode()) for t in model.documents + model.queries) <= DEFAULT_INPUT_BYTES + 8
    assert any(t.startswith("start ") and t.endswith("finish") for t in model.documents)


# --------------------------------------------------------------------------- query cache


def test_the_second_identical_search_makes_no_embedding_call(make_client) -> None:
    model = Recording()
    client = make_client("lite", embeddings=model)
    client.add("I keep my bicycle in the garage.", user_id="u1")
    first = client.search("where is my bicycle?", user_ids=["u1"])
    calls = len(model.queries)
    second = client.search("where is my bicycle?", user_ids=["u1"])
    assert len(model.queries) == calls
    assert [m["memory_id"] for m in first["memories"]] == [m["memory_id"] for m in second["memories"]]
    client.search("where is my car?", user_ids=["u1"])
    assert len(model.queries) == calls + 1
    assert client.store_embeddings.cache_hits >= 1


def test_the_query_cache_is_bounded_and_lru() -> None:
    model = Recording()
    emb = BoundedEmbeddings(model, query_cache_size=2)
    for text in ("a", "b", "a", "c", "a", "b"):
        emb.embed_query(text)
    assert model.queries == ["a", "b", "c", "b"]  # "b" was the least recently used when "c" came
    assert emb.cache_hits == 2 and emb.cache_misses == 4
    off = BoundedEmbeddings(model, query_cache_size=0)
    off.embed_query("z")
    off.embed_query("z")
    assert model.queries[-2:] == ["z", "z"]


async def test_async_queries_use_the_cache() -> None:
    model = Recording()
    emb = BoundedEmbeddings(model)
    assert await emb.aembed_query("tea") == await emb.aembed_query("tea")
    assert model.queries == ["tea"]


@pytest.mark.real_model
def test_e5_reads_at_most_its_window() -> None:
    from hy_memory_langgraph.models import E5Embeddings
    from hy_memory_langgraph.models.embeddings import _SHARED_E5

    emb = E5Embeddings()
    short = "I adopted a grey cat called Miso."
    assert emb.fit(short) == short
    long_text = "The first line says what this is about. " + "filler words here " * 3000 + "The end."
    fitted = emb.fit(long_text)
    with _SHARED_E5.lock:
        count = _SHARED_E5.model().token_count(fitted, False)
    assert count <= 512 and fitted.startswith("The first line") and fitted.endswith("The end.")
    assert WINDOW_JOIN in fitted
