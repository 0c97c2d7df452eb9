"""Deleting facts of a supersede chain: the chain is relinked around the deleted fact,
and a fact it superseded becomes active again when nothing supersedes it any more."""

from __future__ import annotations

from typing import Any

from .support import StageScript, extraction, rows, tool_trace

# ------------------------------------------------ deleting a superseding fact

def _supersede_all(user: str) -> dict[str, Any]:
    ids = [row["id"] for row in rows(user, "candidates")]
    return {"supersede": ids, "reason": "continues the task"}


def _chain(make_client: Any, n: int) -> tuple[Any, list[dict[str, Any]]]:
    script = StageScript({
        "coding_extract": [extraction("src/search.py:SearchClient", f"step {i} of the timeout fix")
                           for i in range(1, n + 1)],
        "fact_reconcile": _supersede_all, "progress_summary": {"summary": "story"}})
    client = make_client("pro", script.model())
    return client, [client.add(tool_trace(), scene="coding", user_id="u1", session_id=f"s{i}")
                    for i in range(n)]


def _found(client: Any) -> list[str]:
    found = client.search("timeout fix", scene="coding", user_ids=["u1"], min_score=-1.0)
    return [f["memory_id"] for f in found["facts"]]


def test_deleting_the_newest_fact_restores_the_one_it_superseded(make_client) -> None:
    client, (r1, r2) = _chain(make_client, 2)
    old, new = r1["memory_id"], r2["memory_id"]
    assert client.get(old)["status"] == "superseded" and _found(client) == [new]
    assert client.delete(new) is True
    restored = client.get(old)
    assert (restored["status"], restored["superseded_by"]) == ("active", None)
    assert "events" not in restored
    assert _found(client) == [old]
    history = client.history(old)
    assert [h["op"] for h in history] == ["INSERT", "SUPERSEDED", "RESTORED"]
    assert history[-1]["related_id"] == new and history[-1]["status"] == "active"
    # deleting the restored fact leaves nothing behind
    assert client.delete(old) is True and _found(client) == []


def test_deleting_a_middle_fact_passes_its_predecessors_to_the_successor(make_client) -> None:
    client, (r1, r2, r3) = _chain(make_client, 3)
    f1, f2, f3 = (r["memory_id"] for r in (r1, r2, r3))
    assert client.delete(f2) is True
    first = client.get(f1)
    assert (first["status"], first["superseded_by"]) == ("superseded", f3)
    assert client.get(f3)["supersedes"] == [f1] and _found(client) == [f3]
    names = {f1: "f1", f2: "f2", f3: "f3"}
    assert [(names[h["memory_id"]], h["op"]) for h in client.history(f3)] == [
        ("f1", "INSERT"), ("f1", "SUPERSEDED"), ("f3", "SUPERSEDE"), ("f2", "DELETE"),
        ("f1", "RELINKED")]
    assert all("content" not in h for h in client.history(f3) if h["memory_id"] == f2)
    assert client.delete(f3) is True
    assert client.get(f1)["status"] == "active" and _found(client) == [f1]
