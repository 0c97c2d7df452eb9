"""MemoryConfig / CodingConfig: defaults, env parsing, validation, derived paths."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

import hy_memory_langgraph.config as config_module
from hy_memory_langgraph.config import ENV_VARS, CodingConfig, MemoryConfig, variables_table
from hy_memory_langgraph.errors import ConfigError, InvalidInputError

HOME_DEFAULT = Path(os.path.expanduser("~/.hy_memory"))
OA_FILE = Path(__file__).resolve().parent / "workflow" / "data" / "oa_context.json"
OA_SPEC = "tests.workflow.oa_providers:by_user"


# --------------------------------------------------------------------------- defaults


def test_defaults_match_the_seed_table() -> None:
    cfg = MemoryConfig.from_env({})
    assert cfg.data_dir == HOME_DEFAULT
    assert cfg.coding == CodingConfig()
    assert cfg.coding.enabled is True
    assert cfg.coding.db_path is None
    assert cfg.coding.tool_result_max_bytes == 2048
    assert cfg.coding.verbatim_fallback_enabled is False
    assert cfg.coding.chain_block_enabled is False
    assert cfg.coding.extract_history_turns == 5
    assert cfg.coding.chain_repo_root is None
    assert cfg.coding.block_off is False
    assert cfg.enable_query_rewrite is False
    assert cfg.query_rewrite_max_chars == 1000
    assert cfg.max_message_bytes == 1_000_000
    assert cfg.working_db_path == HOME_DEFAULT / "data" / "coding_memory.db"


def test_default_reads_os_environ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "d"))
    monkeypatch.setenv("MEMORY_CODING_CHAIN_BLOCK_ENABLED", "on")
    cfg = MemoryConfig.default()
    assert cfg.data_dir == tmp_path / "d"
    assert cfg.coding.chain_block_enabled is True
    assert MemoryConfig.from_env() == cfg


def test_the_documents_hold_the_generated_variable_tables() -> None:
    """One source (``config/variables.py``): the README's and the design document's tables
    are what it generates, and every variable read is documented."""
    root = Path(config_module.__file__).resolve().parents[2]
    assert variables_table(readme=True) in (root / "README.md").read_text(encoding="utf-8")
    full = variables_table()
    assert full in (root / "docs" / "design.md").read_text(encoding="utf-8")
    for name in ENV_VARS:
        assert f"| `{name}` |" in full, name
    assert len(ENV_VARS) == 32


# --------------------------------------------------------------------------- env parsing


PARSE_CASES = [
    ("MEMORY_DATA_DIR", "/srv/mem", lambda c: c.data_dir, Path("/srv/mem")),
    ("MEMORY_CODING_ENABLED", "false", lambda c: c.coding.enabled, False),
    ("MEMORY_CODING_DB_PATH", "/x/y/mem.db", lambda c: c.coding.db_path, Path("/x/y/mem.db")),
    ("MEMORY_CODING_TOOL_RESULT_MAX_BYTES", "4096",
     lambda c: c.coding.tool_result_max_bytes, 4096),
    ("MEMORY_CODING_VERBATIM_FALLBACK_ENABLED", "true",
     lambda c: c.coding.verbatim_fallback_enabled, True),
    ("MEMORY_CODING_CHAIN_BLOCK_ENABLED", "1", lambda c: c.coding.chain_block_enabled, True),
    ("MEMORY_EXTRACT_HISTORY_TURNS", "12", lambda c: c.coding.extract_history_turns, 12),
    ("MEMORY_CODING_CHAIN_REPO_ROOT", "/src/repo", lambda c: c.coding.chain_repo_root,
     Path("/src/repo")),
    ("HCM_BLOCK_OFF", "1", lambda c: c.coding.block_off, True),
    ("MEMORY_ENABLE_QUERY_REWRITE", "YES", lambda c: c.enable_query_rewrite, True),
    ("MEMORY_QUERY_REWRITE_MAX_CHARS", " 250 ", lambda c: c.query_rewrite_max_chars, 250),
    ("MEMORY_REDACT_SECRETS", "off", lambda c: c.redact_secrets, False),
    ("MEMORY_PIPELINE_LOG_DAYS", "30", lambda c: c.pipeline_log_days, 30),
    ("MEMORY_PIPELINE_LOG_TEXT", "yes", lambda c: c.pipeline_log_text, True),
    ("MEMORY_MAX_MESSAGE_BYTES", "5000000", lambda c: c.max_message_bytes, 5_000_000),
    ("MEMORY_MAX_DEPTH", "16", lambda c: c.limits.max_depth, 16),
    ("MEMORY_MAX_MESSAGES", "50", lambda c: c.limits.max_messages, 50),
    ("MEMORY_MAX_WRITE_BYTES", " 2048 ", lambda c: c.limits.max_write_bytes, 2048),
    ("MEMORY_MAX_METADATA_BYTES", "100", lambda c: c.limits.max_metadata_bytes, 100),
    ("MEMORY_MAX_QUERY_BYTES", "300", lambda c: c.limits.max_query_bytes, 300),
    ("MEMORY_MAX_QUERIES", "3", lambda c: c.limits.max_queries, 3),
    ("MEMORY_MAX_USER_IDS", "4", lambda c: c.limits.max_user_ids, 4),
    ("MEMORY_MAX_SEARCH_LIMIT", "25", lambda c: c.limits.max_search_limit, 25),
    ("MEMORY_MAX_IMPORT_ROW_BYTES", "5000", lambda c: c.limits.max_row_bytes, 5000),
    ("MEMORY_OA_CONTEXT_PROVIDER", f" {OA_SPEC} ", lambda c: c.oa_context_provider_spec, OA_SPEC),
    ("MEMORY_OA_CONTEXT_FILE", str(OA_FILE), lambda c: c.oa_context_file, OA_FILE),
    ("MEMORY_DB_URL", "postgresql://u:p@db:5432/mem", lambda c: c.db_url,
     "postgresql+psycopg://u:p@db:5432/mem"),
    ("MEMORY_DB_SCHEMA_PREFIX", "staging_", lambda c: c.db_schema_prefix, "staging_"),
    ("MEMORY_INDEX_CACHE_MB", "64", lambda c: c.index_cache_mb, 64),
    ("MEMORY_APPROXIMATE_MIN_VECTORS", "0", lambda c: c.approximate_min_vectors, 0),
    ("MEMORY_DB_TIMEOUT_S", "5", lambda c: c.db_timeout_s, 5),
    ("MEMORY_BACKGROUND_DELAY_S", " 2.5 ", lambda c: c.background_delay_s, 2.5),
]


@pytest.mark.parametrize(("var", "raw", "getter", "expected"), PARSE_CASES)
def test_each_variable_is_parsed(var: str, raw: str, getter, expected) -> None:
    assert getter(MemoryConfig.from_env({var: raw})) == expected


def test_parametrisation_covers_every_variable() -> None:
    assert {case[0] for case in PARSE_CASES} == set(ENV_VARS)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("true", True), ("TRUE", True), ("1", True), ("yes", True), ("On", True),
     ("false", False), ("False", False), ("0", False), ("no", False), ("OFF", False)],
)
def test_boolean_spellings(raw: str, expected: bool) -> None:
    assert MemoryConfig.from_env({"MEMORY_CODING_ENABLED": raw}).coding.enabled is expected


@pytest.mark.parametrize("raw", ["", "   "])
def test_empty_string_is_unset(raw: str) -> None:
    cfg = MemoryConfig.from_env({name: raw for name in ENV_VARS})
    assert cfg == MemoryConfig.from_env({})


def test_tilde_is_expanded() -> None:
    cfg = MemoryConfig.from_env({"MEMORY_DATA_DIR": "~/mem", "MEMORY_CODING_DB_PATH": "~/c/m.db"})
    home = Path(os.path.expanduser("~"))
    assert cfg.data_dir == home / "mem"
    assert cfg.coding.db_path == home / "c" / "m.db"


def test_relative_paths_become_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = MemoryConfig.from_env({"MEMORY_DATA_DIR": "rel/dir"})
    assert cfg.data_dir == tmp_path / "rel" / "dir"


BAD_VALUES = {
    "MEMORY_CODING_ENABLED": "maybe",
    "MEMORY_CODING_TOOL_RESULT_MAX_BYTES": "abc",
    "MEMORY_CODING_VERBATIM_FALLBACK_ENABLED": "2",
    "MEMORY_CODING_CHAIN_BLOCK_ENABLED": "enabled",
    "MEMORY_EXTRACT_HISTORY_TURNS": "-1",
    "HCM_BLOCK_OFF": "nah",
    "MEMORY_ENABLE_QUERY_REWRITE": "yep",
    "MEMORY_QUERY_REWRITE_MAX_CHARS": "1e3",
    "MEMORY_REDACT_SECRETS": "maybe",
    "MEMORY_PIPELINE_LOG_DAYS": "-1",
    "MEMORY_PIPELINE_LOG_TEXT": "sometimes",
    "MEMORY_DB_URL": "mysql://u@h/db",
    "MEMORY_DB_SCHEMA_PREFIX": "Prod-",
    "MEMORY_INDEX_CACHE_MB": "0",
    "MEMORY_APPROXIMATE_MIN_VECTORS": "-5",
    "MEMORY_DB_TIMEOUT_S": "0",
    "MEMORY_MAX_MESSAGE_BYTES": "1000",
    "MEMORY_MAX_DEPTH": "65",
    "MEMORY_MAX_MESSAGES": "0",
    "MEMORY_MAX_WRITE_BYTES": "-1",
    "MEMORY_MAX_METADATA_BYTES": "1.5",
    "MEMORY_MAX_QUERY_BYTES": "64k",
    "MEMORY_MAX_QUERIES": "none",
    "MEMORY_MAX_USER_IDS": "0x10",
    "MEMORY_MAX_SEARCH_LIMIT": "10001",
    "MEMORY_MAX_IMPORT_ROW_BYTES": "1_000",
    "MEMORY_BACKGROUND_DELAY_S": "inf",
    # Path variables: a directory where a file is expected, or the reverse.
    "MEMORY_DATA_DIR": "{file}",
    "MEMORY_CODING_DB_PATH": "{dir}",
    "MEMORY_CODING_CHAIN_REPO_ROOT": "{file}",
    # OA context: a spec without ':', a file that is not JSON.
    "MEMORY_OA_CONTEXT_PROVIDER": "tests.workflow.oa_providers.by_user",
    "MEMORY_OA_CONTEXT_FILE": "{file}",
}


def test_every_variable_has_a_bad_value_case() -> None:
    assert set(BAD_VALUES) == set(ENV_VARS)


@pytest.mark.parametrize(("var", "template"), sorted(BAD_VALUES.items()))
def test_bad_values_name_the_variable(var: str, template: str, tmp_path: Path) -> None:
    a_file = tmp_path / "a_file.txt"
    a_file.write_text("x")
    raw = template.format(file=a_file, dir=tmp_path)
    with pytest.raises(ConfigError) as info:
        MemoryConfig.from_env({var: raw})
    message = str(info.value)
    assert var in message
    assert repr(raw) in message
    assert "expected" in message


def test_bad_value_messages_say_what_is_accepted() -> None:
    with pytest.raises(ConfigError, match="true/false/1/0/yes/no/on/off"):
        MemoryConfig.from_env({"MEMORY_CODING_ENABLED": "maybe"})
    with pytest.raises(ConfigError, match="integer >= 64"):
        MemoryConfig.from_env({"MEMORY_CODING_TOOL_RESULT_MAX_BYTES": "abc"})
    with pytest.raises(ConfigError, match="integer >= 64"):
        MemoryConfig.from_env({"MEMORY_CODING_TOOL_RESULT_MAX_BYTES": "63"})
    with pytest.raises(ConfigError, match="integer >= 0"):
        MemoryConfig.from_env({"MEMORY_QUERY_REWRITE_MAX_CHARS": "-5"})
    for raw in ("-1", "nan", "3601", "soon"):
        with pytest.raises(ConfigError, match=r"MEMORY_BACKGROUND_DELAY_S.*seconds from 0 to 3600"):
            MemoryConfig.from_env({"MEMORY_BACKGROUND_DELAY_S": raw})


def test_db_path_must_not_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"MEMORY_CODING_DB_PATH.*existing directory"):
        MemoryConfig.from_env({"MEMORY_CODING_DB_PATH": str(tmp_path)})
    with pytest.raises(ConfigError, match=r"CodingConfig.db_path.*existing directory"):
        MemoryConfig.from_env({}, db_path=tmp_path)


def test_config_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="MEMORY_CODING_ENABLED"):
        MemoryConfig.from_env({"MEMORY_CODING_ENABLED": "maybe"})


# --------------------------------------------------------------------------- overrides


def test_overrides_beat_env(tmp_path: Path) -> None:
    env = {
        "MEMORY_DATA_DIR": "/from/env",
        "MEMORY_CODING_CHAIN_BLOCK_ENABLED": "false",
        "MEMORY_CODING_TOOL_RESULT_MAX_BYTES": "100",
        "MEMORY_ENABLE_QUERY_REWRITE": "false",
    }
    cfg = MemoryConfig.from_env(
        env, data_dir=tmp_path, chain_block_enabled=True, enable_query_rewrite=True
    )
    assert cfg.data_dir == tmp_path
    assert cfg.coding.chain_block_enabled is True
    assert cfg.coding.tool_result_max_bytes == 100  # env kept where not overridden
    assert cfg.enable_query_rewrite is True


def test_coding_override_replaces_env_coding_and_fields_apply_on_top() -> None:
    env = {"MEMORY_CODING_TOOL_RESULT_MAX_BYTES": "100", "MEMORY_CODING_ENABLED": "false"}
    cfg = MemoryConfig.from_env(env, coding=CodingConfig(block_off=True), extract_history_turns=2)
    assert cfg.coding == CodingConfig(block_off=True, extract_history_turns=2)


def test_none_override_means_not_overridden() -> None:
    cfg = MemoryConfig.from_env({"MEMORY_DATA_DIR": "/from/env"}, data_dir=None, db_path=None)
    assert cfg.data_dir == Path("/from/env")


@pytest.mark.parametrize(
    ("override", "value", "field_name"),
    [
        ("tool_result_max_bytes", 10, "CodingConfig.tool_result_max_bytes"),
        ("tool_result_max_bytes", "abc", "CodingConfig.tool_result_max_bytes"),
        ("enabled", "maybe", "CodingConfig.enabled"),
        ("extract_history_turns", -1, "CodingConfig.extract_history_turns"),
        ("block_off", 3, "CodingConfig.block_off"),
        ("query_rewrite_max_chars", -1, "MemoryConfig.query_rewrite_max_chars"),
        ("max_message_bytes", 100, "MemoryConfig.max_message_bytes"),
        ("max_depth", 65, "Limits.max_depth"),
        ("max_search_limit", 0, "Limits.max_search_limit"),
        ("max_queries", "many", "Limits.max_queries"),
        ("enable_query_rewrite", "sure", "MemoryConfig.enable_query_rewrite"),
        ("data_dir", "", "MemoryConfig.data_dir"),
        ("chain_repo_root", 42, "CodingConfig.chain_repo_root"),
    ],
)
def test_overrides_are_validated_naming_the_field(override: str, value, field_name: str) -> None:
    with pytest.raises(ConfigError) as info:
        MemoryConfig.from_env({}, **{override: value})
    assert field_name in str(info.value)


def test_override_strings_are_converted() -> None:
    cfg = MemoryConfig.from_env({}, tool_result_max_bytes="4096", enabled="off")
    assert cfg.coding.tool_result_max_bytes == 4096
    assert cfg.coding.enabled is False


def test_unknown_override_is_rejected() -> None:
    with pytest.raises(ConfigError, match=r"chain_blok_enabled.*accepted: .*chain_block_enabled"):
        MemoryConfig.from_env({}, chain_blok_enabled=True)


def test_coding_override_must_be_a_coding_config() -> None:
    with pytest.raises(ConfigError, match="CodingConfig"):
        MemoryConfig.from_env({}, coding={"enabled": False})


def test_direct_construction_is_validated() -> None:
    with pytest.raises(ConfigError, match=r"CodingConfig.tool_result_max_bytes"):
        CodingConfig(tool_result_max_bytes=63)
    assert CodingConfig(tool_result_max_bytes=64).tool_result_max_bytes == 64
    cfg = MemoryConfig(data_dir="~/m")  # type: ignore[arg-type]
    assert cfg.data_dir == Path(os.path.expanduser("~/m"))
    with pytest.raises(ConfigError, match=r"MemoryConfig.coding"):
        MemoryConfig(data_dir=Path("/m"), coding="x")  # type: ignore[arg-type]


def test_config_is_frozen() -> None:
    cfg = MemoryConfig.from_env({})
    with pytest.raises(AttributeError):
        cfg.data_dir = Path("/elsewhere")  # type: ignore[misc]


def test_history_turns_helpers() -> None:
    assert CodingConfig(extract_history_turns=12).prompt_history_turns == 5
    assert CodingConfig(extract_history_turns=3).prompt_history_turns == 3
    assert CodingConfig(extract_history_turns=0).prompt_history_turns == 0
    assert CodingConfig(chain_block_enabled=True).chain_block_active is True
    assert CodingConfig(chain_block_enabled=True, block_off=True).chain_block_active is False
    assert CodingConfig().chain_block_active is False


# --------------------------------------------------------------------------- derived paths


def test_default_derived_paths(tmp_path: Path) -> None:
    cfg = MemoryConfig.from_env({"MEMORY_DATA_DIR": str(tmp_path)})
    data = tmp_path / "data"
    assert cfg.chat_db_path == data / "chat_memory.db"
    assert cfg.working_db_path == data / "coding_memory.db"
    assert cfg.scene_db_path("coding") == data / "coding_memory_cv.db"
    assert cfg.trace_db_path == data / "coding_memory_trace.db"
    assert cfg.chain_db_path == data / "hy_code_chain" / "hy_code.db"
    assert cfg.workflow_dir == tmp_path / "workflow"
    assert cfg.collection_base == "coding_memory"
    assert cfg.experience_collection("working") == "coding_memory_coding_keys"
    assert cfg.fact_collection("working") == "coding_memory_working_facts"
    assert cfg.experience_collection("coding") == "coding_memory_coding_keys_cv"
    assert cfg.fact_collection("coding") == "coding_memory_working_facts_cv"
    assert cfg.scene_db_path("working") == cfg.working_db_path
    assert cfg.scene_db_path("coding") == cfg.scene_db_path("coding")


def test_custom_db_path_derives_everything(tmp_path: Path) -> None:
    cfg = MemoryConfig.from_env(
        {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_CODING_DB_PATH": "/x/y/mem.db"}
    )
    assert cfg.working_db_path == Path("/x/y/mem.db")
    assert cfg.scene_db_path("coding") == Path("/x/y/mem_cv.db")
    assert cfg.trace_db_path == Path("/x/y/mem_trace.db")
    assert cfg.chain_db_path == Path("/x/y/hy_code_chain/hy_code.db")
    assert cfg.collection_base == "mem"
    assert cfg.experience_collection("working") == "mem_coding_keys"
    assert cfg.fact_collection("working") == "mem_working_facts"
    assert cfg.experience_collection("coding") == "mem_coding_keys_cv"
    assert cfg.fact_collection("coding") == "mem_working_facts_cv"
    # The chat file and workflow dir stay under the data dir.
    assert cfg.chat_db_path == tmp_path / "data" / "chat_memory.db"
    assert cfg.workflow_dir == tmp_path / "workflow"


def test_db_path_without_db_suffix() -> None:
    cfg = MemoryConfig.from_env({"MEMORY_CODING_DB_PATH": "/x/store.sqlite3"})
    assert cfg.scene_db_path("coding") == Path("/x/store_cv.sqlite3")
    assert cfg.trace_db_path == Path("/x/store_trace.sqlite3")
    assert cfg.collection_base == "store"


def test_non_productivity_scene_is_rejected() -> None:
    cfg = MemoryConfig.from_env({})
    with pytest.raises(InvalidInputError, match="working, coding"):
        cfg.experience_collection("chat")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        cfg.fact_collection("cv")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        cfg.scene_db_path("x")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- one URL


@pytest.mark.parametrize("raw", ["mysql://u@h/db", "sqlite:///x.db", "/var/lib/mem.db"])
def test_db_url_must_be_postgresql_and_names_the_variable(raw: str) -> None:
    with pytest.raises(ConfigError, match="MEMORY_DB_URL") as caught:
        MemoryConfig.from_env({"MEMORY_DB_URL": raw})
    assert "postgresql+psycopg://" in str(caught.value)


def test_db_url_password_is_not_in_repr() -> None:
    cfg = MemoryConfig.from_env({"MEMORY_DB_URL": "postgresql://u:Pw0rd-77x@h/db"})
    assert "Pw0rd-77x" not in repr(cfg)


def test_store_targets_follow_the_file_names(tmp_path: Path) -> None:
    cfg = MemoryConfig.from_env({"MEMORY_CODING_DB_PATH": str(tmp_path / "mem.db")}, data_dir=tmp_path)
    assert sorted(cfg.store_paths()) == ["background", "chat_memory", "hy_code", "mem", "mem_cv",
                                         "mem_trace", "pipeline_log"]
    assert cfg.store_target("mem_cv") == (str(tmp_path / "mem_cv.db"), None)
    assert cfg.store_target("workflow_memory") == (str(tmp_path / "workflow"), None)
    url = dataclasses.replace(cfg, db_url="postgresql+psycopg://h/db", db_schema_prefix="prod_")
    assert url.store_target("chat_memory") == ("postgresql+psycopg://h/db", "prod_chat_memory")
    with pytest.raises(InvalidInputError, match="unknown store"):
        cfg.store_target("nope")


def test_colliding_store_names_are_refused(tmp_path: Path) -> None:
    cfg = MemoryConfig.from_env({"MEMORY_CODING_DB_PATH": str(tmp_path / "chat_memory.db")})
    with pytest.raises(ConfigError, match="MEMORY_CODING_DB_PATH"):
        cfg.store_paths()


@pytest.mark.parametrize("raw", ["Bad-Prefix", "x" * 41])
def test_bad_schema_prefix(raw: str) -> None:
    with pytest.raises(ConfigError, match="MEMORY_DB_SCHEMA_PREFIX"):
        MemoryConfig.from_env({"MEMORY_DB_SCHEMA_PREFIX": raw})
