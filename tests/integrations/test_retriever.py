"""HyMemoryRetriever: memories as LangChain documents, zero LLM calls."""

from __future__ import annotations

import pytest

from hy_memory_langgraph.errors import ForeignUserError, MissingContextError
from hy_memory_langgraph.integrations import HyMemoryRetriever


def test_chat_retriever_returns_documents(make_client, raising_model) -> None:
    client = make_client(mode="pro", llm=raising_model)
    client.context.chat_repo.create("u1", "The user's cat is called Miso", request_id="seed")
    client.context.chat_repo.create("u2", "The user's cat is called Tom", request_id="seed")
    docs = HyMemoryRetriever(client=client, user_id="u1", k=2).invoke("cat name")
    assert [d.page_content for d in docs] == ["The user's cat is called Miso"]
    assert docs[0].metadata["user_id"] == "u1" and docs[0].id and raising_model.call_count == 0


async def test_working_retriever_tags_layers(make_client) -> None:
    client = make_client(mode="lite")
    trace = [{"role": "user", "content": "Export the Q3 sales sheet to PDF"},
             {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
              "function": {"name": "export_pdf", "arguments": "{\"path\": \"sales_q3.xlsx\"}"}}]},
             {"role": "tool", "tool_call_id": "c1", "content": "saved sales_q3.pdf"}]
    client.add(trace, scene="working", user_id="u1")
    docs = await HyMemoryRetriever(client=client, user_id="u1", scene="working").ainvoke("Q3 sales PDF")
    assert docs and docs[0].metadata["layer"] == "fact" and "sales_q3" in docs[0].page_content


def _two_users(client) -> None:
    client.add("My cat is called Miso", user_id="alice")
    client.add("My cat is called Tiger", user_id="bob")


def test_a_retriever_built_for_one_user_serves_only_that_user(make_client) -> None:
    client = make_client(mode="lite")
    _two_users(client)
    retriever = HyMemoryRetriever(client=client, user_id="alice", k=1)
    assert retriever.invoke("cat name")[0].page_content == "My cat is called Miso"
    alice = {"configurable": {"user_id": "alice"}}
    assert retriever.invoke("cat name", config=alice)[0].page_content == "My cat is called Miso"
    with pytest.raises(ForeignUserError, match="built for user 'alice' but this run names user 'bob'"):
        retriever.invoke("cat name", config={"configurable": {"user_id": "bob"}})
    # a call may name its own user; it still has to agree with the run
    assert retriever.invoke("cat name", user_id="bob")[0].page_content == "My cat is called Tiger"
    with pytest.raises(ForeignUserError):
        retriever.invoke("cat name", config=alice, user_id="bob")


async def test_a_retriever_without_a_user_reads_the_run_or_refuses(make_client) -> None:
    client = make_client(mode="lite")
    _two_users(client)
    retriever = HyMemoryRetriever(client=client, k=1)
    docs = await retriever.ainvoke("cat name", config={"configurable": {"user_id": "bob"}})
    assert [d.page_content for d in docs] == ["My cat is called Tiger"]
    with pytest.raises(MissingContextError, match="user_id"):
        retriever.invoke("cat name")


def test_a_retriever_inside_a_graph_reads_the_runtime_context(make_client) -> None:
    from dataclasses import dataclass

    from langgraph.graph import END, START, MessagesState, StateGraph

    @dataclass
    class Who:
        user_id: str

    client = make_client(mode="lite")
    _two_users(client)
    retriever = HyMemoryRetriever(client=client, k=1)

    def lookup(state: MessagesState) -> dict:
        docs = retriever.invoke(state["messages"][-1].content)
        return {"messages": [{"role": "assistant", "content": docs[0].page_content}]}

    builder = StateGraph(MessagesState, context_schema=Who)
    builder.add_node("lookup", lookup)
    builder.add_edge(START, "lookup")
    builder.add_edge("lookup", END)
    out = builder.compile().invoke({"messages": [{"role": "user", "content": "cat name"}]},
                                   context=Who(user_id="bob"))
    assert out["messages"][-1].content == "My cat is called Tiger"


# ------------------------------------------------------ the vector-store retriever's conventions
def _four(client) -> None:
    for text in ("My cat is called Miso", "Miso likes tuna", "My cat sleeps on the sofa",
                 "My cat is grey"):
        client.add(text, user_id="u1")


async def test_search_kwargs_k_is_honoured_sync_async_and_batched(make_client) -> None:
    client = make_client(mode="lite")
    _four(client)
    retriever = HyMemoryRetriever(client=client, user_id="u1", search_kwargs={"k": 1})
    assert len(retriever.invoke("my cat")) == 1
    assert len(await retriever.ainvoke("my cat")) == 1
    assert [len(d) for d in retriever.batch(["my cat", "tuna"])] == [1, 1]
    assert [len(d) for d in await retriever.abatch(["my cat", "tuna"])] == [1, 1]
    plain = HyMemoryRetriever(client=client, user_id="u1")
    assert len(plain.invoke("my cat")) == 4
    assert len(plain.invoke("my cat", search_kwargs={"k": 2})) == 2  # one call's search_kwargs
    assert len(await plain.ainvoke("my cat", search_kwargs={"k": 3})) == 3
    assert len(retriever.invoke("my cat", k=2)) == 2  # a call beats the constructor


def test_a_score_threshold_drops_weak_hits(make_client) -> None:
    client = make_client(mode="lite")
    _four(client)
    everything = HyMemoryRetriever(client=client, user_id="u1").invoke("cat tuna")
    cut = sorted(d.metadata["score"] for d in everything)[-2]
    strict = HyMemoryRetriever(client=client, user_id="u1", search_type="similarity_score_threshold",
                               search_kwargs={"score_threshold": cut})
    kept = strict.invoke("cat tuna")
    assert 1 <= len(kept) < len(everything) and all(d.metadata["score"] >= cut for d in kept)


@pytest.mark.parametrize(("fields", "message"), [
    ({"search_kwargs": {"fetch_k": 20}}, "fetch_k"),
    ({"search_kwargs": {"filter": {"a": 1}}}, "filter"),
    ({"search_type": "mmr"}, "mmr"),
    ({"search_type": "similarity_score_threshold"}, "score_threshold"),
])
def test_search_options_the_memory_does_not_take_are_refused(make_client, fields, message) -> None:
    from hy_memory_langgraph.errors import InvalidInputError
    client = make_client(mode="lite")
    with pytest.raises(InvalidInputError, match=message):
        HyMemoryRetriever(client=client, user_id="u1", **fields).invoke("my cat")
