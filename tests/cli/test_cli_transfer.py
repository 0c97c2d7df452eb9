"""``hy-memory export`` → ``import`` into an empty dir: the same memory, the same search results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.fences import read_fences
from hy_memory_langgraph.models import E5Embeddings
from hy_memory_langgraph.testing import HashingEmbeddings
from tests.cli.test_cli_memories import CODING_TRACE

REPO = Path(__file__).resolve().parents[2]
QUERIES = [("what is my cat called", None), ("where do I live", None), ("我喜欢什么茶", None),
           ("raise the timeout in src/app.py", "coding")]
VOLATILE = ("request_id", "elapsed_ms")


def client_on(data_dir: Path, embeddings: Any) -> HyMemoryClient:
    config = MemoryConfig.from_env(data_dir=data_dir, chain_block_enabled=True)
    return HyMemoryClient(mode="lite", config=config, embeddings=embeddings)


def seed(data_dir: Path, embeddings: Any) -> dict[str, str]:
    """Memories of every kind: updated, superseded, coding with a version chain, workflow."""
    with client_on(data_dir, embeddings) as client:
        cat = client.add("I adopted a grey cat called Miso", user_id="alice",
                         memory_at="2024-05-01T09:00:00Z", metadata={"channel": "app"})["memory_ids"][0]
        home = client.add("I live in Porto", user_id="alice", session_id="s1")["memory_ids"][0]
        client.update(home, "I live in Lisbon")
        old = client.context.chat_repo.create("alice", "Alice drinks black tea", request_id="seed")
        new = client.context.chat_repo.create("alice", "Alice drinks green tea", request_id="seed",
                                              supersedes=[old.memory_id])
        client.add("我最喜欢的茶是龙井", user_id="alice")
        client.add("Bob has a dog called Rex", user_id="bob")
        client.add(CODING_TRACE, scene="coding", user_id="alice", workspace_id="github.com/acme/app",
                   branch="main")
        client.memory_extract("alice", msg_list=[{"msgRole": "user", "msgValue":
                              '业务别名"报销流程"= 工作流"差旅费用报销"，workflowId=100003460000000060'}])
    return {"cat": cat, "home": home, "old": old.memory_id, "new": new.memory_id}


def _rows(rendered: str) -> list[Any]:
    """A rendered block's rows (its nonce is fresh for every rendering)."""
    return [row for region in read_fences(rendered) for row in region.rows]


def observe(data_dir: Path, embeddings: Any, ids: dict[str, str]) -> dict[str, Any]:
    """Everything a user can read back, minus per-call ids and timings."""
    with client_on(data_dir, embeddings) as client:
        searches = []
        for query, scene in QUERIES:
            result = client.search(query, scene=scene, user_ids=["alice"], limit=5,
                                   workspace_id="github.com/acme/app" if scene else None)
            searches.append({k: _rows(v) if k == "chain_block" else v
                             for k, v in result.items() if k not in VOLATILE})
        return {"searches": searches,
                "get": {name: client.get(i) for name, i in ids.items()},
                "history": {name: client.history(i) for name, i in ids.items()},
                "prompt": _rows(client.memory_prompt("alice")["memoryPrompt"]),
                "rows": sorted(json.dumps(r, sort_keys=True) for r in client.export_memories()
                               if r["type"] not in ("header", "footer"))}


def test_in_process_round_trip_is_exact(run, data_dir: Path, tmp_path: Path) -> None:
    embeddings = HashingEmbeddings(64)
    ids = seed(data_dir, embeddings)
    export = tmp_path / "memory.jsonl"
    code, out, _ = run("export", "-o", str(export), "--data-dir", str(data_dir))
    assert code == 0 and out.startswith("exported ")
    copy = tmp_path / "copy"
    code, out, err = run("--data-dir", str(copy), "import", str(export), "--all-users", "--progress")
    assert code == 0 and "imported" in out and "rows" in err  # the bar was forced on stderr
    before, after = observe(data_dir, embeddings, ids), observe(copy, embeddings, ids)
    assert after == before
    assert before["get"]["old"]["status"] == "superseded" and before["get"]["old"]["superseded_by"] == ids["new"]
    assert [e["op"] for e in before["history"]["home"]] == ["ADD", "UPDATE"]
    assert any(row.get("version") == 1 for row in before["searches"][3]["chain_block"])
    assert any("报销流程" in row for row in before["prompt"])
    rows = [json.loads(line) for line in export.read_text(encoding="utf-8").splitlines()]
    assert rows[0]["type"] == "header" and rows[-1] == {"type": "footer", "rows": len(rows) - 2,
                                                        "counts": rows[-1]["counts"]}
    assert {r["type"] for r in rows} == {"header", "memory", "event", "trace", "chain_thread",
                                         "workflow_file", "footer"}


def test_export_of_one_user_and_truncated_imports(run, run_json, data_dir: Path, tmp_path: Path) -> None:
    seed(data_dir, HashingEmbeddings(64))
    export = tmp_path / "bob.jsonl"
    code, env = run_json("export", "-u", "bob", "-o", str(export), "--data-dir", str(data_dir))
    rows = [json.loads(line) for line in export.read_text(encoding="utf-8").splitlines()]
    users = {r["value"]["user_id"] for r in rows if r["type"] in ("memory", "event")}
    assert users == {"bob"} and env["data"]["counts"]["memory"] == 1
    assert not any(r["type"] in ("chain_thread", "workflow_file") for r in rows)
    truncated = tmp_path / "cut.jsonl"
    truncated.write_text("\n".join(export.read_text(encoding="utf-8").splitlines()[:-1]), encoding="utf-8")
    code, out, err = run("import", str(truncated), "--all-users", "--data-dir", str(tmp_path / "cut"))
    assert code == 0 and "truncated" in err
    not_export = tmp_path / "notes.jsonl"
    not_export.write_text('{"messages": "hi"}\n')
    code, env = run_json("import", str(not_export), "--all-users", "--data-dir", str(tmp_path / "x"))
    assert code == 2 and "hy-memory export" in env["error"]["message"]


def _user_of(row: dict[str, Any]) -> str:
    if row["type"] in ("memory", "event"):
        return row["value"]["user_id"]
    if row["type"] == "trace":
        return row["namespace"][1]
    return (row["value"]["owner"] if row["type"] == "chain_thread" else row["path"]).split("|")[0].split("/")[0]


def test_an_import_writes_only_the_users_it_names(data_dir: Path, tmp_path: Path) -> None:
    embeddings = HashingEmbeddings(64)
    seed(data_dir, embeddings)
    with client_on(data_dir, embeddings) as client:
        rows = list(client.export_memories())
        assert [r["type"] for r in client.export_memories(user_ids="bob")].count("memory") == 1  # one id
    alice_rows = [r for r in rows[1:-1] if _user_of(r) == "alice"]
    assert {r["type"] for r in alice_rows} == {"memory", "event", "trace", "chain_thread", "workflow_file"}
    with client_on(tmp_path / "copy", embeddings) as copy:
        with pytest.raises(InvalidInputError, match="needs user_ids"):
            copy.import_memories(rows)
        report = copy.import_memories(rows, user_ids="bob")
        assert report["refused_users"] == {"alice": len(alice_rows)} and report["complete"] is True
        assert report["rows"] == len(rows) - 2 - len(alice_rows) and report["memory"] == 1
        assert copy.list_memories("alice")["memories"] == [] and copy.memory_prompt("alice")["dataEmpty"]
        assert copy.search("cat", user_ids=["alice"])["memories"] == []
        assert [r for r in list(copy.export_memories())[1:-1] if _user_of(r) == "alice"] == []
        assert copy.list_memories("bob")["memories"][0]["content"] == "Bob has a dog called Rex"


def test_the_import_command_says_whose_rows(run, run_json, data_dir: Path, tmp_path: Path) -> None:
    seed(data_dir, HashingEmbeddings(64))
    export = tmp_path / "all.jsonl"
    assert run("export", "-o", str(export), "--data-dir", str(data_dir))[0] == 0
    code, env = run_json("import", str(export), "--data-dir", str(tmp_path / "a"))
    assert code == 2 and "--user-id USER" in env["error"]["message"] and "--all-users" in env["error"]["message"]
    code, out, err = run("import", str(export), "-u", "bob", "--data-dir", str(tmp_path / "b"))
    assert code == 0 and "rows of user 'alice' not imported" in err


def _cli(*argv: str, env: dict[str, str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hy_memory_langgraph.cli", *argv], capture_output=True,
                          text=True, env=env, timeout=300, check=False, **kwargs)


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HY_MEMORY_"))}
    return {**env, "PYTHONPATH": str(REPO), "MEMORY_DATA_DIR": str(tmp_path / "unused")}


@pytest.mark.slow
@pytest.mark.real_model
def test_subprocess_round_trip_gives_identical_search_results(cli_env: dict[str, str], tmp_path: Path) -> None:
    source, copy, export = tmp_path / "a", tmp_path / "b", tmp_path / "memory.jsonl"
    embeddings = E5Embeddings()  # what the command uses by default
    with client_on(source, embeddings) as client:
        client.add("I adopted a grey cat called Miso", user_id="alice", memory_at="2024-05-01T09:00:00Z")
        client.add([{"role": "user", "content": "我最喜欢的茶是龙井"}, {"role": "assistant", "content": "龙井很香！"}],
                   user_id="alice", session_id="s1")
        client.add("Bob has a dog called Rex", user_id="bob")
        expected = {k: v for k, v in client.search("我喜欢什么茶", user_ids=["alice"], limit=3).items()
                    if k not in VOLATILE}
    exported = _cli("--data-dir", str(source), "export", "--output", str(export), "--json", env=cli_env)
    assert exported.returncode == 0 and json.loads(exported.stdout)["data"]["counts"]["memory"] == 4
    imported = _cli("import", str(export), "--all-users", "--data-dir", str(copy), "--json", env=cli_env)
    assert imported.returncode == 0 and json.loads(imported.stdout)["data"]["complete"] is True
    found = _cli("search", "我喜欢什么茶", "-u", "alice", "-k", "3", "--json", "--data-dir", str(copy), env=cli_env)
    assert found.returncode == 0, found.stderr
    result = {k: v for k, v in json.loads(found.stdout)["data"].items() if k not in VOLATILE}
    assert result.pop("user_id") == "alice"  # the command names whose memory it searched
    assert _without_scores(result) == _without_scores(expected)
    assert [m["score"] for m in result["memories"]] == pytest.approx(
        [m["score"] for m in expected["memories"]], abs=1e-6)
    assert result["memories"][0]["content"] == "我最喜欢的茶是龙井"


def _without_scores(result: dict[str, Any]) -> dict[str, Any]:
    return {**result, "memories": [{k: v for k, v in m.items() if k != "score"} for m in result["memories"]]}


def test_a_closed_pipe_ends_quietly(cli_env: dict[str, str], tmp_path: Path) -> None:
    data_dir = tmp_path / "big"
    notes = data_dir / "workflow" / "alice" / "memory.md"
    notes.parent.mkdir(parents=True)
    notes.write_text("# memory.md\n\n" + "".join(f"- note {i} " + "x" * 200 + "\n" for i in range(2000)),
                     encoding="utf-8")
    argv = [sys.executable, "-m", "hy_memory_langgraph.cli", "export", "--data-dir", str(data_dir)]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 141
    assert json.loads(first)["type"] == "header" and err == ""


def test_an_import_never_takes_over_another_users_memory(tmp_path: Path) -> None:
    """A row carrying the id of another user's memory is refused and reported; the
    victim's memory stays theirs (get, search, delete)."""
    embeddings = HashingEmbeddings(64)
    with client_on(tmp_path / "d", embeddings) as client:
        victim = client.add("My locker number is 4471", user_id="alice")["memory_ids"][0]
        rows = list(client.export_memories(["alice"]))
    forged = [dict(r) for r in rows]
    for row in forged:
        if row["type"] == "memory":
            row["value"] = {**row["value"], "user_id": "mallory", "content": "mallory's own note"}
        if row["type"] == "event":
            row["value"] = {**row["value"], "user_id": "mallory"}
    coding_id = "fact_coding_" + "0" * 32
    forged.insert(-1, {"type": "memory", "scene": "chat", "value": {**forged[1]["value"], "memory_id": coding_id}})
    forged[-1] = {**forged[-1], "rows": forged[-1]["rows"] + 1}
    with client_on(tmp_path / "d", embeddings) as client:
        result = client.import_memories(forged, user_ids=None)
        assert [(r["memory_id"], r["user_id"]) for r in result["refused"]] == [(victim, "mallory"),
                                                                               (coding_id, "mallory")]
        assert "another user's" in result["refused"][0]["reason"]
        assert client.get(victim)["user_id"] == "alice" and client.get(victim)["content"] == "My locker number is 4471"
        assert client.search("mallory", user_ids=["mallory"])["memories"] == []
        assert client.delete(victim) is True and client.get(victim) is None


SECRET = "sk-proj-Zq8vN3kLm2Xw9RtY7uP4sA1dF6gH0jKe"


def test_an_import_redacts_what_a_store_without_redaction_exported(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows written with MEMORY_REDACT_SECRETS=false, imported where it is on: every text
    loses its secrets, every id and time stays, and a redacted export imports unchanged."""
    embeddings = HashingEmbeddings(64)
    said = f"my openai key is {SECRET} and my vpn password: Tr0ub4dor&3x"
    monkeypatch.setenv("MEMORY_REDACT_SECRETS", "false")
    user = "usr_8fK2mQ9xL3pR7tV1wY5zB4nC6"  # an id shaped like a vendor key: kept as given
    with client_on(tmp_path / "raw", embeddings) as client:
        memory_id = client.add(said, user_id=user, metadata={"pin": "4821", "x": "a\x00b"})["memory_ids"][0]
        client.add(tool_trace_with(said), "coding", user_id=user)
        client.memory_extract(user, msg_list=[{"msgRole": "user", "msgValue": "以后回复用中文"}])
        rows = list(client.export_memories())
    for row in rows:  # workflow memory refuses credentials: a document edited by hand holds one
        if row["type"] == "workflow_file":
            row["text"] += f"- [note] deploy key {SECRET}\n"
    assert SECRET in json.dumps(rows)
    monkeypatch.delenv("MEMORY_REDACT_SECRETS")
    with client_on(tmp_path / "clean", embeddings) as client:
        result = client.import_memories(rows, user_ids=None)
        assert result["complete"] and result["refused"] == []
        again = list(client.export_memories())
        record = client.get(memory_id)
        assert record is not None and record["user_id"] == user
        assert record["metadata"] == {"pin": "[REDACTED:password]", "x": "ab"}
        assert client.search("openai key", user_ids=[user])["memories"][0]["memory_id"] == memory_id
    text = json.dumps(again, ensure_ascii=False)
    assert SECRET not in text and "Tr0ub4dor" not in text and "[REDACTED:openai_key]" in text
    assert [(r["type"], r.get("id")) for r in again[1:-1]] == [(r["type"], r.get("id")) for r in rows[1:-1]]
    with client_on(tmp_path / "again", embeddings) as client:  # a redacted export: unchanged
        client.import_memories(again, user_ids=None)
        assert json.dumps(list(client.export_memories())[1:-1]) == json.dumps(again[1:-1])


def tool_trace_with(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "Edit", "arguments": json.dumps({"file_path": "a.py", "old_string": "k = 1",
                                                         "new_string": f"k = '{SECRET}'"})}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
