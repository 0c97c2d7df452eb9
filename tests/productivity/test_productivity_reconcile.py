"""Experience reconcile (ADD/UPDATE/DELETE/SKIP) and the fact supersede chain."""

from __future__ import annotations

from typing import Any

from .support import (
    StageScript,
    experience,
    extraction,
    rows,
    section,
    tool_trace,
)

TASK = "fix httpx ReadTimeout in the search client"


def _client_with(make_client: Any, reconcile: Any, drafts: list[dict[str, Any]] | None = None,
                 seed: list[dict[str, Any]] | None = None) -> tuple[Any, StageScript, list[str]]:
    """A client whose store holds ``seed`` experiences; the next write extracts ``drafts``."""
    first = extraction("seed.py", "seeded", seed or [experience(TASK, "raise the timeout")])
    second = extraction("other.py", "second write",
                        drafts or [experience(TASK, "use httpx.Timeout(30)", ["ReadTimeout"])])
    script = StageScript({"coding_extract": [first, second], "experience_reconcile": reconcile})
    client = make_client("pro", script.model())
    seeded = client.add(tool_trace(), scene="coding", user_id="u1")
    assert script.count("experience_reconcile") == 0  # nothing stored yet: no call
    return client, script, seeded["experience_ids"]


def _active_tasks(client: Any) -> list[str]:
    found = client.search(TASK, scene="coding", user_ids=["u1"], min_score=-1.0)
    return sorted(e["task"] for e in found["experiences"])


def _op(op: str, target: str | None = "e_0", merged: dict[str, Any] | None = None,
        draft: str = "d0") -> dict[str, Any]:
    return {"operations": [{"draft": draft, "op": op, "target": target, "merged": merged}]}


def test_add_keeps_both(make_client) -> None:
    client, script, _ = _client_with(make_client, _op("ADD", None))
    result = client.add(tool_trace(), scene="coding", user_id="u1")
    assert script.count("experience_reconcile") == 1
    assert result["ops_summary"] == {"ADD": 1, "UPDATE": 0, "DELETE": 0, "SKIP": 0}
    assert _active_tasks(client) == [TASK, TASK]


def test_update_merges_into_the_target(make_client) -> None:
    merged = {"task": TASK, "search_keys": ["ReadTimeout", "httpx timeout"],
              "solution": "use httpx.Timeout(30); retries do not help", "boundary_envs": ["httpx 0.27"],
              "confidence": 0.9}
    client, script, (seed_id,) = _client_with(make_client, _op("UPDATE", "e_0", merged))
    result = client.add(tool_trace(), scene="coding", user_id="u1")
    assert result["ops"] == [{"op": "UPDATE", "memory_id": seed_id, "task": TASK}]
    assert result["experience_ids"] == [seed_id]
    stored = client.get(seed_id)
    assert stored["solution"] == merged["solution"] and stored["version"] == 2
    assert stored["search_keys"] == ["ReadTimeout", "httpx timeout"]
    assert [h["op"] for h in client.history(seed_id)] == ["ADD", "UPDATE"]
    assert _active_tasks(client) == [TASK]
    # the draft and its candidate are in the prompt, under the alias
    drafts = rows(script.last("experience_reconcile").user, "drafts")
    assert drafts[0]["draft"] == "d0" and drafts[0]["task"] == TASK
    assert {"candidate": "e_0", "of": "d0"}.items() <= drafts[1].items()


def test_update_without_merged_merges_deterministically(make_client) -> None:
    client, _, (seed_id,) = _client_with(make_client, _op("UPDATE", "e_0", None))
    client.add(tool_trace(), scene="coding", user_id="u1")
    stored = client.get(seed_id)
    assert "use httpx.Timeout(30)" in stored["solution"] and "raise the timeout" in stored["solution"]
    assert stored["search_keys"] == ["ReadTimeout"]


def test_delete_retires_the_target_and_adds_the_draft(make_client) -> None:
    client, _, (seed_id,) = _client_with(make_client, _op("DELETE", "e_0"))
    result = client.add(tool_trace(), scene="coding", user_id="u1")
    (op,) = result["ops"]
    assert op["op"] == "DELETE" and op["deleted_id"] == seed_id and op["memory_id"] != seed_id
    assert result["experience_ids"] == [op["memory_id"]]
    assert client.get(seed_id)["status"] == "deleted"
    found = client.search(TASK, scene="coding", user_ids=["u1"], min_score=-1.0)
    assert [e["memory_id"] for e in found["experiences"]] == [op["memory_id"]]


def test_skip_writes_nothing(make_client) -> None:
    client, _, (seed_id,) = _client_with(make_client, _op("SKIP", "e_0"))
    result = client.add(tool_trace(), scene="coding", user_id="u1")
    assert result["ops"] == [{"op": "SKIP", "memory_id": seed_id, "task": TASK}]
    assert result["experience_ids"] == [] and client.get(seed_id)["version"] == 1


def test_invalid_targets_become_add(make_client) -> None:
    drafts = [experience(TASK, "use httpx.Timeout(30)"), experience("deploy the staging stack", "make deploy")]
    seed = [experience(TASK, "raise the timeout"), experience("deploy the staging stack", "helm up")]
    reply = {"operations": [
        {"draft": "d0", "op": "UPDATE", "target": "e_9", "merged": None},  # never offered
        {"draft": "d1", "op": "UPDATE", "target": "e_0", "merged": None},  # offered to d0 only
    ]}
    client, script, _ = _client_with(make_client, reply, drafts=drafts, seed=seed)
    result = client.add(tool_trace(), scene="coding", user_id="u1")
    assert [op["op"] for op in result["ops"]] == ["ADD", "ADD"]
    assert script.count("experience_reconcile") == 1


def test_garbage_or_failure_adds_all_and_unhandled_drafts_are_added(make_client) -> None:
    drafts = [experience(TASK, "a"), experience(TASK + " again", "b")]
    for reply in ("I cannot decide.", _op("SKIP", "e_0", draft="d0")):
        client, _, _ = _client_with(make_client, reply, drafts=drafts)
        result = client.add(tool_trace(), scene="coding", user_id="u1")
        expected = ["ADD", "ADD"] if isinstance(reply, str) else ["SKIP", "ADD"]
        assert [op["op"] for op in result["ops"]] == expected


def test_no_candidates_no_reconcile_call(make_client) -> None:
    client, script, _ = _client_with(make_client, _op("SKIP"),
                                     drafts=[experience("bake sourdough bread at home", "levain")])
    result = client.add(tool_trace(), scene="coding", user_id="u1")
    assert script.count("experience_reconcile") == 0 and result["ops"][0]["op"] == "ADD"


# ------------------------------------------------------------------------------- facts


def _supersede_all(user: str) -> dict[str, Any]:
    ids = [row["id"] for row in rows(user, "candidates")]
    return {"supersede": ids, "reason": "continues the task"}


def _chain_client(make_client: Any, n: int, **replies: Any) -> tuple[Any, StageScript, list[dict[str, Any]]]:
    statements = [extraction("src/search.py:SearchClient", f"step {i} of the timeout fix")
                  for i in range(1, n + 1)]
    script = StageScript({"coding_extract": statements, "fact_reconcile": _supersede_all,
                          "progress_summary": {"summary": "the whole story"}, **replies})
    client = make_client("pro", script.model())
    results = [client.add(tool_trace(), scene="coding", user_id="u1", session_id=f"s{i}")
               for i in range(n)]
    return client, script, results


def test_three_writes_form_a_chain(make_client) -> None:
    client, script, (r1, r2, r3) = _chain_client(make_client, 3)
    assert script.stages() == ["coding_extract", "coding_extract", "fact_reconcile", "progress_summary",
                               "coding_extract", "fact_reconcile", "progress_summary"]
    assert r1["fact_ops_summary"] == {"INSERT": 1, "SUPERSEDE": 0}
    assert r3["fact_ops"][1] == {"op": "SUPERSEDE", "memory_id": r2["memory_id"],
                                 "superseded_by": r3["memory_id"]}
    f1, f2, f3 = (client.get(r["memory_id"]) for r in (r1, r2, r3))
    assert (f1["status"], f1["superseded_by"]) == ("superseded", f2["memory_id"])
    assert (f2["status"], f2["superseded_by"]) == ("superseded", f3["memory_id"])
    assert f3["status"] == "active" and f3["summary"] == "the whole story"
    # only the active fact is offered (f1 left the candidates), across sessions
    assert len(rows(script.calls[5].user, "candidates")) == 1
    chain = rows(script.last("progress_summary").user, "chain")
    assert ["step 1" in chain[0]["statement"], "step 2" in chain[1]["statement"], len(chain)] == [True, True, 2]
    found = client.search("timeout fix", scene="coding", user_ids=["u1"], min_score=-1.0)
    assert [f["memory_id"] for f in found["facts"]] == [f3["memory_id"]]
    ids = {f1["memory_id"]: "f1", f2["memory_id"]: "f2", f3["memory_id"]: "f3"}
    assert [(ids[h["memory_id"]], h["op"]) for h in client.history(f3["memory_id"])] == [
        ("f1", "INSERT"), ("f2", "SUPERSEDE"), ("f1", "SUPERSEDED"),
        ("f3", "SUPERSEDE"), ("f2", "SUPERSEDED")]


def test_summary_reads_at_most_eight_generations(make_client) -> None:
    _, script, _ = _chain_client(make_client, 10)
    chain = rows(script.last("progress_summary").user, "chain")
    assert len(chain) == 8 and "step 2 " in chain[0]["statement"] and "step 9 " in chain[-1]["statement"]
    assert script.count("progress_summary") == 9


def test_fact_reconcile_invalid_target_or_failure_inserts_only(make_client) -> None:
    for reply in ({"supersede": ["f_7", "fact_coding_x"]}, "timeout"):
        client, script, (r1, r2) = _chain_client(make_client, 2, fact_reconcile=reply)
        assert script.count("fact_reconcile") == 1 and script.count("progress_summary") == 0
        assert r2["fact_ops_summary"] == {"INSERT": 1, "SUPERSEDE": 0}
        assert client.get(r1["memory_id"])["status"] == "active"


def test_other_subject_or_branch_is_no_candidate(make_client) -> None:
    script = StageScript({"coding_extract": [
        extraction("src/a.py", "a1"), extraction("src/b.py", "b1"),
        extraction("src/a.py:run", "a2"), extraction("src/a.py", "a3"),
    ], "fact_reconcile": _supersede_all})
    client = make_client("pro", script.model())
    client.add(tool_trace(), scene="coding", user_id="u1", workspace_id="w", branch="x")
    client.add(tool_trace(), scene="coding", user_id="u1", workspace_id="w", branch="x")
    assert script.count("fact_reconcile") == 0
    client.add(tool_trace(), scene="coding", user_id="u1", branch="y")  # no workspace, other branch
    assert script.count("fact_reconcile") == 0
    client.add(tool_trace(), scene="coding", user_id="u1", workspace_id="w", branch="x")
    assert script.count("fact_reconcile") == 1  # same subject key (path of src/a.py:run too)
    assert "src/a.py" in section(script.last("fact_reconcile").user, "candidates")


def test_older_write_never_supersedes_a_newer_fact(make_client) -> None:
    script = StageScript({"coding_extract": extraction(), "fact_reconcile": _supersede_all})
    client = make_client("pro", script.model())
    client.add(tool_trace(), scene="coding", user_id="u1", memory_at="2024-05-16T10:00:00Z")
    client.add(tool_trace(), scene="coding", user_id="u1", memory_at="2024-05-01T10:00:00Z")
    assert script.count("fact_reconcile") == 0
