"""``memoryAppId`` is a storage scope: what is saved under one app id is never read under another."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.cli import main
from hy_memory_langgraph.client import WorkflowMemoryService
from hy_memory_langgraph.errors import InvalidInputError
from tests.workflow.conftest import ALIAS_ZH, WF_ID, msgs

RULE = '选项"加急"的意思是"当天处理"'


def _fill(service: WorkflowMemoryService, app: str | None) -> None:
    service.memory_extract("u1", msg_list=msgs(ALIAS_ZH, "以后回复简洁点"), memory_app_id=app)
    service.memory_extract("u1", msg_list=msgs(RULE), workflow_id=WF_ID, memory_app_id=app)


@pytest.mark.parametrize(("writer", "reader"), [("crm", "hr"), ("crm", None), (None, "crm")])
def test_apps_do_not_see_each_other(service: WorkflowMemoryService, writer: str | None,
                                    reader: str | None) -> None:
    _fill(service, writer)
    other = service.memory_prompt("u1", WF_ID, memory_app_id=reader)
    assert other["available"] is True and other["dataEmpty"] is True and other["memoryPrompt"] == ""
    assert other["memoryAppId"] == reader
    own = service.memory_prompt("u1", WF_ID, memory_app_id=writer)
    assert "问题流程" in own["memoryPrompt"] and "加急" in own["memoryPrompt"] and "简洁" in own["memoryPrompt"]
    assert own["counts"] == {"user": 1, "global": 1, f"workflow:{WF_ID}": 1}


def test_duplicates_and_pending_ids_are_per_app(service: WorkflowMemoryService, workflow_root: Path) -> None:
    first = service.memory_extract("u1", msg_list=msgs(ALIAS_ZH), memory_app_id="crm")
    second = service.memory_extract("u1", msg_list=msgs(ALIAS_ZH), memory_app_id="hr")
    third = service.memory_extract("u1", msg_list=msgs(ALIAS_ZH), memory_app_id="crm")
    assert first["saved"] and second["saved"] and not third["saved"]
    assert [e["file"] for e in first["entries"] + second["entries"]] == ["apps/crm/memory.md", "apps/hr/memory.md"]
    assert (workflow_root / "u1" / "apps" / "crm" / "memory.md").is_file()
    assert not (workflow_root / "u1" / "memory.md").exists()


def test_app_ids_are_escaped(service: WorkflowMemoryService, workflow_root: Path) -> None:
    service.memory_extract("u1", msg_list=msgs(ALIAS_ZH), memory_app_id="../x.y")
    assert (workflow_root / "u1" / "apps" / "%2E%2E%2Fx%2Ey" / "memory.md").is_file()
    assert service.memory_prompt("u1", memory_app_id="../x.y")["dataEmpty"] is False


@pytest.mark.parametrize("bad", ["", "  ", 1.5, ["crm"]])
def test_bad_app_id_is_refused_naming_the_field(service: WorkflowMemoryService, bad: Any) -> None:
    with pytest.raises(InvalidInputError, match=r"memory_app_id \(memoryAppId\)"):
        service.memory_prompt("u1", memory_app_id=bad)


def test_client_passes_the_app_id(make_client: Any) -> None:
    client = make_client()
    assert client.memory_extract("u1", msg_list=msgs(ALIAS_ZH), memory_app_id="crm")["saved"]
    assert client.memory_prompt("u1")["dataEmpty"] is True
    assert "问题流程" in client.memory_prompt("u1", memory_app_id="crm")["memoryPrompt"]


def test_cli_memory_prompt_takes_memory_app_id(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "cli"))
    monkeypatch.setenv("HY_MEMORY_USER_ID", "default")

    def run(op: str, payload: dict[str, Any]) -> dict[str, Any]:
        assert main(["--json", "workflow", "run", op, "--input-json", json.dumps(payload)]) == 0
        return json.loads(capsys.readouterr().out)["data"]

    run("workflow.memoryExtract", {"msgList": msgs(ALIAS_ZH), "memoryAppId": "crm"})
    assert run("workflow.memoryPrompt", {})["dataEmpty"] is True
    crm = run("workflow.memoryPrompt", {"memoryAppId": "crm"})
    assert crm["memoryAppId"] == "crm" and "问题流程" in crm["memoryPrompt"]
