"""The seed's own CLI examples, verbatim, through a real ``python -m hy_memory_langgraph.cli`` process.

The ``weaver-work-cli`` of the examples is ``hy-memory`` here; everything after it is
the example as written: ``--input-json '{}'``, ``--input-json
'{"workflowId":"100003460000000060"}'``, ``--input ./mem-extract.json`` with the file
the bash heredoc writes, and the same payload through ``--input-json`` — in real
processes. The file PowerShell's ``Set-Content -Encoding utf8`` writes (a BOM, CRLF
line ends) and OA context providers configured by environment variable are exercised
through the CLI as well. The seed's command knows its logged-in user; here that user
comes from ``HY_MEMORY_USER_ID`` (there is no silent default user).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.cli import main
from tests.workflow.support import prompt_text

REPO = Path(__file__).resolve().parents[2]
OA_FILE = Path(__file__).resolve().parent / "data" / "oa_context.json"
SEED_ID = "100003460000000060"

# The seed's mem-extract.json, byte for byte as its bash heredoc writes it.
SEED_EXTRACT_FILE = """{
  "msgList": [
    {"msgRole":"user","msgValue":"我本月发起的报销流程怎么样了"},
    {"msgRole":"assistant","msgValue":"匹配到多个报销相关工作流，请确认要查看哪一个。"},
    {"msgRole":"user","msgValue":"5"}
  ],
  "workflowId": "100003460000000060",
  "async": true
}
"""
SEED_PROMPT_GLOBAL = "{}"
SEED_PROMPT_WORKFLOW = '{"workflowId":"100003460000000060"}'
SEED_ALIAS_LINE = f"- [alias] 报销流程 → （名称待确认） (workflowId={SEED_ID})"


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "MEMORY_OA_CONTEXT_", "HY_MEMORY_"))}
    env.update({"PYTHONPATH": str(REPO), "MEMORY_DATA_DIR": str(data_dir), "HY_MEMORY_USER_ID": "default",
                **extra})
    return env


def _run_all(commands: list[tuple[list[str], dict[str, str], Path]]) -> list[tuple[int, dict[str, Any]]]:
    """Run CLI processes concurrently; ``(exit code, parsed stdout)`` each, in order."""
    base = [sys.executable, "-m", "hy_memory_langgraph.cli", "--json", "workflow", "run"]
    procs = [subprocess.Popen([*base, *argv], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for argv, env, cwd in commands]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        assert len(out.decode("utf-8").strip().splitlines()) == 1, (out, err)
        results.append((proc.returncode, json.loads(out.decode("utf-8"))))
    return results


def test_seed_examples_verbatim_through_the_cli(tmp_path: Path) -> None:
    file_dir, json_dir = tmp_path / "file", tmp_path / "json"
    for folder in (file_dir, json_dir):
        folder.mkdir()
    (file_dir / "mem-extract.json").write_text(SEED_EXTRACT_FILE, encoding="utf-8", newline="\n")
    payload = json.dumps(json.loads(SEED_EXTRACT_FILE), ensure_ascii=False)

    extracts = _run_all([
        (["workflow.memoryExtract", "--input", "./mem-extract.json"], _env(file_dir / "data"), file_dir),
        (["workflow.memoryExtract", "--input-json", payload], _env(json_dir / "data"), json_dir),
    ])
    for code, envelope in extracts:
        assert code == 0 and envelope["ok"] is True
        _assert_seed_extract(envelope["data"])

    # the second read also runs with a provider configured by environment variable
    (code, glob), (code_wf, wf) = _run_all([
        (["workflow.memoryPrompt", "--input-json", SEED_PROMPT_GLOBAL], _env(file_dir / "data"), file_dir),
        (["workflow.memoryPrompt", "--input-json", SEED_PROMPT_WORKFLOW],
         _env(json_dir / "data", MEMORY_OA_CONTEXT_PROVIDER="tests.workflow.oa_providers:by_user",
              HY_MEMORY_USER_ID="default"), json_dir),
    ])
    assert code == code_wf == 0
    assert glob["data"]["available"] is True and glob["data"]["oaContext"] is None
    assert glob["data"]["oaContextMissing"] is True
    assert f"## 长期记忆 (memory.md)\n{SEED_ALIAS_LINE}" in prompt_text(glob["data"]["memoryPrompt"])
    assert "工作流记忆" not in glob["data"]["memoryPrompt"]
    assert f"## 工作流记忆 (workflow:{SEED_ID})\n- （暂无）" in prompt_text(wf["data"]["memoryPrompt"])
    assert SEED_ALIAS_LINE in prompt_text(wf["data"]["memoryPrompt"]) and wf["data"]["workflowId"] == SEED_ID
    assert wf["data"]["oaContext"] == {"version": "10.0.9909.01", "smartGrouping": True,
                                       "user": {"position": "工程师", "department": "研发部",
                                                "subcompany": None, "employeeId": "default"}}
    assert wf["data"]["oaContextMissing"] is False


def _assert_seed_extract(data: dict[str, Any]) -> None:
    assert data["saved"] is True and data["source"] == "lite" and data["workflowId"] == SEED_ID
    assert [(e["dimension"], e["line"], e["file"]) for e in data["entries"]] == [
        ("global", SEED_ALIAS_LINE, "memory.md")]


# --------------------------------------------------------------------------- in-process CLI


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "cli"))
    monkeypatch.setenv("HY_MEMORY_USER_ID", "default")
    (tmp_path / "cli").mkdir()  # an existing, empty memory

    def run(op: str, payload: str = "{}", **env: str) -> tuple[int, dict[str, Any]]:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        code = main(["--json", "workflow", "run", op, "--input-json", payload])
        return code, json.loads(capsys.readouterr().out)

    return run


def test_seed_powershell_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    """The file PowerShell's ``Set-Content -Encoding utf8`` writes: a BOM and CRLF line ends."""
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "ps"))
    monkeypatch.setenv("HY_MEMORY_USER_ID", "default")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mem-extract.json").write_text(SEED_EXTRACT_FILE, encoding="utf-8-sig", newline="\r\n")
    assert (tmp_path / "mem-extract.json").read_bytes().startswith(b"\xef\xbb\xbf{\r\n")
    assert main(["--json", "workflow", "run", "workflow.memoryExtract", "--input", "./mem-extract.json"]) == 0
    _assert_seed_extract(json.loads(capsys.readouterr().out)["data"])


def test_cli_file_provider(cli: Any) -> None:
    code, env = cli("workflow.memoryPrompt", MEMORY_OA_CONTEXT_FILE=str(OA_FILE))
    assert code == 0 and env["data"]["oaContext"]["user"]["department"] == "财务部"
    assert env["data"]["oaContext"]["smartGrouping"] is True


def test_cli_raising_provider_still_returns_the_memory(cli: Any) -> None:
    cli("workflow.memoryExtract", json.dumps({"msgList": [{"msgRole": "user", "msgValue": "以后回复简洁点"}]}))
    code, env = cli("workflow.memoryPrompt", MEMORY_OA_CONTEXT_PROVIDER="tests.workflow.oa_providers:raising")
    data = env["data"]
    assert code == 0 and data["available"] is True and "以后回复简洁点" in data["memoryPrompt"]
    assert data["oaContext"] is None and data["oaContextMissing"] is True
    assert data["diagnosis"]["code"] == "OA_CONTEXT_FAILED" and "OA is down" in data["diagnosis"]["message"]


def test_cli_memory_not_supported(cli: Any) -> None:
    code, env = cli("workflow.memoryPrompt", MEMORY_OA_CONTEXT_PROVIDER="tests.workflow.oa_providers:unsupported")
    assert code == 0 and env["data"]["memoryNotSupported"] is True and env["data"]["available"] is False


@pytest.mark.parametrize(("var", "value", "needle"), [
    ("MEMORY_OA_CONTEXT_PROVIDER", "providers.oa", "package.module:callable"),
    ("MEMORY_OA_CONTEXT_PROVIDER", "no_such_module_xyz:get", "does not import"),
    ("MEMORY_OA_CONTEXT_FILE", str(Path(__file__)), "it is not JSON"),
])
def test_cli_bad_oa_configuration_is_a_config_error(cli: Any, var: str, value: str, needle: str) -> None:
    code, env = cli("workflow.memoryPrompt", **{var: value})
    assert code == 2 and env["error"]["code"] == "CONFIG_ERROR"
    assert env["error"]["message"].startswith(f"{var}=") and needle in env["error"]["message"]
