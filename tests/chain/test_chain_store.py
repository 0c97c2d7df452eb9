"""Version chain store: rounds, numbering, grouping, reverts, isolation, rendering budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from hy_memory_langgraph.chain.edits import Edit
from hy_memory_langgraph.chain.render import (
    HEADER,
    NAME,
    LinkedThread,
    link_facts,
    render_block,
)
from hy_memory_langgraph.chain.rounds import find_reverts, group_rounds
from hy_memory_langgraph.chain.store import ChainStore, owner_of
from hy_memory_langgraph.fences import read_fences


@pytest.fixture
def store(tmp_path: Path):
    s = ChainStore(tmp_path / "hy_code_chain" / "hy_code.db")
    yield s
    s.close()


def _e(removed: tuple[str, ...], added: tuple[str, ...], *, file: str = "src/a.py",
       symbol: str = "fetch", asked: str = "do it") -> Edit:
    return Edit(file, symbol, removed, added, "edit", 0, asked)


def _rec(store: ChainStore, edits: list[Edit], *, owner: str = "u|ws", branch: str | None = "main",
         day: int = 1, fact: str | None = None) -> int:
    return store.record(owner, branch, edits, request_id=f"r{day}", fact_id=fact,
                        at=f"2024-05-{day:02d}T10:00:00+00:00").hunks


def test_round_numbering_over_three_writes_and_reverts(store: ChainStore) -> None:
    assert _rec(store, [_e(("t = 10",), ("t = 30",), asked="raise timeout")], day=1, fact="f1") == 1
    assert _rec(store, [_e((), ("retries = 3",), asked="add retries")], day=2, fact="f2") == 1
    assert _rec(store, [_e(("t = 30",), ("t = 10",), asked="go back")], day=3, fact="f3") == 1
    [thread] = store.threads_for("u|ws", "main", files=["src/a.py"])
    assert [r.number for r in thread.rounds] == [1, 2, 3]
    assert [r.reverts for r in thread.rounds] == [[], [], [1]]
    assert [r.asked for r in thread.rounds] == ["raise timeout", "add retries", "go back"]
    assert [(r.request_id, r.fact_id, r.at[:10]) for r in thread.rounds] == [
        ("r1", "f1", "2024-05-01"), ("r2", "f2", "2024-05-02"), ("r3", "f3", "2024-05-03")]
    assert _rec(store, [_e(("retries = 3",), ())], day=4) == 1  # pure deletion of v2's line
    assert store.threads_for("u|ws", "main", files=["a.py"])[0].rounds[-1].reverts == [2]


def test_changing_a_line_again_is_a_new_version_not_a_revert() -> None:
    assert find_reverts(["t = 30"], ["t = 60"], [(1, ["t = 10"], ["t = 30"])]) == []
    assert find_reverts(["}"], [], [(1, [], ["}"])]) == []  # punctuation never counts
    assert find_reverts(["a = 1", "b = 2"], [],
                        [(1, [], ["a = 1"]), (2, [], ["b = 2"]), (3, [], ["a = 1"])]) == [2, 3]


def test_several_hunks_of_one_write_form_one_round_per_thread(store: ChainStore) -> None:
    edits = [_e(("a = 1",), ("a = 2",)), _e(("b = 1",), ("b = 2",)),
             _e(("c = 1",), ("c = 2",), symbol="close")]
    assert _rec(store, edits) == 3  # chain_rounds counts hunks
    threads = store.threads_for("u|ws", "main", files=["src/a.py"])
    assert {t.symbol: [r.number for r in t.rounds] for t in threads} == {"fetch": [1], "close": [1]}
    fetch = next(t for t in threads if t.symbol == "fetch").rounds[0]
    assert (fetch.removed, fetch.added, fetch.hunks) == (["a = 1", "b = 1"], ["a = 2", "b = 2"], 2)


def test_successive_edits_in_one_write_cancel_and_retries_are_skipped(store: ChainStore) -> None:
    [draft] = group_rounds([_e(("x = 1",), ("x = 2",), asked="a"), _e(("x = 2",), ("x = 3",), asked="b")])
    assert (draft.removed, draft.added, draft.asked_text) == (["x = 1"], ["x = 3"], "a | b")
    assert _rec(store, [_e(("x = 1",), ("x = 2",))]) == 1
    assert _rec(store, [_e(("x = 1",), ("x = 2",))], day=2) == 0  # same write retried


def test_owner_and_branch_isolation(store: ChainStore) -> None:
    edit = [_e(("t = 1",), ("t = 2",))]
    scopes = [("alice", "github.com/org/repo", "main"), ("bob", "github.com/org/repo", "main"),
              ("alice", "github.com/org/other", "main"), ("alice", "github.com/org/repo", "feat/x"),
              ("alice", "github.com/org/repo", "release-1.2"), ("alice", "github.com/org/repo", None)]
    for user, ws, branch in scopes:
        _rec(store, edit, owner=owner_of(user, ws), branch=branch)
    ids = set()
    for user, ws, branch in scopes:
        threads = store.threads_for(owner_of(user, ws), branch, files=["src/a.py"])
        own = [t for t in threads if t.branch == branch]
        assert len(own) == 1 and [r.number for r in own[0].rounds] == [1]
        ids.add(own[0].id)
        # a named branch also sees the branch-less thread, never another branch
        assert {t.branch for t in threads} <= {branch, None}
    assert len(ids) == len(scopes)
    assert owner_of("u", None) == "u|" and owner_of("a|b", "ws") != owner_of("a", "b|ws")
    assert store.delete_user("alice") == 5
    assert store.threads_for(owner_of("alice", "github.com/org/repo"), "main", any_file=True) == []


def _linked(store: ChainStore, n_rounds: int) -> list[LinkedThread]:
    for day in range(1, n_rounds + 1):
        _rec(store, [_e((f"t = {day - 1}",), (f"t = {day}",), asked=f"make it {day} " + "x" * 60)],
             day=day)
    fact = {"memory_id": "f", "user_id": "u", "workspace_id": "ws", "branch": "main",
            "subject": "src/a.py:fetch", "statement": "timeout in fetch", "files": ["src/a.py"]}
    return link_facts(store, [fact], workspace_id="ws", branch="main")


def test_render_block_versions_marks_and_budget(store: ChainStore) -> None:
    linked = _linked(store, 6)
    block, used = render_block(linked, budget=10_000)
    [region] = read_fences(block)
    assert used == [0] and region.name == NAME
    assert block.splitlines()[0] == HEADER.replace("{nonce}", region.nonce)
    rows = region.rows
    assert rows[0] == {"file": "src/a.py", "symbol": "fetch", "branch": "main"}
    assert rows[1]["version"] == 1 and rows[1]["date"] == "2024-05-01"
    assert rows[1]["asked"].startswith("make it 1 ")
    assert rows[1]["removed"] == ["t = 0"] and rows[1]["added"] == ["t = 1"]
    assert [r["version"] for r in rows[1:]] == [1, 2, 3, 4, 5, 6]
    assert [r.get("current") for r in rows[1:]] == [None] * 5 + [True]
    small, used_small = render_block(linked, budget=800)
    assert len(small) <= 800 and used_small == [0]
    [cut] = read_fences(small)
    assert cut.rows[1]["reason"] == "budget" and cut.rows[1]["omitted"].startswith("v1–")
    assert cut.rows[-1]["version"] == 6 and all(r.get("version") != 1 for r in cut.rows)
    assert render_block(linked, budget=50) == ("", [])


def test_link_facts_by_symbol_mention_and_fact_id(store: ChainStore) -> None:
    _rec(store, [_e(("a",), ("b",), symbol="fetch"), _e(("c",), ("d",), symbol="close")], fact="f1")
    base = {"user_id": "u", "workspace_id": "ws", "branch": "main", "files": ["src/a.py"]}
    facts = [
        {**base, "memory_id": "x1", "subject": "src/a.py", "statement": "changed close()"},
        {**base, "memory_id": "x2", "subject": "src/a.py", "statement": "general cleanup"},
        {**base, "memory_id": "f1", "subject": "other", "statement": "unrelated", "files": []},
        {**base, "memory_id": "x3", "subject": "src/zzz.py", "statement": "close", "files": []},
        {**base, "memory_id": "x4", "user_id": "v", "subject": "src/a.py", "statement": "close"},
    ]
    by_fact: dict[int, set[str]] = {}
    for lt in link_facts(store, facts, workspace_id="ws", branch="main"):
        for i in lt.facts:
            by_fact.setdefault(i, set()).add(lt.thread.symbol)
    assert by_fact == {0: {"close"}, 1: {"fetch", "close"}, 2: {"fetch", "close"}}


def test_budget_drops_last_ranked_threads_and_their_facts(store: ChainStore) -> None:
    for name in ("a", "b", "c"):
        _rec(store, [_e(("x = 1",), ("x = 2",), file=f"src/{name}.py", asked="y" * 100)])
    base = {"user_id": "u", "workspace_id": "ws", "branch": "main", "statement": "edit"}
    facts = [{**base, "memory_id": f"m{n}", "subject": f"src/{n}.py", "files": [f"src/{n}.py"]}
             for n in ("c", "a", "b")]
    linked = link_facts(store, facts, workspace_id="ws", branch="main")
    assert [lt.thread.file for lt in linked] == ["src/c.py", "src/a.py", "src/b.py"]
    full, used = render_block(linked, budget=10_000)
    assert used == [0, 1, 2] and [r["file"] for r in read_fences(full)[0].rows if "file" in r] == [
        "src/c.py", "src/a.py", "src/b.py"]
    cut, used_cut = render_block(linked, budget=len(full) - 10)
    assert len(cut) <= len(full) - 10 and used_cut == [0, 1]
    rows = read_fences(cut)[0].rows
    assert "src/b.py" not in [r.get("file") for r in rows]
    assert rows[-1] == {"omitted_threads": 1, "reason": "budget"}
