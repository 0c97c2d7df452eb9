"""``hy-memory --json workflow run OP``: JSON in, JSON out, envelopes and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.cli import main
from tests.workflow.conftest import ALIAS_ZH, ALIAS_ZH_PENDING, WF_ID, msgs

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cli_data"
    monkeypatch.setenv("MEMORY_DATA_DIR", str(path))
    monkeypatch.setenv("HY_MEMORY_USER_ID", "default")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["--json", "workflow", "run", *argv])
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1, out  # exactly one JSON line with --json
    return code, json.loads(out[0])


def _file(tmp_path: Path, payload: Any, *, bom: bool = False) -> str:
    path = tmp_path / "mem-extract.json"
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    path.write_text(text, encoding="utf-8-sig" if bom else "utf-8")
    return str(path)


def test_extract_then_prompt(capsys: Any, tmp_path: Path, data_dir: Path) -> None:
    code, env = run(capsys, "workflow.memoryExtract", "--input", _file(tmp_path, {
        "msgList": msgs(ALIAS_ZH_PENDING), "workflowId": WF_ID, "async": True}))
    assert code == 0 and env["ok"] is True and env["data"]["saved"] is True
    code, env = run(capsys, "workflow.memoryExtract", "--input", _file(tmp_path, {
        "userMessage": [ALIAS_ZH], "assistantMessage": ["好的"]}, bom=True))
    assert code == 0 and env["data"]["entries"][0]["status"] == "updated"
    code, env = run(capsys, "workflow.memoryExtract", "--input-json", json.dumps({
        "userMessage": [ALIAS_ZH], "assistantMessage": ["好的"], "memoryAppId": "app1"}))
    assert env["data"]["memoryAppId"] == "app1"  # its own scope: added there, not a duplicate
    assert [(e["status"], e["file"]) for e in env["data"]["entries"]] == [("added", "apps/app1/memory.md")]
    code, env = run(capsys, "workflow.memoryPrompt", "--input-json", json.dumps({"workflowId": WF_ID}))
    assert code == 0
    data = env["data"]
    assert data["available"] is True and data["oaContext"] is None and data["oaContextMissing"] is True
    assert f"(workflowId={WF_ID})" in data["memoryPrompt"] and "workflow:" + WF_ID in data["memoryPrompt"]
    assert (data_dir / "workflow" / "default" / "memory.md").is_file()


def test_user_id_from_flag_and_env(capsys: Any, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    payload = json.dumps({"msgList": msgs("每页显示20条")})
    monkeypatch.delenv("HY_MEMORY_USER_ID")
    code, env = run(capsys, "workflow.memoryExtract", "--input-json", payload)
    assert code == 2 and env["error"]["code"] == "MISSING_USER" and "--user-id" in env["error"]["message"]
    assert not data_dir.exists()  # nothing saved for a user nobody named
    assert run(capsys, "workflow.memoryExtract", "--input-json", payload, "--user-id", "alice")[0] == 0
    monkeypatch.setenv("HY_MEMORY_USER_ID", "bob")
    assert run(capsys, "workflow.memoryExtract", "--input-json", payload)[0] == 0
    assert {p.name for p in (data_dir / "workflow").iterdir()} == {"alice", "bob"}
    _, env = run(capsys, "workflow.memoryPrompt", "--user-id", "alice")  # no input → {}
    assert "每页显示20条" in env["data"]["memoryPrompt"]


@pytest.mark.parametrize(("argv", "code"), [
    (["workflow.memoryPrompt", "--input-json", "{not json"], "INVALID_JSON"),
    (["workflow.memoryPrompt", "--input-json", "[1]"], "INVALID_JSON"),
    (["workflow.nope", "--input-json", "{}"], "UNKNOWN_OPERATION"),
    (["workflow.memoryPrompt", "--input-json", '{"workflowID": "1"}'], "INVALID_INPUT"),
    (["workflow.memoryPrompt", "--input-json", '{"workflowId": ""}'], "INVALID_INPUT"),
    (["workflow.memoryExtract", "--input-json", "{}"], "INVALID_INPUT"),
    (["workflow.memoryExtract", "--input-json", '{"msgList": [{"role": "user", "content": "x"}]}'], "INVALID_INPUT"),
    (["workflow.memoryExtract", "--input-json", '{"msgList": [], "userMessage": []}'], "INVALID_INPUT"),
    (["workflow.memoryExtract", "--input-json", '{"msgList": [{"msgRole": "user", "msgValue": "x"}], "async": "yes"}'],
     "INVALID_INPUT"),
    (["workflow.memoryExtract", "--input-json",
      '{"msgList": [{"msgRole": "user", "msgValue": "x"}], "dynamicContext": {"ETEAMSID": "1"}}'],
     "CREDENTIALS_REFUSED"),
    (["workflow.memoryExtract", "--input", "/no/such/file.json"], "INVALID_INPUT"),
    (["workflow.memoryPrompt", "--input-json", "{}", "--input", "x.json"], "INVALID_INPUT"),
    (["workflow.memoryPrompt", "--mode", "pro"], "CONFIG_ERROR"),
])
def test_error_envelopes(capsys: Any, data_dir: Path, argv: list[str], code: str) -> None:
    data_dir.mkdir()  # an empty memory: these inputs fail on their own
    exit_code, env = run(capsys, *argv)
    assert exit_code == 2
    assert env["ok"] is False and env["error"]["code"] == code and env["error"]["message"]
    assert not (data_dir / "workflow").exists()


def test_credentials_in_a_file_are_refused(capsys: Any, tmp_path: Path, data_dir: Path) -> None:
    code, env = run(capsys, "workflow.memoryExtract", "--input", _file(tmp_path, {
        "msgList": msgs(ALIAS_ZH, "Cookie: JSESSIONID=1")}))
    assert code == 2 and env["error"]["code"] == "CREDENTIALS_REFUSED"
    assert "messages[1] (user)" in env["error"]["message"] and "JSESSIONID" not in env["error"]["message"]
    assert not (data_dir / "workflow").exists()


@pytest.mark.parametrize("where", ["flag", "env"])
def test_memory_prompt_refuses_a_data_dir_that_does_not_exist(capsys: Any, tmp_path: Path, data_dir: Path,
                                                               monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    missing = tmp_path / "no_such_dir"
    extra = ["--data-dir", str(missing)] if where == "flag" else []
    if where == "env":
        monkeypatch.setenv("MEMORY_DATA_DIR", str(missing))
    code, env = run(capsys, "workflow.memoryPrompt", *extra)
    assert code == 2 and env["error"]["code"] == "NO_DATA_DIR" and str(missing) in env["error"]["message"]
    assert not missing.exists()
    missing.mkdir()  # an existing empty data dir reads as an empty memory
    code, env = run(capsys, "workflow.memoryPrompt", *extra)
    assert code == 0 and env["data"]["available"] is True


def test_real_subprocess(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "MEMORY_DATA_DIR": str(tmp_path / "sub"),
           "HY_MEMORY_USER_ID": "carol"}
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(var, None)
    base = [sys.executable, "-m", "hy_memory_langgraph.cli", "--json", "workflow", "run"]
    extract = subprocess.run([*base, "workflow.memoryExtract", "--input", _file(tmp_path, {
        "msgList": msgs(ALIAS_ZH)})], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert extract.returncode == 0, extract.stderr
    assert json.loads(extract.stdout)["data"]["saved"] is True
    assert (tmp_path / "sub" / "workflow" / "carol" / "memory.md").is_file()
    bad = subprocess.run([*base, "workflow.memoryPrompt", "--input-json", "{oops"],
                         capture_output=True, text=True, env=env, timeout=60, check=False)
    assert bad.returncode == 2
    assert json.loads(bad.stdout) == {"ok": False, "error": {"code": "INVALID_JSON",
                                                             "message": json.loads(bad.stdout)["error"]["message"]}}
