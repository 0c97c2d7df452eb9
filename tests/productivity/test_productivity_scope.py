"""Workspace/branch scoping and working/coding isolation (docs/design.md#storage-and-scoping)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hy_memory_langgraph.repos.filters import in_scope, scope_filter

from .support import (
    StageScript,
    experience,
    extraction,
    tool_trace,
)

ROWS: dict[str, tuple[str | None, str | None]] = {
    "A": (None, None), "B": ("ws1", None), "C": ("ws1", "b1"), "D": ("ws1", "b2"), "E": ("ws2", "b1"),
}
TRUTH: list[tuple[str | None, str | None, set[str]]] = [
    (None, None, {"A", "B", "C", "D", "E"}),
    (None, "b1", {"A", "B", "C", "D", "E"}),  # branch alone does not filter
    ("ws1", None, {"B", "C", "D"}),
    ("ws1", "b1", {"B", "C"}),  # NULL branch kept
    ("ws1", "b2", {"B", "D"}),
    ("ws1", "b9", {"B"}),
    ("ws2", "b1", {"E"}),
    ("ws3", None, set()),
]


def _tag(hit: dict[str, Any]) -> str:
    return hit["statement"].split("row-", 1)[1][0]


def test_scope_truth_table_for_facts(make_client) -> None:
    client = make_client("lite")
    for tag, (ws, branch) in ROWS.items():
        client.add(tool_trace(f"row-{tag} rotate the deploy keys"), scene="working", user_id="u1",
                   workspace_id=ws, branch=branch)
    for ws, branch, expected in TRUTH:
        found = client.search("rotate the deploy keys", scene="working", user_ids=["u1"],
                              workspace_id=ws, branch=branch, min_score=-1.0)
        assert {_tag(h) for h in found["facts"]} == expected, (ws, branch)


@pytest.mark.parametrize(("ws", "branch", "expected"), TRUTH)
def test_scope_helpers_agree_with_the_truth_table(ws: str | None, branch: str | None,
                                                  expected: set[str]) -> None:
    rows = {tag: SimpleNamespace(workspace_id=w, branch=b) for tag, (w, b) in ROWS.items()}
    assert {tag for tag, row in rows.items() if in_scope(row, ws, branch)} == expected
    where = scope_filter(ws, branch)
    if ws and branch:
        assert where == {"workspace_id": ws, "$or": [{"branch": branch}, {"branch": None}]}
    elif ws:
        assert where == {"workspace_id": ws}
    else:
        assert where == {}


def test_experience_candidates_respect_scope(make_client) -> None:
    script = StageScript({"coding_extract": extraction(experiences=[experience("rotate deploy keys")]),
                          "experience_reconcile": {"operations": []}})
    client = make_client("pro", script.model())
    client.add(tool_trace(), scene="coding", user_id="u1", workspace_id="ws1", branch="b1")
    client.add(tool_trace(), scene="coding", user_id="u1", workspace_id="ws1", branch="b2")
    client.add(tool_trace(), scene="coding", user_id="u1", workspace_id="ws2")
    client.add(tool_trace(), scene="coding", user_id="u2", workspace_id="ws1", branch="b1")
    assert script.count("experience_reconcile") == 0
    client.add(tool_trace(), scene="coding", user_id="u1", workspace_id="ws1", branch="b1")
    assert script.count("experience_reconcile") == 1
    client.add(tool_trace(), scene="coding", user_id="u1")  # no workspace: every scope
    assert script.count("experience_reconcile") == 2


def test_fact_search_and_experiences_are_filtered_by_scope(make_client) -> None:
    script = StageScript({"working_extract": [
        extraction("deck.pptx", "exported the deck", [experience("export slides to pdf")]),
        extraction("report.docx", "wrote the report", [experience("write the quarterly report")]),
    ]})
    client = make_client("pro", script.model())
    client.add(tool_trace("export"), scene="working", user_id="u1", workspace_id="ws1")
    client.add(tool_trace("report"), scene="working", user_id="u1", workspace_id="ws2")
    found = client.search("export slides to pdf", scene="working", user_ids=["u1"],
                          workspace_id="ws2", min_score=-1.0)
    assert [f["subject"] for f in found["facts"]] == ["report.docx"]
    assert [e["task"] for e in found["experiences"]] == ["write the quarterly report"]


# --------------------------------------------------------- dotted db file name

def test_dot_in_db_file_name_keeps_working_and_coding_writes_valid(make_client, tmp_path: Path) -> None:
    for mode in ("lite", "pro"):
        llm = StageScript({"working_extract": extraction(), "coding_extract": extraction()}).model()
        client = make_client(mode, llm if mode == "pro" else None,
                             env={"MEMORY_CODING_DB_PATH": str(tmp_path / f"{mode}.team.memory.db")})
        for scene in ("working", "coding"):
            result = client.add(tool_trace(), scene=scene, user_id="u.1")
            assert result["success"] is True and result["memory_id"]
            found = client.search("timeout search client", scene=scene, user_ids=["u.1", "u2"],
                                  min_score=-1.0)
            assert [f["memory_id"] for f in found["facts"]] == [result["memory_id"]]
            assert client.get(result["memory_id"])["memory_id"] == result["memory_id"]
            assert client.delete(result["memory_id"]) is True
