"""OA context providers: raising / ``None`` / file / env-configured, and their configuration errors."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.client import (
    WorkflowMemoryService,
    oa_context_provider_from_config,
)
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import ConfigError
from hy_memory_langgraph.workflow.oa_context import (
    CallableOAContextProvider,
    FileOAContextProvider,
    as_oa_context_provider,
)
from tests.workflow.conftest import ALIAS_ZH, msgs
from tests.workflow.support import prompt_text

OA_FILE = Path(__file__).resolve().parent / "data" / "oa_context.json"
SPEC = "tests.workflow.oa_providers:{}"


@pytest.fixture
def remembered(service: WorkflowMemoryService) -> str:
    service.memory_extract("u1", msg_list=msgs(ALIAS_ZH, "以后回复简洁点"))
    return prompt_text(service.memory_prompt("u1")["memoryPrompt"])


def _prompt(make_service: Any, provider: Any) -> dict[str, Any]:
    return make_service(oa_context_provider=provider).memory_prompt("u1")


# --------------------------------------------------------------------------- failing / empty providers


def _raising(user_id: str) -> Mapping[str, Any]:
    raise TimeoutError("OA timed out after 3 s")


def test_raising_provider_keeps_the_memory(make_service: Any, remembered: str) -> None:
    result = _prompt(make_service, CallableOAContextProvider(_raising))
    assert result["available"] is True and prompt_text(result["memoryPrompt"]) == remembered
    assert result["oaContext"] is None and result["oaContextMissing"] is True
    assert result["memoryNotSupported"] is False
    assert result["diagnosis"]["code"] == "OA_CONTEXT_FAILED"
    assert result["diagnosis"]["message"] == "TimeoutError: OA timed out after 3 s"


def test_none_provider_is_missing_without_diagnosis(make_service: Any, remembered: str) -> None:
    result = _prompt(make_service, CallableOAContextProvider(lambda user_id: None))
    assert result["available"] is True and prompt_text(result["memoryPrompt"]) == remembered
    assert result["oaContext"] is None and result["oaContextMissing"] is True and result["diagnosis"] is None


def test_provider_returning_a_non_mapping_is_a_failure(make_service: Any, remembered: str) -> None:
    result = _prompt(make_service, CallableOAContextProvider(lambda user_id: ["10.0.9909.01"]))
    assert result["available"] is True and prompt_text(result["memoryPrompt"]) == remembered
    assert "returned list; expected a mapping or None" in result["diagnosis"]["message"]


def test_provider_is_called_with_the_user_id(make_service: Any) -> None:
    seen: list[str] = []
    provider = CallableOAContextProvider(lambda user_id: seen.append(user_id) or {"user": {"employeeId": user_id}})
    assert make_service(oa_context_provider=provider).memory_prompt("alice")["oaContext"]["user"]["employeeId"] == "alice"
    assert seen == ["alice"]


def test_smart_grouping_is_computed_never_taken_from_the_provider(make_service: Any) -> None:
    provider = CallableOAContextProvider(lambda user_id: {"version": "10.0.9908.99", "smartGrouping": True})
    assert _prompt(make_service, provider)["oaContext"]["smartGrouping"] is False


# --------------------------------------------------------------------------- file provider


def test_file_provider(make_service: Any) -> None:
    oa = _prompt(make_service, FileOAContextProvider(OA_FILE))["oaContext"]
    assert oa == {"version": "10.0.9909.01", "smartGrouping": True,  # the file says false: ignored
                  "user": {"position": "财务专员", "department": "财务部", "subcompany": None,
                           "employeeId": "E1001"}}


def test_file_provider_rereads_and_reports_a_broken_file(make_service: Any, tmp_path: Path,
                                                        remembered: str) -> None:
    path = tmp_path / "oa.json"
    path.write_text(json.dumps({"version": "10.0.9000"}), encoding="utf-8-sig")  # BOM tolerated
    service = make_service(oa_context_provider=FileOAContextProvider(path))
    assert service.memory_prompt("u1")["oaContext"]["smartGrouping"] is False
    path.write_text(json.dumps({"version": "10.1"}), encoding="utf-8")
    assert service.memory_prompt("u1")["oaContext"]["smartGrouping"] is True
    path.write_text("{broken", encoding="utf-8")
    result = service.memory_prompt("u1")
    assert result["available"] is True and prompt_text(result["memoryPrompt"]) == remembered
    assert result["oaContext"] is None and "MEMORY_OA_CONTEXT_FILE" in result["diagnosis"]["message"]


def test_file_saying_memory_is_not_supported(make_service: Any, tmp_path: Path) -> None:
    path = tmp_path / "oa.json"
    path.write_text('{"version": "10.0.9909.01", "memorySupported": false}', encoding="utf-8")
    assert _prompt(make_service, FileOAContextProvider(path))["memoryNotSupported"] is True


# --------------------------------------------------------------------------- configuration


@pytest.mark.parametrize(("name", "employee"), [("by_user", "u1"), ("PROVIDER", "obj-u1")])
def test_env_provider_through_the_client(make_client: Any, name: str, employee: str) -> None:
    client = make_client(env={"MEMORY_OA_CONTEXT_PROVIDER": SPEC.format(name)})
    assert client.config.oa_context_provider_spec == SPEC.format(name)
    oa = client.memory_prompt("u1")["oaContext"]
    assert oa["user"]["employeeId"] == employee and oa["smartGrouping"] is True


@pytest.mark.parametrize(("name", "check"), [
    ("returns_none", lambda r: r["oaContextMissing"] is True and r["diagnosis"] is None),
    ("raising", lambda r: r["available"] is True and r["diagnosis"]["code"] == "OA_CONTEXT_FAILED"),
    ("unsupported", lambda r: r["memoryNotSupported"] is True),
    ("old_version", lambda r: r["oaContext"]["smartGrouping"] is False),
])
def test_env_provider_outcomes(make_client: Any, name: str, check: Any) -> None:
    client = make_client(env={"MEMORY_OA_CONTEXT_PROVIDER": SPEC.format(name)})
    assert check(client.memory_prompt("u1"))


def test_env_file_through_the_client(make_client: Any) -> None:
    client = make_client(env={"MEMORY_OA_CONTEXT_FILE": str(OA_FILE)})
    assert client.memory_prompt("u1")["oaContext"]["user"]["employeeId"] == "E1001"


def test_a_provider_passed_in_code_beats_the_environment(make_client: Any) -> None:
    client = make_client(env={"MEMORY_OA_CONTEXT_FILE": str(OA_FILE)},
                         oa_context_provider=CallableOAContextProvider(lambda user_id: None))
    assert client.memory_prompt("u1")["oaContext"] is None


def test_no_variable_no_provider() -> None:
    assert oa_context_provider_from_config(MemoryConfig.from_env({})) is None


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "oa.json"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(("var", "value", "needle"), [
    ("MEMORY_OA_CONTEXT_PROVIDER", "tests.workflow.oa_providers", "package.module:callable"),
    ("MEMORY_OA_CONTEXT_PROVIDER", "no_such_module_xyz:provider", "module 'no_such_module_xyz' does not import"),
    ("MEMORY_OA_CONTEXT_PROVIDER", "tests.workflow.oa_providers:missing", "has no attribute 'missing'"),
    ("MEMORY_OA_CONTEXT_PROVIDER", "tests.workflow.oa_providers:_Provider", "names a class"),
    ("MEMORY_OA_CONTEXT_PROVIDER", "tests.workflow.oa_providers:NOT_A_PROVIDER", "str is not callable"),
    ("MEMORY_OA_CONTEXT_FILE", "{tmp}/missing.json", "no such file"),
    ("MEMORY_OA_CONTEXT_FILE", "{tmp}", "it is a directory"),
    ("MEMORY_OA_CONTEXT_FILE", "file:not json", "it is not JSON"),
    ("MEMORY_OA_CONTEXT_FILE", "file:[1, 2]", "holds a JSON list, not an object"),
    ("MEMORY_OA_CONTEXT_FILE", 'file:{"version": 10.1}', "'version' must be a string"),
    ("MEMORY_OA_CONTEXT_FILE", 'file:{"user": "E1"}', "'user' must be an object"),
    ("MEMORY_OA_CONTEXT_FILE", 'file:{"user": {"employeeId": ["E1"]}}', "'user.employeeId' must be a string"),
])
def test_bad_values_raise_config_error_naming_the_variable(tmp_path: Path, var: str, value: str,
                                                          needle: str) -> None:
    raw = _file(tmp_path, value[5:]) if value.startswith("file:") else value.format(tmp=tmp_path)
    with pytest.raises(ConfigError) as info:
        MemoryConfig.from_env({var: raw})
    message = str(info.value)
    assert message.startswith(f"{var}=") and needle in message and "expected" in message


def test_both_sources_at_once_are_refused() -> None:
    with pytest.raises(ConfigError, match="both set"):
        MemoryConfig.from_env({"MEMORY_OA_CONTEXT_PROVIDER": SPEC.format("by_user"),
                               "MEMORY_OA_CONTEXT_FILE": str(OA_FILE)})


def test_an_override_replaces_both_oa_variables() -> None:
    cfg = MemoryConfig.from_env({"MEMORY_OA_CONTEXT_PROVIDER": SPEC.format("by_user")},
                                oa_context_file=OA_FILE)
    assert (cfg.oa_context_provider_spec, cfg.oa_context_file) == (None, OA_FILE)


def test_bad_provider_in_the_client_is_a_config_error(make_client: Any) -> None:
    with pytest.raises(ConfigError, match="MEMORY_OA_CONTEXT_PROVIDER"):
        make_client(env={"MEMORY_OA_CONTEXT_PROVIDER": "nope:nope"})


def test_as_oa_context_provider() -> None:
    provider = FileOAContextProvider(OA_FILE)
    assert as_oa_context_provider(provider) is provider
    assert isinstance(as_oa_context_provider(lambda user_id: None), CallableOAContextProvider)
    with pytest.raises(TypeError, match="not an OA context provider"):
        as_oa_context_provider(42)


def test_a_plain_function_is_accepted_as_provider(make_client: Any) -> None:
    client = make_client(oa_context_provider=lambda user_id: {"version": "10.0.9909.02", "user": {"employeeId": user_id}})
    oa = client.memory_prompt("bob")["oaContext"]
    assert oa["smartGrouping"] is True and oa["user"]["employeeId"] == "bob"
