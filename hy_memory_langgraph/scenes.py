"""The scene registry: every memory scene, described once.

A scene decides which pipeline a write goes through, where its memories are stored,
how their ids look, which prompts extract them and what a search returns. Routing,
configuration, repositories, the client and the prompts all read this table; adding a
productivity-like scene means one :class:`Scene` entry here, its extraction prompt and
its definitions in ``prompts/fragments/scenes.toml`` (used by the judge and query routing), and
its tests. The contract is in ``docs/design.md#scenes``.

Example:
    >>> get_scene("coding").storage_tag, get_scene("coding").version_chain
    ('cv', True)
    >>> PRODUCTIVITY_SCENES
    ('working', 'coding')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal

from hy_memory_langgraph.errors import InvalidSceneError

#: ``"chat"`` or the name of a graph family (``hy_memory_langgraph/flows/families.py``).
Pipeline = str
#: The pipeline of conversation memories (the ``scene`` of its write and search results).
CHAT_PIPELINE: Final = "chat"


@dataclass(frozen=True)
class Scene:
    """One memory scene.

    Attributes:
        name: The public ``scene`` value (also the id tag: ``fact_<name>_<hex>``).
        pipeline: The graph family that writes and searches it: ``"chat"``
            (conversation memories), ``"productivity"`` (the dual experience + fact
            layer), or another family registered in ``flows/families.py``.
        storage_tag: Productivity scenes only: ``""`` keeps the base file and collection
            names (``coding_memory.db``, ``coding_memory_coding_keys``); ``"cv"`` gives
            ``coding_memory_cv.db`` and ``..._coding_keys_cv``.
        extract_prompt: The prompt of the scene's extraction call (``prompts/<name>.toml``).
        version_chain: Writes record the code version chain and searches may render
            ``chain_block`` (coding).
        write_extras: Keys a write result has on top of the pipeline's shape, each with
            the factory of its empty value (used when the write produced none).
        search_extras: The same for a search result (the keys are always present).
    """

    name: str
    pipeline: Pipeline
    storage_tag: str = ""
    extract_prompt: str | None = None
    version_chain: bool = False
    write_extras: tuple[tuple[str, Callable[[], Any]], ...] = ()
    search_extras: tuple[tuple[str, Callable[[], Any]], ...] = ()

    def extras(self, kind: Literal["write", "search"], values: Mapping[str, Any]) -> dict[str, Any]:
        """The scene's extra result keys, taken from ``values`` or empty.

        Example:
            >>> get_scene("coding").extras("search", {"chain_block": "v1"})
            {'chain_block': 'v1', 'chain_used': []}
        """
        keys = self.write_extras if kind == "write" else self.search_extras
        return {key: values.get(key) or empty() for key, empty in keys}

    @property
    def file_suffix(self) -> str:
        """Suffix of the scene's store file and collections: ``""`` or ``"_<tag>"``."""
        return f"_{self.storage_tag}" if self.storage_tag else ""


_ENTRIES: Final[tuple[Scene, ...]] = (
    Scene("chat", CHAT_PIPELINE, extract_prompt="chat_extract"),
    Scene("working", "productivity", extract_prompt="productivity_extract_working"),
    Scene("coding", "productivity", storage_tag="cv", extract_prompt="productivity_extract_coding",
          version_chain=True, write_extras=(("chain_rounds", int),),
          search_extras=(("chain_block", str), ("chain_used", list))),
)

#: Every scene by name, in routing order (the first is the fallback scene).
SCENE_REGISTRY: Final[Mapping[str, Scene]] = MappingProxyType({s.name: s for s in _ENTRIES})
SCENES: Final[tuple[str, ...]] = tuple(SCENE_REGISTRY)
PRODUCTIVITY_SCENES: Final[tuple[str, ...]] = tuple(
    s.name for s in _ENTRIES if s.pipeline == "productivity")
#: The scene of conversation memories (what a plain "remember this" writes).
CHAT_SCENE: Final = next(s.name for s in _ENTRIES if s.pipeline == CHAT_PIPELINE)
#: Where a judge failure, an unparsable answer or a disabled feature sends a write.
DEFAULT_SCENE: Final = CHAT_SCENE


def validate_scene(scene: object) -> str | None:
    """Return ``scene`` when it is ``None`` or a registered scene, else raise.

    Raises:
        InvalidSceneError: naming the allowed values.
    """
    if scene is None or (isinstance(scene, str) and scene in SCENE_REGISTRY):
        return scene
    raise InvalidSceneError(
        f"scene={scene!r} is not allowed; use one of {', '.join(map(repr, SCENES))} or None "
        f"(None lets the library decide)"
    )


def get_scene(name: str) -> Scene:
    """The registered scene called ``name`` (raises :class:`InvalidSceneError` otherwise)."""
    validate_scene(name)
    return SCENE_REGISTRY[name]


def is_productivity(name: str | None) -> bool:
    """Whether ``name`` is a registered scene of the productivity pipeline."""
    return name in PRODUCTIVITY_SCENES
