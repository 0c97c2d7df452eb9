"""HyMemoryRetriever: memories as LangChain documents, zero LLM calls."""

from __future__ import annotations

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
