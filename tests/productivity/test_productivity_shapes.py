"""Return shapes (docs/design.md#return-shapes), lite mode, verbatim fallback, search layers, client ops."""

from __future__ import annotations

from typing import Any

from hy_memory_langgraph.testing import RaisingChatModel

from .support import (
    StageScript,
    experience,
    extraction,
    tool_trace,
)

WRITE_KEYS = {"success", "scene", "request_id", "ops", "ops_summary", "experience_ids", "fact_ops",
              "fact_ops_summary", "fact_ids", "memory_id", "elapsed_ms"}
SEARCH_KEYS = {"request_id", "scene", "facts", "experiences", "elapsed_ms"}


def test_exact_write_and_search_keys(make_client) -> None:
    script = StageScript({"working_extract": extraction(experiences=[experience("export pdf")]),
                          "coding_extract": extraction(experiences=[experience("fix timeout")])})
    client = make_client("pro", script.model())
    working = client.add(tool_trace(), scene="working", user_id="u1")
    coding = client.add(tool_trace(), scene="coding", user_id="u1")
    assert set(working) == WRITE_KEYS and set(coding) == WRITE_KEYS | {"chain_rounds"}
    assert coding["chain_rounds"] == 0 and working["success"] is True
    assert working["scene"] == coding["scene"] == "productivity"
    assert working["fact_ids"] == [working["memory_id"]] and len(working["experience_ids"]) == 1
    assert isinstance(working["elapsed_ms"], float)
    w = client.search("export pdf", scene="working", user_ids=["u1"])
    c = client.search("fix timeout", scene="coding", user_ids=["u1"])
    assert set(w) == SEARCH_KEYS and set(c) == SEARCH_KEYS | {"chain_block", "chain_used"}
    assert (c["chain_block"], c["chain_used"], c["scene"]) == ("", [], "productivity")


def test_lite_mode_zero_calls_and_deterministic_fact(make_client) -> None:
    raising = RaisingChatModel.create()
    client = make_client("lite", raising)
    trace = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "The build is broken, please fix it."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "make test"}'}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "compiling\nError: undefined symbol foo\nmake: *** [test] Error 2"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "edit_file",
                                                          "arguments": '{"path": "src/foo.c", "old": "a", "new": "b"}'}},
        ]},
        {"role": "tool", "tool_call_id": "c2", "content": "ok"},
        {"role": "assistant", "content": "Fixed: foo is now declared in src/foo.c and make test passes."},
    ]
    first = client.add(trace, scene="coding", user_id="u1")
    second = client.add(trace, scene="coding", user_id="u2")
    assert raising.call_count == 0
    assert first["ops"] == [] and first["experience_ids"] == [] and first["chain_rounds"] == 0
    assert first["fact_ops_summary"] == {"INSERT": 1, "SUPERSEDE": 0}
    fact, other = client.get(first["memory_id"]), client.get(second["memory_id"])
    assert fact["statement"] == other["statement"] == (
        "Request: The build is broken, please fix it.\n"
        "Tools: bash, edit_file\n"
        "Files: src/foo.c\n"
        "Commands: `make test`\n"
        "Errors: bash: Error: undefined symbol foo; bash: make: *** [test] Error 2\n"
        "Outcome: Fixed: foo is now declared in src/foo.c and make test passes."
    )
    assert fact["subject"] == "src/foo.c" and fact["files"] == ["src/foo.c"]
    assert fact["details"].startswith("$ make test") and fact["source"] == "lite"
    assert "You are a coding agent" not in fact["statement"]
    # hashing embeddings put this query below their unrelated floor (calibrated < 0): no gate
    found = client.search("build broken undefined symbol foo", scene="coding", user_ids=["u1", "u2"],
                          min_score=-1.0)
    assert {f["memory_id"] for f in found["facts"]} == {first["memory_id"], second["memory_id"]}
    assert found["experiences"] == [] and raising.call_count == 0
    assert client.context.llm is None and client.llm_usage.total_calls == 0


def test_lite_fact_in_chinese_uses_chinese_labels(make_client) -> None:
    client = make_client("lite")
    result = client.add(tool_trace("把周报导出成 PDF", tool="export", args={"file": "周报.docx"},
                                   result="导出失败：权限不足", answer="已改用另存为，导出成功。"),
                        scene="working", user_id="u1")
    statement = client.get(result["memory_id"])["statement"]
    assert statement.splitlines() == ["请求: 把周报导出成 PDF", "工具: export", "文件: 周报.docx",
                                      "错误: export: 导出失败：权限不足", "结果: 已改用另存为，导出成功。"]


def test_verbatim_fallback_on_and_off(make_client) -> None:
    for enabled in (False, True):
        script = StageScript({"working_extract": {"experiences": [], "fact": None}})
        client = make_client("pro", script.model(),
                             env={"MEMORY_CODING_VERBATIM_FALLBACK_ENABLED": str(enabled).lower()})
        result = client.add(tool_trace("Rename the Q3 folder to Q3-final", tool="move_file",
                                       args={"source_path": "Q3", "destination_path": "Q3-final"}),
                            scene="working", user_id="u1")
        if not enabled:
            assert result["memory_id"] is None and result["fact_ids"] == [] and result["fact_ops"] == []
            continue
        fact = client.get(result["memory_id"])
        assert fact["statement"] == "Rename the Q3 folder to Q3-final" and fact["source"] == "verbatim"
        assert '{"tool": "move_file", "result": "Patch applied successfully"}' in fact["details"].splitlines()
        assert fact["files"] == ["Q3", "Q3-final"]


def test_extraction_failure_without_fallback_stores_the_lite_fact(make_client) -> None:
    script = StageScript({"coding_extract": "not json at all"})
    client = make_client("pro", script.model())
    result = client.add(tool_trace(), scene="coding", user_id="u1")
    assert result["success"] is True and result["ops"] == []
    assert result["fallback"] == "extract_failed" and result["fact_ids"] == [result["memory_id"]]
    assert client.get(result["memory_id"])["source"] == "lite"


def test_touched_files_are_merged_into_fact_and_naming_experiences(make_client) -> None:
    patch = "*** Begin Patch\n*** Update File: src/retry.py\n@@\n-a\n+b\n*** End Patch"
    script = StageScript({"coding_extract": extraction(
        "src/search.py", "fixed", [experience("retry in retry.py", "loop"), experience("unrelated", "x")],
        files=["README.md"])})
    client = make_client("pro", script.model())
    trace = tool_trace(args={"path": "src/search.py"}) + tool_trace(
        "and the retry", tool="apply_patch", args={"input": patch}, call_id="c2")
    result = client.add(trace, scene="coding", user_id="u1")
    fact = client.get(result["memory_id"])
    assert fact["files"] == ["README.md", "src/search.py", "src/retry.py"]
    retry, unrelated = (client.get(i) for i in result["experience_ids"])
    assert retry["files"] == ["src/retry.py"] and unrelated["files"] == []


def test_search_gates_limits_links_and_users(make_client) -> None:
    script = StageScript({"working_extract": [
        extraction("budget.xlsx", "built the travel budget spreadsheet",
                   [experience("build a travel budget spreadsheet", "sum per category")]),
        extraction("budget.xlsx", "updated the travel budget spreadsheet",
                   [experience("convert currencies in a spreadsheet", "use GOOGLEFINANCE")]),
        extraction("poem.txt", "wrote a poem about autumn leaves", []),
    ]})
    client = make_client("pro", script.model())
    for user in ("u1", "u2", "u1"):
        client.add(tool_trace(), scene="working", user_id=user)
    found = client.search("travel budget spreadsheet", scene="working", user_ids=["u1", "u2"])
    subjects = [f["subject"] for f in found["facts"]]
    assert subjects == ["budget.xlsx", "budget.xlsx"]  # the poem is below the 0.30 gate
    assert all(f["similarity"] >= 0.30 for f in found["facts"])
    assert found["experiences"][0]["via"] == "fact"
    assert found["experiences"][0]["linked_fact_id"] == found["facts"][0]["memory_id"]
    one = client.search("travel budget spreadsheet", scene="working", user_ids=["u1", "u2"], limit=1)
    assert len(one["facts"]) == 1 and len(one["experiences"]) == 1
    only_u2 = client.search("travel budget spreadsheet", scene="working", user_ids=["u2"])
    assert [f["user_id"] for f in only_u2["facts"]] == ["u2"]


def test_get_delete_history_and_delete_all(make_client) -> None:
    reply = extraction(experiences=[experience("fix timeout")])
    script = StageScript({"coding_extract": reply, "working_extract": reply})
    client = make_client("pro", script.model())
    first = client.add(tool_trace(), scene="coding", user_id="u1")
    exp_id, fact_id = first["experience_ids"][0], first["memory_id"]
    assert client.get(exp_id)["kind"] == "experience" and client.get(fact_id)["kind"] == "fact"
    assert "embed_text" not in client.get(fact_id)
    assert [h["op"] for h in client.history(exp_id)] == ["ADD"]
    assert client.delete(exp_id) is True and client.get(exp_id) is None
    assert client.delete(exp_id) is False
    assert [(h["op"], "content" in h) for h in client.history(exp_id)] == [("DELETE", False)]
    assert client.get("fact_working_" + "0" * 32) is None
    client.add(tool_trace(), scene="working", user_id="u1")
    client.add(tool_trace(), scene="working", user_id="u2")
    assert client.delete_all("u1") == 3  # 1 coding fact + 1 working fact + 1 working experience
    assert client.get(fact_id) is None
    assert client.search("timeout", scene="working", user_ids=["u1"], min_score=-1.0)["facts"] == []
    assert len(client.search("timeout", scene="working", user_ids=["u2"], min_score=-1.0)["facts"]) == 1


async def test_async_twins(make_client) -> None:
    client = make_client("lite")
    result = await client.aadd(tool_trace(), scene="coding", user_id="u1")
    found = await client.asearch("timeout search client", scene="coding", user_ids=["u1"],
                                 min_score=-1.0)  # hashing embeddings: see above
    assert found["facts"][0]["memory_id"] == result["memory_id"]
    assert (await client.aget(result["memory_id"]))["status"] == "active"


def _search_once(client: Any) -> dict[str, Any]:
    return client.search("x", scene="working", user_ids=["nobody"])


def test_empty_search(make_client) -> None:
    found = _search_once(make_client("lite"))
    assert found["facts"] == [] and found["experiences"] == []
