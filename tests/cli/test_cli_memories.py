"""``hy-memory add | search | get | history | delete | stats | demo``, in process."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.testing import HashingEmbeddings

CODING_TRACE = [
    {"role": "user", "content": "Raise the timeout in src/app.py to 30"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "str_replace_editor",
        "arguments": json.dumps({"path": "src/app.py", "old_str": "TIMEOUT = 10", "new_str": "TIMEOUT = 30"})}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "The file src/app.py has been edited."},
]


def test_add_reads_json_jsonl_stdin_and_text(run, run_json, data_dir: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    single = tmp_path / "one.json"
    single.write_text(json.dumps({"messages": [{"role": "user", "content": "I adopted a grey cat called Miso"}],
                                  "memory_at": "2024-05-01T09:00:00Z", "metadata": {"channel": "app"}}))
    lines = tmp_path / "many.jsonl"
    lines.write_text("\n".join(json.dumps(v, ensure_ascii=False) for v in [
        "我最喜欢的茶是龙井", {"role": "user", "content": "I run every Sunday"},
        {"messages": CODING_TRACE, "scene": "coding", "workspace_id": "github.com/acme/app", "branch": "main"},
    ]) + "\n\n", encoding="utf-8")
    assert run("add", str(single), "-u", "alice", "--data-dir", str(data_dir))[0] == 0
    code, out, _ = run("--data-dir", str(data_dir), "add", str(lines), "--user-id", "alice")
    assert code == 0 and len(out.splitlines()) == 3 and out.splitlines()[2].startswith("alice  productivity")
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps([{"role": "user", "content": "Bob likes jazz"}])))
    assert run("add", "-", "-u", "bob", "--data-dir", str(data_dir))[0] == 0
    code, env = run_json("add", "--text", "I live in Porto", "-u", "alice", "--data-dir", str(data_dir))
    assert code == 0 and env["data"]["writes"] == 1 and env["data"]["results"][0]["scene"] == "chat"

    code, env = run_json("search", "what is my cat called", "-u", "alice", "--data-dir", str(data_dir))
    top = env["data"]["memories"][0]
    assert top["content"] == "I adopted a grey cat called Miso" and top["metadata"] == {"channel": "app"}
    assert top["memory_at"].startswith("2024-05-01")
    code, env = run_json("search", "raise the timeout in src/app.py", "--scene", "coding", "-u", "alice", "--workspace-id",
                         "github.com/acme/app", "--data-dir", str(data_dir))
    assert env["data"]["facts"] and "src/app.py" in env["data"]["facts"][0]["files"]
    bob = run_json("search", "cat", "-u", "bob", "--data-dir", str(data_dir))[1]["data"]["memories"]
    assert [m["content"] for m in bob] == ["Bob likes jazz"]


def test_global_options_work_in_any_position(run, data_dir: Path) -> None:
    run("add", "--text", "I like green tea", "-u", "u1", "--data-dir", str(data_dir))
    outputs = {run(*argv)[1] for argv in (
        ["--json", "--data-dir", str(data_dir), "search", "tea", "-u", "u1"],
        ["search", "tea", "--json", "-u", "u1", "--data-dir", str(data_dir)],
        ["--data-dir", str(data_dir), "search", "--json", "tea", "-u", "u1"],
    )}
    parsed = [json.loads(o) for o in outputs]
    assert all(p["ok"] and p["data"]["memories"][0]["content"] == "I like green tea" for p in parsed)
    assert len({json.dumps(p["data"]["memories"]) for p in parsed}) == 1


def test_get_history_delete_and_stats(run, run_json, data_dir: Path) -> None:
    config = MemoryConfig.from_env(data_dir=data_dir)
    with HyMemoryClient(mode="lite", config=config, embeddings=HashingEmbeddings(64), embedding_cache=True) as client:
        memory_id = client.add("I live in Porto", user_id="u1")["memory_ids"][0]
        client.update(memory_id, "I live in Lisbon")
        client.add("I like tea", user_id="u2")
    code, env = run_json("get", memory_id, "--data-dir", str(data_dir))
    assert code == 0 and env["data"]["content"] == "I live in Lisbon" and env["data"]["version"] == 2
    code, out, _ = run("history", memory_id, "--data-dir", str(data_dir))
    assert [line.split()[1] for line in out.splitlines()] == ["ADD", "UPDATE"]
    code, env = run_json("stats", "--data-dir", str(data_dir))
    assert env["data"]["users"] == 2 and env["data"]["scenes"]["chat"]["kinds"]["chat"] == {"active": 2}
    assert run("stats", "--data-dir", str(data_dir))[1].startswith("data dir: ")
    assert run_json("delete", memory_id, "--data-dir", str(data_dir))[1]["data"]["deleted"] == [memory_id]
    code, env = run_json("get", memory_id, "--data-dir", str(data_dir))
    assert code == 1 and env == {"ok": False, "error": {"code": "NOT_FOUND", "message": env["error"]["message"]}}
    assert run("delete", "--all", "--data-dir", str(data_dir))[0] == 2  # --all needs an explicit user
    code, env = run_json("delete", "--all", "-u", "u2", "--data-dir", str(data_dir))
    assert code == 0 and env["data"] == {"user_id": "u2", "deleted": 1}


@pytest.mark.parametrize(("argv", "code", "error"), [
    (["add"], 2, "INVALID_INPUT"),
    (["add", "/no/such/file.jsonl"], 2, "INVALID_INPUT"),
    (["add", "--text", "x", "-u", "u1", "--memory-at", "yesterday-ish"], 2, "INVALID_INPUT"),
    (["add", "--text", "x"], 2, "MISSING_USER"),
    (["search", "x", "--scene", "chat", "-k", "0"], 2, "USAGE_ERROR"),
    (["search", "x", "-k", "abc"], 2, "USAGE_ERROR"),
    (["search", "x", "--limt", "3"], 2, "USAGE_ERROR"),
    (["search", "x", "-u", "u1"], 2, "NO_DATA_DIR"),
])
def test_bad_input_is_an_envelope_without_traceback(run, data_dir: Path, argv: list[str], code: int,
                                                    error: str) -> None:
    exit_code, out, err = run(*argv, "--json", "--data-dir", str(data_dir))
    assert exit_code == code and json.loads(out)["error"]["code"] == error and "Traceback" not in err


def test_add_rejects_unknown_fields_by_name(run, tmp_path: Path, data_dir: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"messages": "hi", "userid": "x"}))
    code, _, err = run("add", str(bad), "--data-dir", str(data_dir))
    assert code == 2 and "userid" in err and "user_id" in err


def test_demo_removes_its_temp_dir_or_keeps_the_given_one(run, data_dir: Path) -> None:
    code, out, _ = run("demo")
    assert code == 0 and "removed at the end" in out
    temp = Path(re.search(r"data dir: (\S+)", out).group(1))
    assert not temp.exists()
    code, out, _ = run("demo", "--data-dir", str(data_dir))
    assert code == 0 and (data_dir / "data" / "chat_memory.db").is_file()
    assert "LLM calls: 0" in out


def test_version_and_help_speak_of_the_product(run, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        run("--version")
    assert info.value.code == 0 and capsys.readouterr().out.startswith("hy-memory ")
    with pytest.raises(SystemExit):
        run("--help")
    text = capsys.readouterr().out
    for command in ("add", "search", "get", "history", "delete", "export", "import", "stats", "demo", "workflow"):
        assert command in text
    assert "seed" not in text.lower() and "design" not in text.lower()


def test_workflow_run_takes_the_data_dir(run_json, data_dir: Path) -> None:
    payload = json.dumps({"msgList": [{"msgRole": "user", "msgValue": "每页显示20条"}]})
    code, env = run_json("workflow", "run", "workflow.memoryExtract", "--input-json", payload,
                         "-u", "alice", "--data-dir", str(data_dir))
    assert code == 0 and env["data"]["saved"] is True
    assert (data_dir / "workflow" / "alice" / "user.md").is_file()
    code, env = run_json("--data-dir", str(data_dir), "workflow", "run", "workflow.memoryPrompt", "-u", "alice")
    assert "每页显示20条" in env["data"]["memoryPrompt"]
