"""The scene registry: one description per scene, read by config, routing and results."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from hy_memory_langgraph.cli.parsers import UsageError, build_parser
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import InvalidSceneError
from hy_memory_langgraph.integrations import mcp_server
from hy_memory_langgraph.repos.productivity import new_id, parse_id
from hy_memory_langgraph.scenes import (
    CHAT_PIPELINE,
    CHAT_SCENE,
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


PACKAGE = Path(__file__).resolve().parents[1] / "hy_memory_langgraph"
#: The faces that name scenes to their users: they read the registry, never a copy.
REGISTRY_READERS = sorted([*(PACKAGE / "cli").glob("*.py"), PACKAGE / "integrations" / "mcp_server.py"])


@pytest.mark.parametrize("path", REGISTRY_READERS, ids=lambda p: p.name)
def test_the_cli_and_the_mcp_server_spell_no_scene_name(path: Path) -> None:
    names = {*SCENE_REGISTRY, CHAT_PIPELINE}
    spelled = [f"{path.name}:{node.lineno} {node.value!r}"
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Constant) and node.value in names]
    assert spelled == [], "read the scene names from hy_memory_langgraph.scenes"


def test_the_mcp_tools_take_the_registered_scenes() -> None:
    search = mcp_server._Search.model_json_schema()["properties"]["scene"]
    assert search["enum"] == list(SCENES) and search["default"] == CHAT_SCENE
    record = mcp_server._Record.model_json_schema()["properties"]["scene"]
    assert record["enum"] == list(PRODUCTIVITY_SCENES)
    assert all(f'"{name}"' in search["description"] for name in SCENES)
    assert all(f'"{name}"' in record["description"] for name in PRODUCTIVITY_SCENES)


@pytest.mark.parametrize("command", [["add", "--text", "hi"], ["search", "q"], ["list"]])
def test_the_cli_takes_the_registered_scenes(command: list[str]) -> None:
    parser = build_parser("0")
    assert [parser.parse_args([*command, "--scene", name]).scene for name in SCENES] == list(SCENES)
    with pytest.raises(UsageError, match=", ".join(map(repr, SCENES))):
        parser.parse_args([*command, "--scene", "bogus"])
