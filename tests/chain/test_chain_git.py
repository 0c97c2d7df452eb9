"""Version chain, git work-tree source (MEMORY_CODING_CHAIN_REPO_ROOT): a real repo."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.chain.git import GitWorkTree
from hy_memory_langgraph.chain.store import ChainStore, owner_of
from hy_memory_langgraph.fences import read_fences
from tests.productivity.support import tool_trace

ORIGINAL = """import http


class SearchClient:
    def __init__(self, base):
        self.base = base

    def fetch(self, query):
        url = self.base + query
        return http.get(url, timeout=10)
"""


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t",
                           "-c", "commit.gpgsign=false", *args],
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "search.py").write_text(ORIGINAL)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "init")
    return root


def _touch(path: str, user: str) -> list[dict[str, Any]]:
    """A trace that names the file but carries no edit text (the write-routing example of docs/design.md)."""
    return tool_trace(user, tool="apply_patch", args={"path": path}, result="Patch applied successfully")


def _rounds(client: Any, branch: str | None = "main") -> dict[str, list[Any]]:
    threads = client.context.chain_store.threads_for(owner_of("u1", "ws"), branch, any_file=True)
    return {f"{t.file}:{t.symbol}": t.rounds for t in threads}


def test_round_comes_from_git_diff_then_only_new_changes(make_client, repo: Path) -> None:
    client = make_client("lite", chain_repo_root=str(repo), chain_block_enabled=True)
    file = repo / "src" / "search.py"
    expected = _git(repo, "diff", "HEAD")  # nothing yet
    assert expected == ""
    file.write_text(ORIGINAL.replace("timeout=10", "timeout=30"))
    assert "+        return http.get(url, timeout=30)" in _git(repo, "diff", "HEAD")
    first = client.add(_touch("src/search.py", "Raise the timeout"), scene="coding", user_id="u1",
                       workspace_id="ws", branch="main")
    assert first["chain_rounds"] == 1
    [v1] = _rounds(client)["src/search.py:fetch"]
    assert (v1.removed, v1.added, v1.source, v1.asked) == (
        ["        return http.get(url, timeout=10)"], ["        return http.get(url, timeout=30)"],
        "git", "Raise the timeout")
    # same work tree again: nothing new
    assert client.add(_touch("src/search.py", "again"), scene="coding", user_id="u1",
                      workspace_id="ws", branch="main")["chain_rounds"] == 0
    # an absolute path, a second change: only the delta since v1, not the cumulative diff
    file.write_text(ORIGINAL.replace("timeout=10", "timeout=10").replace(
        "        self.base = base", "        self.base = base.rstrip('/')"))
    second = client.add(_touch(str(file), "Strip the slash and go back to 10"), scene="coding",
                        user_id="u1", workspace_id="ws", branch="main")
    assert second["chain_rounds"] == 2
    rounds = _rounds(client)
    assert [(r.number, r.removed, r.added, r.reverts) for r in rounds["src/search.py:fetch"]][1] == (
        2, ["        return http.get(url, timeout=30)"], ["        return http.get(url, timeout=10)"], [1])
    assert rounds["src/search.py:__init__"][0].added == ["        self.base = base.rstrip('/')"]
    found = client.search("timeout", scene="coding", user_ids=["u1"], workspace_id="ws",
                          branch="main", min_score=-1.0)
    [region] = read_fences(found["chain_block"])
    assert any(row.get("reverts") == [1] and row.get("current") for row in region.rows) and found["chain_used"]


def test_trace_edits_win_over_git_and_locate_symbols_in_the_file(make_client, repo: Path) -> None:
    client = make_client("lite", chain_repo_root=str(repo))
    file = repo / "src" / "search.py"
    file.write_text(ORIGINAL.replace("timeout=10", "timeout=30"))
    args = {"file_path": str(file), "old_string": "        return http.get(url, timeout=10)",
            "new_string": "        return http.get(url, timeout=30)"}
    result = client.add(tool_trace("Raise it", tool="Edit", args=args, result="updated"),
                        scene="coding", user_id="u1", workspace_id="ws", branch="main")
    assert result["chain_rounds"] == 1
    rounds = _rounds(client)
    assert list(rounds) == ["src/search.py:fetch"]  # relative path, symbol from the full file
    assert rounds["src/search.py:fetch"][0].source == "edit"
    # the git snapshot was refreshed: the same work tree gives nothing new
    assert client.add(_touch("src/search.py", "check"), scene="coding", user_id="u1",
                      workspace_id="ws", branch="main")["chain_rounds"] == 0


def test_new_untracked_file_and_non_repo_root(tmp_path: Path, repo: Path) -> None:
    store = ChainStore(tmp_path / "chain.db")
    (repo / "src" / "new.py").write_text("def hello():\n    return 1\n")
    edits = GitWorkTree(repo).edits(store, "u|", None, ["src/new.py", "../outside.py", "missing.py"])
    assert [(e.file, e.symbol, e.added) for e in edits] == [
        ("src/new.py", "hello", ("def hello():", "    return 1"))]
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("x = 1\n")
    assert GitWorkTree(plain).edits(store, "u|", None, ["a.py"]) == []
    store.close()
