"""The scene registry: one description per scene, read by config, routing and results."""

from __future__ import annotations

import pytest

from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import InvalidSceneError
from hy_memory_langgraph.repos.productivity import new_id, parse_id
from hy_memory_langgraph.scenes import (
    DEFAULT_SCENE,
    PRODUCTIVITY_SCENES,
    SCENE_REGISTRY,
    SCENES,
    get_scene,
    is_productivity,
    validate_scene,
)


def test_registry_lists_the_three_scenes_in_routing_order() -> None:
    assert SCENES == ("chat", "working", "coding")
    assert PRODUCTIVITY_SCENES == ("working", "coding")
    assert DEFAULT_SCENE == SCENES[0] == "chat"
    assert all(SCENE_REGISTRY[name].name == name for name in SCENES)


@pytest.mark.parametrize("bad", ["Chat", "work", "", 3, ["chat"]])
def test_unknown_scene_names_the_allowed_values(bad: object) -> None:
    with pytest.raises(InvalidSceneError, match="'chat', 'working', 'coding'"):
        validate_scene(bad)
    assert validate_scene(None) is None


def test_only_productivity_scenes_have_storage_and_ids() -> None:
    cfg = MemoryConfig.from_env({}, data_dir="/m")
    for scene in PRODUCTIVITY_SCENES:
        spec = get_scene(scene)
        assert cfg.scene_db_path(scene).name == f"coding_memory{spec.file_suffix}.db"
        assert parse_id(new_id("fact", scene)) == ("fact", scene)
        assert is_productivity(scene)
    assert not is_productivity("chat") and not is_productivity(None)
    assert parse_id("fact_chat_" + "0" * 32) is None


def test_result_extras_come_from_the_registry() -> None:
    coding, working = get_scene("coding"), get_scene("working")
    assert coding.extras("write", {}) == {"chain_rounds": 0}
    assert coding.extras("search", {"chain_used": [1]}) == {"chain_block": "", "chain_used": [1]}
    assert working.extras("write", {"chain_rounds": 3}) == {}
    assert coding.version_chain and not working.version_chain
