"""Graph families: a new one plugs into both routing graphs with one registry entry.

The test builds a tiny family the way a new ``flows/<name>/`` folder would (a write
and a search subgraph over the routing graphs' prepared state), registers it and a
scene that names it, and drives the real client through it.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from hy_memory_langgraph import scenes
from hy_memory_langgraph.errors import ConfigError
from hy_memory_langgraph.flows import families
from hy_memory_langgraph.flows.contracts import PreparedSearch, PreparedWrite, ResultOutput
from hy_memory_langgraph.flows.search.graph import build_search_graph
from hy_memory_langgraph.flows.write.graph import build_write_graph
from hy_memory_langgraph.services.context import MemoryContext
from tests.productivity.support import tool_trace


class _NoteWrite(PreparedWrite, ResultOutput, total=False):
    pass


class _NoteSearch(PreparedSearch, ResultOutput, total=False):
    pass


def _store(runtime: Runtime[MemoryContext]) -> Any:
    return runtime.context.stores.open(runtime.context.config.family_db_path("notes").stem, None)


def _remember(state: _NoteWrite, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    last = state["msgs"][0].content
    _store(runtime).put(("notes", state["user_id"]), state["request_id"],
                                                 {"text": last})
    return {"result": {"success": True, "scene": state["route"], "note": last}}


def _recall(state: _NoteSearch, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    store = _store(runtime)
    notes = [i.value["text"] for u in state["user_ids"] for i in store.search(("notes", u))]
    return {"result": {"scene": state["route"], "notes": notes}}


def _graph(state: type, node: Any, name: str) -> Any:
    builder = StateGraph(state, context_schema=MemoryContext, output_schema=ResultOutput)
    builder.add_node(name, node)
    builder.add_edge(START, name)
    builder.add_edge(name, END)
    return builder.compile(name=name)


NOTES = families.GraphFamily("notes", lambda: _graph(_NoteWrite, _remember, "remember"),
                             lambda: _graph(_NoteSearch, _recall, "recall"))


@pytest.fixture
def with_notes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(families, "FAMILIES", {**families.FAMILIES, "notes": NOTES})
    registry = {**scenes.SCENE_REGISTRY, "notes": scenes.Scene("notes", "notes")}
    monkeypatch.setattr(scenes, "SCENE_REGISTRY", registry)
    monkeypatch.setattr(families, "SCENE_REGISTRY", registry)


def test_the_routing_graphs_get_a_node_per_family(with_notes: None) -> None:
    assert {"notes", "productivity", "chat"} <= set(build_write_graph().get_graph().nodes)
    assert {"notes_search", "productivity_search", "chat_search"} <= set(build_search_graph().get_graph().nodes)


def test_a_registered_family_takes_its_scenes_writes_and_searches(with_notes: None, make_client: Any) -> None:
    client = make_client("lite")
    client.write_graph, client.search_graph = build_write_graph(), build_search_graph()
    written = client.add(tool_trace("Note the release date"), scene="notes", user_id="u1")
    assert written == {"success": True, "scene": "notes", "note": "Note the release date"}
    assert client.search("release", scene="notes", user_ids=["u1"]) == {
        "scene": "notes", "notes": ["Note the release date"]}
    # the other families are untouched
    assert client.add("I like green tea", user_id="u1")["success"] is True
    assert client.config.store_paths()["notes_memory"].name == "notes_memory.db"


def test_a_scene_naming_no_family_is_refused_when_the_graphs_are_built(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = {**scenes.SCENE_REGISTRY, "notes": scenes.Scene("notes", "notes")}
    monkeypatch.setattr(families, "SCENE_REGISTRY", registry)
    with pytest.raises(ConfigError, match=r"scene 'notes' names pipeline 'notes'.*flows/families.py"):
        build_write_graph()


def test_every_registered_scene_has_a_family() -> None:
    families.check_scene_families()
    assert {s.pipeline for s in scenes.SCENE_REGISTRY.values()} <= {scenes.CHAT_PIPELINE, *families.FAMILIES}
