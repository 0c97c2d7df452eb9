"""The graph families that scenes' writes and searches are handed to.

Chat is the routing graphs' own fallback family: its lite writes take a single node and
tool traces are stripped before it, so the write and search graphs wire it themselves.
Every other family is one :class:`GraphFamily` entry here: the builders of its write
and search subgraphs, each taking the routing graph's prepared state
(:class:`~hy_memory_langgraph.flows.contracts.PreparedWrite` /
:class:`~hy_memory_langgraph.flows.contracts.PreparedSearch`) and returning
:class:`~hy_memory_langgraph.flows.contracts.ResultOutput`. The routing graphs add one
node per entry and send a scene there when its :attr:`Scene.pipeline
<hy_memory_langgraph.scenes.Scene.pipeline>` names the family.

A new family is a folder ``flows/<name>/`` (state, nodes, graph builders) plus one entry
in :data:`FAMILIES`; its scenes name it in the scene registry.

Example:
    >>> family_of("coding").write_node, family_of("coding").search_node
    ('productivity', 'productivity_search')
    >>> family_of("chat") is None
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from langgraph.graph.state import CompiledStateGraph

from hy_memory_langgraph.errors import ConfigError
from hy_memory_langgraph.flows.productivity.graph import build_productivity_graph, build_productivity_search_graph
from hy_memory_langgraph.scenes import CHAT_PIPELINE, SCENE_REGISTRY, get_scene

Builder = Callable[[], CompiledStateGraph[Any, Any, Any, Any]]


@dataclass(frozen=True)
class GraphFamily:
    """One graph family besides chat.

    Attributes:
        name: The family, as scenes name it in ``Scene.pipeline``; also the name of
            its node in the write graph.
        build_write: Builds the write subgraph (input ``PreparedWrite``).
        build_search: Builds the search subgraph (input ``PreparedSearch``).
    """

    name: str
    build_write: Builder
    build_search: Builder

    @property
    def write_node(self) -> str:
        return self.name

    @property
    def search_node(self) -> str:
        return f"{self.name}_search"


FAMILIES: Final[Mapping[str, GraphFamily]] = MappingProxyType({
    f.name: f for f in (
        GraphFamily("productivity", build_productivity_graph, build_productivity_search_graph),
    )
})


def family_of(scene: str | None) -> GraphFamily | None:
    """The family a scene's writes and searches go to; ``None`` for chat (and no scene)."""
    if scene is None:
        return None
    pipeline = get_scene(scene).pipeline
    return None if pipeline == CHAT_PIPELINE else FAMILIES[pipeline]


def check_scene_families() -> None:
    """Raise unless every registered scene names ``chat`` or a family of :data:`FAMILIES`.

    Raises:
        ConfigError: naming the scene, its pipeline and the families there are.
    """
    for scene in SCENE_REGISTRY.values():
        if scene.pipeline != CHAT_PIPELINE and scene.pipeline not in FAMILIES:
            raise ConfigError(
                f"scene {scene.name!r} names pipeline {scene.pipeline!r}, which no graph family "
                f"provides; use {CHAT_PIPELINE!r} or one of {sorted(FAMILIES)} (register a family in "
                "hy_memory_langgraph/flows/families.py)")
