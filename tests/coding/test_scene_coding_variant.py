"""The coding scene's own storage: files, collections and ids, kept apart from working,
and one client alternating between the two (docs/design.md#storage-and-scoping)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.productivity.support import StageScript, experience, extraction, section, tool_trace


def _ids(found: dict[str, Any]) -> set[str]:
    return {h["memory_id"] for h in found["facts"]} | {h["memory_id"] for h in found["experiences"]}



def test_working_and_coding_never_mix(make_client, backend, tmp_path: Path) -> None:
    script = StageScript({
        "working_extract": extraction("deploy.md", "documented the deploy", [experience("deploy docs")]),
        "coding_extract": extraction("deploy.py", "fixed the deploy script", [experience("deploy script")]),
    })
    client = make_client("pro", script.model())
    working = client.add(tool_trace("deploy"), scene="working", user_id="u1", session_id="s")
    coding = client.add(tool_trace("deploy"), scene="coding", user_id="u1", session_id="s")
    working_ids = set(working["experience_ids"]) | {working["memory_id"]}
    coding_ids = set(coding["experience_ids"]) | {coding["memory_id"]}
    assert script.count("experience_reconcile") == 0 and script.count("fact_reconcile") == 0
    for scene, own, other in (("working", working_ids, coding_ids), ("coding", coding_ids, working_ids)):
        found = client.search("deploy", scene=scene, user_ids=["u1"], min_score=-1.0)
        assert _ids(found) == own and not _ids(found) & other
    # the trace store is shared: the coding write saw the working write as history
    assert "deploy" in section(script.last("coding_extract").user, "history")
    assert "(none)" not in script.last("coding_extract").user.split("</history>", 1)[0]
    for memory_id in working_ids | coding_ids:
        assert client.get(memory_id) is not None
    if backend == "sqlite":
        data = client.config.working_db_path.parent
        assert client.config.working_db_path.name == "coding_memory.db"
        names = {p.name for p in data.iterdir() if p.suffix == ".db"}
        assert {"coding_memory.db", "coding_memory_cv.db", "coding_memory_trace.db"} <= names


def test_one_client_alternates_variants_with_separate_stores(make_client) -> None:
    client = make_client("lite")
    for i in range(3):
        client.add(tool_trace(f"working job {i}"), scene="working", user_id="u1")
        client.add(tool_trace(f"coding job {i}"), scene="coding", user_id="u1")
    stores = client.context.stores
    assert stores.productivity("working") is not stores.productivity("coding")
    for scene in ("working", "coding"):
        found = client.search("job", scene=scene, user_ids=["u1"], min_score=-1.0)
        assert len(found["facts"]) == 3
        assert all(scene in f["statement"] and f["variant"] == scene for f in found["facts"])


def test_collections_are_the_first_namespace_label(make_client) -> None:
    client = make_client("lite")
    client.add(tool_trace(), scene="coding", user_id="user.one", workspace_id="ws")
    store = client.context.stores.productivity("coding")
    namespaces = set(store.list_namespaces())
    assert ("coding_memory_working_facts_cv", "user%2Eone") in namespaces
    assert all(not ns[0].endswith("_facts") for ns in namespaces)


def test_collection_names_stay_as_configured(make_client, tmp_path: Path) -> None:
    client = make_client("lite", env={"MEMORY_CODING_DB_PATH": str(tmp_path / "team.memory.db")})
    repo = client.context.productivity_repo("working")
    assert client.context.config.fact_collection("working") == "team.memory_working_facts"
    assert repo.namespace("fact", "u1") == ("team%2Ememory_working_facts", "u1")
