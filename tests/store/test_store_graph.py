"""HyMemoryStore as the store of a compiled LangGraph StateGraph."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from hy_memory_langgraph.store import HyMemoryStore


@dataclass
class Ctx:
    user_id: str


class State(TypedDict, total=False):
    note: str
    recalled: list[str]


def remember(state: State, runtime: Runtime[Ctx]) -> State:
    assert runtime.store is not None
    namespace = ("memories", runtime.context.user_id)
    count = len(runtime.store.search(namespace, limit=100))
    runtime.store.put(namespace, f"m{count}", {"text": state["note"]})
    return {}


def recall(state: State, runtime: Runtime[Ctx]) -> State:
    assert runtime.store is not None
    hits = runtime.store.search(("memories", runtime.context.user_id), query=state["note"], limit=2)
    return {"recalled": [hit.value["text"] for hit in hits]}


async def arecall(state: State, runtime: Runtime[Ctx]) -> State:
    assert runtime.store is not None
    hits = await runtime.store.asearch(("memories", runtime.context.user_id), query=state["note"], limit=1)
    return {"recalled": [hit.value["text"] for hit in hits]}


def _graph(recall_node: Callable[..., object]) -> StateGraph:
    builder = StateGraph(State, context_schema=Ctx)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall_node)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder


def test_graph_reads_and_writes_through_runtime_store(hy_factory: Callable[..., HyMemoryStore]) -> None:
    store = hy_factory("graph.db")
    graph = _graph(recall).compile(store=store)
    graph.invoke({"note": "likes green tea"}, context=Ctx(user_id="u1"))
    graph.invoke({"note": "plays chess on sundays"}, context=Ctx(user_id="u1"))
    out = graph.invoke({"note": "green tea"}, context=Ctx(user_id="u1"))
    assert out["recalled"] == ["green tea", "likes green tea"]
    other = graph.invoke({"note": "hello"}, context=Ctx(user_id="u2"))
    assert other["recalled"] == ["hello"]  # per-user namespace isolation
    assert store.list_namespaces(prefix=("memories",)) == [("memories", "u1"), ("memories", "u2")]
    assert len(store.search(("memories", "u1"), limit=10)) == 3


async def test_async_graph(hy_factory: Callable[..., HyMemoryStore]) -> None:
    store = hy_factory("agraph.db")
    graph = _graph(arecall).compile(store=store)
    await graph.ainvoke({"note": "remember the blue umbrella"}, context=Ctx(user_id="u9"))
    out = await graph.ainvoke({"note": "blue umbrella"}, context=Ctx(user_id="u9"))
    assert out["recalled"] == ["blue umbrella"]
