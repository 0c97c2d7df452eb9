"""Version chain through the client (both store backends): chain_rounds, best effort,
chain_block / chain_used, the opt-in flag and HCM_BLOCK_OFF, scope isolation."""

from __future__ import annotations

import pytest

from hy_memory_langgraph.chain.store import owner_of
from tests.productivity.support import (
    WS,
    StageScript,
    chain_rows,
    chain_search,
    edit_trace,
    extraction,
    three_chain_writes,
    tool_trace,
)


def test_no_edit_is_zero_not_failure_and_working_never_records(make_client) -> None:
    client = make_client("lite", chain_block_enabled=True)
    plain = client.add(tool_trace(), scene="coding", user_id="u1")
    assert plain["success"] is True and plain["chain_rounds"] == 0
    failed = client.add(edit_trace("x", "        t = 1", "        t = 2", result="Error: no match"),
                        scene="coding", user_id="u1")
    assert failed["chain_rounds"] == 0
    working = client.add(edit_trace("edit the doc", "        a", "        b"), scene="working", user_id="u1")
    assert "chain_rounds" not in working and working["success"] is True
    assert client.context.chain_store.threads_for(owner_of("u1", None), None, any_file=True) == []
    assert "chain_block" not in client.search("doc", scene="working", user_ids=["u1"])


def test_pro_mode_records_the_chain_with_the_fact_id(make_client) -> None:
    script = StageScript({"coding_extract": extraction(subject="src/search.py:fetch",
                                                       statement="search timeout raised to 30 in fetch")})
    client = make_client("pro", script.model(), chain_block_enabled=True)
    result = client.add(edit_trace("Raise the search timeout", "        t = 10", "        t = 30"),
                        scene="coding", user_id="u1", workspace_id=WS, branch="fix/search-timeout")
    assert result["chain_rounds"] == 1 and script.count("coding_extract") == 1
    found = chain_search(client)
    assert found["chain_used"] == [0] and chain_rows(found)[1]["added"] == ["t = 30"]


@pytest.mark.parametrize("branches", [("main", "feat/x"), ("release-1.2", "fix/y")])
def test_branches_and_users_never_share_a_thread(make_client, branches: tuple[str, str]) -> None:
    client = make_client("lite", chain_block_enabled=True)
    one, two = branches
    client.add(edit_trace(f"timeout on {one}", "        t = 10", "        t = 30"), scene="coding",
               user_id="u1", workspace_id=WS, branch=one)
    client.add(edit_trace(f"timeout on {two}", "        t = 10", "        t = 20"), scene="coding",
               user_id="u1", workspace_id=WS, branch=two)
    client.add(edit_trace("timeout other user", "        t = 10", "        t = 99"), scene="coding",
               user_id="u2", workspace_id=WS, branch=one)
    got = chain_search(client, branch=one, user_ids=["u1", "u2"])
    versions = [row for row in chain_rows(got) if "version" in row]
    assert sorted(row["asked"] for row in versions) == [f"timeout on {one}", "timeout other user"]
    assert [row["version"] for row in versions] == [1, 1]  # one thread per user
    assert got["chain_used"] == list(range(len(got["facts"])))


async def test_async_add_reports_chain_rounds(make_client) -> None:
    client = make_client("lite")
    result = await client.aadd(edit_trace("Raise it", "        t = 10", "        t = 30"), scene="coding",
                               user_id="u1")
    assert result["chain_rounds"] == 1


def test_write_without_user_text_takes_the_ask_from_the_previous_write(make_client) -> None:
    client = make_client("lite")
    client.add(tool_trace("Make the search client faster"), scene="coding", user_id="u1",
               session_id="s1")
    tail = edit_trace("unused", "        t = 10", "        t = 30")[1:]  # no user message
    assert client.add(tail, scene="coding", user_id="u1", session_id="s1")["chain_rounds"] == 1
    [thread] = client.context.chain_store.threads_for(owner_of("u1", None), None, any_file=True)
    assert thread.rounds[0].asked == "Make the search client faster"


def test_delete_all_removes_the_users_chain_only(make_client) -> None:
    client = make_client("lite")
    three_chain_writes(client, user="u1")
    three_chain_writes(client, user="u2")
    client.delete_all("u1")
    store = client.context.chain_store
    assert store.threads_for(owner_of("u1", WS), "fix/search-timeout", any_file=True) == []
    assert len(store.threads_for(owner_of("u2", WS), "fix/search-timeout", any_file=True)) == 1
