"""Several queries in one embedding call: the helper, the caches, and a pro chat add."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage
from langchain_openai import OpenAIEmbeddings

from hy_memory_langgraph.embedding_batch import embed_queries, embeds_queries_as_documents
from hy_memory_langgraph.models import BoundedEmbeddings
from hy_memory_langgraph.testing import HashingEmbeddings, ScriptedChatModel


class Batching(HashingEmbeddings):
    """Counts model calls; embeds queries with a prefix, as e5 does."""

    def __init__(self) -> None:
        super().__init__(dims=64)
        self.calls: list[tuple[str, int]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(("documents", len(texts)))
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.calls.append(("query", 1))
        return super().embed_query("q: " + text)

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(("queries", len(texts)))
        return [HashingEmbeddings.embed_query(self, "q: " + t) for t in texts]


class Prefixing(HashingEmbeddings):
    """Changes embed_query below a class that batches: must keep being called."""

    def embed_query(self, text: str) -> list[float]:
        return super().embed_query("query: " + text)


def test_a_batching_model_embeds_all_queries_in_one_call_with_the_same_vectors() -> None:
    model = Batching()
    vectors = embed_queries(model, ["tea", "coffee", "tea"])
    assert model.calls == [("queries", 3)]
    assert vectors == [model.embed_query(t) for t in ("tea", "coffee", "tea")]


def test_a_subclass_that_changes_embed_query_is_never_bypassed() -> None:
    model = Prefixing()
    assert embed_queries(model, ["tea"]) == [HashingEmbeddings().embed_query("query: tea")]


def test_the_bounded_cache_fills_in_one_call_and_answers_later_queries() -> None:
    model = Batching()
    bounded = BoundedEmbeddings(model)
    first = bounded.embed_queries(["a b", "c d"])
    assert model.calls == [("queries", 2)]
    assert bounded.embed_query("c d") == first[1] and bounded.embed_queries(["a b"]) == [first[0]]
    assert model.calls == [("queries", 2)]  # both answered from the cache


def test_openai_embeddings_count_as_embedding_queries_like_documents() -> None:
    model = OpenAIEmbeddings(model="text-embedding-3-small", api_key="sk-test", base_url="http://127.0.0.1:9")
    assert embeds_queries_as_documents(model) and not embeds_queries_as_documents(HashingEmbeddings())


def _four_facts(messages: list[Any]) -> dict[str, Any]:
    turn = "b" if "Oslo" in str(messages[-1].content) else "a"
    return {"facts": [{"content": f"The user fact {turn}{i}: likes {kind}", "subject": "user", "owner": "user"}
                      for i, kind in enumerate(["tea", "Oslo", "chess", "jazz"])]}


def test_a_pro_chat_add_makes_one_query_call_for_all_its_facts(make_client) -> None:
    model = Batching()
    llm = ScriptedChatModel.from_stages({
        "chat_extract": _four_facts,
        "chat_reconcile": {"operations": [{"fact": f"n{i}", "op": "ADD", "target": None} for i in range(4)]}})
    client = make_client("pro", llm, embeddings=model)
    client.add("warm up: I like tea", user_id="u1")
    model.calls.clear()
    result = client.add("I like tea, Oslo, chess and jazz", user_id="u1")
    assert result["ops_summary"]["ADD"] == 4
    # e5-like models: one call for the four neighbour searches, one for the four documents
    assert model.calls == [("queries", 4), ("documents", 4)]


def _respond(request: dict[str, Any]) -> str:
    system = str(request["messages"][0]["content"])
    if '"operations"' in system:
        return json.dumps({"operations": [{"fact": f"n{i}", "op": "ADD", "target": None} for i in range(3)]})
    if '"facts"' in system:
        user = str(request["messages"][-1]["content"])
        tag = "b" if "second" in user else "a"
        return json.dumps({"facts": [{"content": f"The user fact {tag}{i}", "subject": "user", "owner": "user"}
                                     for i in range(3)]})
    return "{}"


def _openai_client(openai_stub: Any, make_client: Any, monkeypatch: Any, responder: Any) -> Any:
    """A client whose chat model and embeddings are the OpenAI stub's (from the environment)."""
    openai_stub.responder = responder
    for name, value in openai_stub.env().items():
        monkeypatch.setenv(name, value)
    return make_client(mode=None, embeddings=None)


def _trace(user: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": user},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "export_pdf", "arguments": '{"path": "report.docx"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "export_pdf", "content": '{"ok": true}'}]


def test_with_openai_embeddings_a_pro_chat_add_is_one_embedding_request(openai_stub, make_client,
                                                                         monkeypatch) -> None:
    client = _openai_client(openai_stub, make_client, monkeypatch, _respond)
    client.add("the first conversation", user_id="u1")
    before = len(openai_stub.embedding_requests)
    result = client.add("the second conversation", user_id="u1")
    assert result["ops_summary"]["ADD"] == 3
    requests = openai_stub.embedding_requests[before:]
    assert len(requests) == 1, [r.body for r in requests]
    assert sorted(requests[0].body["input"]) == [f"The user fact b{i}" for i in range(3)]


def test_the_embedding_cache_batches_and_keeps_queries_under_query_keys(tmp_path) -> None:
    from hy_memory_langgraph.models import CachedEmbeddings
    from hy_memory_langgraph.store import HyMemoryKVStore

    model = Batching()
    with HyMemoryKVStore(tmp_path / "cache.db") as kv:
        cache = CachedEmbeddings(model, kv)
        first = cache.embed_queries(["tea", "coffee"])
        again = cache.embed_queries(["coffee", "milk"])
        assert model.calls == [("queries", 2), ("queries", 1)]  # only "milk" was new
        assert again[0] == first[1] == cache.embed_query("coffee")
        assert all(":q:" in key for key in kv.yield_keys())


def _respond_working(request: dict[str, Any]) -> str:
    system = str(request["messages"][0]["content"])
    user = str(request["messages"][-1]["content"])
    if '"experiences"' in system:
        topic = "export" if "please export" in user else "import"
        return json.dumps({
            "experiences": [{"task": f"{topic} the quarterly report as PDF", "search_keys": [f"{topic} pdf", "report"],
                             "solution": "File > Export > PDF with notes", "boundary_envs": [], "confidence": 0.8,
                             "files": ["report.docx"]}],
            "fact": {"subject": "report.docx", "statement": f"The user did the {topic} of report.docx.",
                     "files": ["report.docx"], "details": "saved"}})
    return json.dumps({"operations": [{"draft": "d0", "op": "ADD"}], "supersede": [], "reason": "-"})


def test_with_openai_embeddings_a_pro_working_add_is_one_embedding_request(openai_stub, make_client,
                                                                           monkeypatch) -> None:
    """The draft's task (searched, then stored), its search keys and the fact: one request."""
    client = _openai_client(openai_stub, make_client, monkeypatch, _respond_working)

    client.add(_trace("please import the report"), scene="working", user_id="u1")
    before = len(openai_stub.embedding_requests)
    result = client.add(_trace("please export the report"), scene="working", user_id="u1")
    assert result["experience_ids"] and result["fact_ids"]
    requests = openai_stub.embedding_requests[before:]
    assert len(requests) == 1, [r.body for r in requests]
    assert sorted(requests[0].body["input"]) == sorted([
        "export the quarterly report as PDF", "export pdf",
        "report.docx: The user did the export of report.docx."])


def test_a_pro_working_add_with_an_e5_like_model_makes_one_query_and_one_document_call(make_client) -> None:
    """Queries and documents differ (e5): the task is searched, then task, keys and fact are
    stored; the documents come from one prefetch call, not one per store write."""
    model = Batching()
    llm = ScriptedChatModel.from_script(lambda messages: AIMessage(
        content=_respond_working({"messages": [{"content": m.content} for m in messages]})))
    client = make_client("pro", llm, embeddings=model)

    client.add(_trace("please import the report"), scene="working", user_id="u1")
    model.calls.clear()
    result = client.add(_trace("please export the report"), scene="working", user_id="u1")
    assert result["experience_ids"] and result["fact_ids"]
    assert model.calls == [("queries", 1), ("documents", 4)]


def test_prefetched_documents_are_served_once_and_bounded() -> None:
    model = Batching()
    bounded = BoundedEmbeddings(model, query_cache_size=2)
    bounded.prefetch(["q"], ["d1", "d2", "d3"])
    assert model.calls == [("queries", 1), ("documents", 3)]
    model.calls.clear()
    assert bounded.embed_documents(["d2", "d3"]) == model.embed_documents(["d2", "d3"])
    assert model.calls == [("documents", 2)]  # only the comparison call: d2, d3 were served
    model.calls.clear()
    bounded.embed_documents(["d1", "d2"])  # d1 fell out (size 2), d2 was used up
    assert model.calls == [("documents", 2)]


async def test_prefetched_documents_serve_the_async_path_too() -> None:
    model = Batching()
    bounded = BoundedEmbeddings(model)
    bounded.prefetch([], ["d1"])
    model.calls.clear()
    assert await bounded.aembed_documents(["d1"]) == HashingEmbeddings(dims=64).embed_documents(["d1"])
    assert model.calls == []
