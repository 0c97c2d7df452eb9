"""The rules every ``hy-memory`` command keeps: a named user, an existing data dir for
reads, envelopes for usage errors, help and errors in command-line terms."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from hy_memory_langgraph.cli.parsers import build_parser
from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.testing import HashingEmbeddings
from tests.cli.test_cli_memories import CODING_TRACE


def _client(data_dir: Path) -> HyMemoryClient:
    config = MemoryConfig.from_env(data_dir=data_dir)
    return HyMemoryClient(mode="lite", config=config, embeddings=HashingEmbeddings(64), embedding_cache=True)


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")} if root.exists() else set()


# ------------------------------------------------------------------------------- the user
def test_a_user_command_without_a_user_names_the_fix_and_writes_nothing(run_json, data_dir: Path) -> None:
    with _client(data_dir) as client:
        client.add("My cat is called Miso", user_id="alice")
    before = _files(data_dir)
    for argv in (["search", "cat name"], ["list"], ["add", "--text", "hi"]):
        code, env = run_json(*argv, "--data-dir", str(data_dir))
        assert code == 2 and env["error"]["code"] == "MISSING_USER", argv
        assert "--user-id" in env["error"]["message"] and "HY_MEMORY_USER_ID" in env["error"]["message"]
    assert _files(data_dir) == before


def test_the_environment_names_the_user_and_every_answer_says_who(run, run_json, data_dir: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with _client(data_dir) as client:
        client.add("My cat is called Miso", user_id="alice")
    monkeypatch.setenv("HY_MEMORY_USER_ID", "alice")
    code, env = run_json("search", "cat name", "--data-dir", str(data_dir))
    assert code == 0 and env["data"]["user_id"] == "alice" and env["data"]["memories"]
    code, out, _ = run("search", "cat name", "--data-dir", str(data_dir))
    assert out.startswith("memories of alice:") and "Miso" in out
    code, out, _ = run("search", "cat name", "-u", "bob", "--data-dir", str(data_dir))
    assert code == 0 and out.strip() == "no memories of bob found"  # the flag wins over the environment


def test_delete_all_never_takes_the_user_from_the_environment(run_json, data_dir: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    with _client(data_dir) as client:
        client.add("My cat is called Miso", user_id="alice")
    monkeypatch.setenv("HY_MEMORY_USER_ID", "alice")
    code, env = run_json("delete", "--all", "--data-dir", str(data_dir))
    assert code == 2 and "explicit --user-id" in env["error"]["message"]
    with _client(data_dir) as client:
        assert client.search("cat", user_ids=["alice"])["memories"]


# --------------------------------------------------------------------------- the data dir
@pytest.mark.parametrize("argv", [
    ["search", "cat", "-u", "alice"], ["list", "-u", "alice"], ["get", "m1"], ["history", "m1"],
    ["export", "-o", "OUT"], ["stats"], ["log", "r1"], ["update", "m1", "new text"], ["delete", "m1"],
    ["workflow", "run", "workflow.memoryPrompt", "-u", "alice"],
])
def test_a_reading_command_refuses_a_data_dir_that_does_not_exist(run_json, tmp_path: Path,
                                                                  argv: list[str]) -> None:
    missing = tmp_path / "memroy"  # a typo
    argv = [str(tmp_path / "out.jsonl") if a == "OUT" else a for a in argv]
    code, env = run_json(*argv, "--data-dir", str(missing))
    assert code == 2 and env["error"]["code"] == "NO_DATA_DIR", env
    assert str(missing) in env["error"]["message"] and "--data-dir" in env["error"]["message"]
    assert not missing.exists() and not (tmp_path / "out.jsonl").exists()


def test_the_data_dir_from_the_environment_is_checked_too(run_json, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nowhere"
    monkeypatch.setenv("MEMORY_DATA_DIR", str(missing))
    code, env = run_json("stats")
    assert code == 2 and "MEMORY_DATA_DIR" in env["error"]["message"] and str(missing) in env["error"]["message"]
    assert not missing.exists()


def test_writing_commands_create_the_data_dir(run_json, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    assert run_json("add", "--text", "I like tea", "-u", "u1", "--data-dir", str(fresh))[0] == 0
    assert fresh.is_dir()
    export = tmp_path / "x.jsonl"
    assert run_json("export", "-o", str(export), "--data-dir", str(fresh))[0] == 0
    other = tmp_path / "other"
    code, env = run_json("import", str(export), "--all-users", "--data-dir", str(other))
    assert code == 0 and env["data"]["complete"] is True and other.is_dir()


# ------------------------------------------------------------------------- update and list
def test_update_replaces_a_chat_memory_and_refuses_the_rest(run, run_json, data_dir: Path) -> None:
    with _client(data_dir) as client:
        memory_id = client.add("I live in Porto", user_id="u1")["memory_ids"][0]
        fact_id = client.add(CODING_TRACE, scene="coding", user_id="u1")["memory_id"]
    code, out, _ = run("update", memory_id, "I live in Lisbon", "--data-dir", str(data_dir))
    assert code == 0 and f"updated {memory_id} of u1 to version 2: I live in Lisbon" in out
    code, env = run_json("get", memory_id, "--data-dir", str(data_dir))
    assert env["data"]["content"] == "I live in Lisbon" and env["data"]["version"] == 2
    code, env = run_json("update", "no-such-id", "x", "--data-dir", str(data_dir))
    assert code == 1 and env["error"]["code"] == "NOT_FOUND"
    code, env = run_json("update", fact_id, "x", "--data-dir", str(data_dir))
    assert code == 2 and env["error"]["code"] == "INVALID_INPUT" and "not edited in place" in env["error"]["message"]
    code, env = run_json("update", memory_id, "  ", "--data-dir", str(data_dir))
    assert code == 2 and "TEXT" in env["error"]["message"]


def test_list_is_newest_first_and_paged(run, run_json, data_dir: Path) -> None:
    with _client(data_dir) as client:
        ids = [client.add(f"note number {i}", user_id="u1", session_id=f"s{i}")["memory_ids"][0]
               for i in range(5)]
        client.update(ids[0], "note number 0, edited")  # updated last: listed first
        fact_id = client.add(CODING_TRACE, scene="coding", user_id="u1")["memory_id"]
        client.add("someone else's note", user_id="u2")
    code, env = run_json("list", "-u", "u1", "--data-dir", str(data_dir))
    listed = [m["memory_id"] for m in env["data"]["memories"]]
    assert code == 0 and listed == [fact_id, ids[0], ids[4], ids[3], ids[2], ids[1]]
    assert env["data"]["user_id"] == "u1" and env["data"]["has_more"] is False
    first = run_json("list", "-u", "u1", "--scene", "chat", "-k", "2", "--data-dir", str(data_dir))[1]["data"]
    second = run_json("list", "-u", "u1", "--scene", "chat", "-k", "2", "--page", "2",
                      "--data-dir", str(data_dir))[1]["data"]
    last = run_json("list", "-u", "u1", "--scene", "chat", "-k", "2", "--offset", "4",
                    "--data-dir", str(data_dir))[1]["data"]
    assert [m["memory_id"] for m in first["memories"] + second["memories"] + last["memories"]] == \
        [ids[0], ids[4], ids[3], ids[2], ids[1]]
    assert first["has_more"] and second["has_more"] and not last["has_more"]
    code, out, _ = run("list", "-u", "u1", "--scene", "chat", "-k", "2", "--data-dir", str(data_dir))
    assert out.splitlines()[0] == "memories of u1, newest first: 1-2 (more: --offset 2)"
    assert "note number 0, edited" in out.splitlines()[1]


def test_list_memories_through_the_client(tmp_path: Path) -> None:
    with _client(tmp_path / "d") as client:
        ids = [client.add(f"note {i}", user_id="u1", session_id=f"s{i}")["memory_ids"][0] for i in range(3)]
        page = client.list_memories("u1", limit=2, offset=1)
        assert [m["memory_id"] for m in page["memories"]] == [ids[1], ids[0]]
        assert all(m["scene"] == "chat" for m in page["memories"]) and page["has_more"] is False
        with pytest.raises(ValueError, match="limit"):
            client.list_memories("u1", limit=0)
        with pytest.raises(ValueError, match="offset"):
            client.list_memories("u1", offset=200_000)


# ---------------------------------------------------------------------------- usage errors
@pytest.mark.parametrize(("argv", "needle"), [
    (["search", "cat", "-k", "abc"], "-k"),
    (["search", "cat", "--limt", "3"], "did you mean --limit?"),
    (["list", "--ofset", "3"], "did you mean --offset?"),
    (["frobnicate"], "invalid choice"),
    (["search"], "QUERY"),
])
def test_usage_errors_are_envelopes_under_json(run, argv: list[str], needle: str) -> None:
    code, out, err = run(*argv, "--json")
    envelope = json.loads(out)
    assert code == 2 and envelope["ok"] is False and envelope["error"]["code"] == "USAGE_ERROR"
    assert needle in envelope["error"]["message"] and err == ""
    code, out, err = run(*argv)  # without --json: usage and the message on stderr
    assert code == 2 and out == "" and err.startswith("usage: ") and needle in err


def test_json_before_the_command_also_gets_an_envelope(run) -> None:
    code, out, _ = run("--json", "search", "cat", "--limt", "3")
    assert code == 2 and json.loads(out)["error"]["code"] == "USAGE_ERROR"


# ------------------------------------------------------------------ help and error wording
def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _parsers(sub)
    return found


def test_help_text_is_plain_text() -> None:
    parsers = _parsers(build_parser("0"))
    assert len(parsers) >= 15
    for parser in parsers:
        text = parser.format_help()
        for markup in ("``", ":mod:", ":meth:", ":class:", ":func:", ":data:", "docs/design.md"):
            assert markup not in text, (parser.prog, markup)


@pytest.mark.parametrize(("argv", "flag", "api_name"), [
    (["search", "cat", "-u", "u1", "--after", "someday"], "--after", "created_after"),
    (["add", "--text", "x", "-u", "u1", "--memory-at", "soon"], "--memory-at", "memory_at"),
])
def test_errors_speak_of_flags_not_parameters(run_json, data_dir: Path, argv: list[str], flag: str,
                                              api_name: str) -> None:
    data_dir.mkdir()
    code, env = run_json(*argv, "--data-dir", str(data_dir))
    assert code == 2 and flag in env["error"]["message"] and api_name not in env["error"]["message"]
