"""Coding search: facts and experiences plus the version chain block, on and off
(``MEMORY_CODING_CHAIN_BLOCK_ENABLED``, ``HCM_BLOCK_OFF``), keys always present, and a
chain failure never failing the search (docs/design.md#coding-version-chain)."""

from __future__ import annotations

import logging
from typing import Any

from hy_memory_langgraph.chain.store import owner_of
from tests.productivity.support import (
    WS,
    chain_rows,
    chain_search,
    edit_trace,
    three_chain_writes,
)


def test_chain_rounds_and_block_over_three_writes(make_client) -> None:
    client = make_client("lite", chain_block_enabled=True)
    results = three_chain_writes(client)
    assert [r["chain_rounds"] for r in results] == [1, 1, 1]
    found = chain_search(client)
    assert len(found["facts"]) == 3 and found["chain_used"] == [0, 1, 2]
    thread, v1, v2, v3 = chain_rows(found)
    assert thread == {"file": "src/search.py", "symbol": "fetch", "branch": "fix/search-timeout"}
    assert v1 == {"version": 1, "date": "2024-05-01", "asked": "Raise the search timeout to 30 seconds",
                  "removed": ["t = 10"], "added": ["t = 30"]}
    assert "retries = 3" in v2["added"] and v2["version"] == 2
    assert v3 == {"version": 3, "date": "2024-05-03", "asked": "Revert the search timeout back to 10 seconds",
                  "reverts": [1], "current": True, "removed": ["t = 30"], "added": ["t = 10"]}
    [thread] = client.context.chain_store.threads_for(owner_of("u1", WS), "fix/search-timeout",
                                                      files=["src/search.py"])
    fact_ids = [r["memory_id"] for r in results]
    assert [(r.number, r.fact_id, r.request_id) for r in thread.rounds] == [
        (i + 1, fact_ids[i], results[i]["request_id"]) for i in range(3)]


def test_flag_off_by_default_env_on_and_hcm_block_off(make_client) -> None:
    off = make_client("lite")
    three_chain_writes(off)
    got = chain_search(off)
    assert (got["chain_block"], got["chain_used"]) == ("", []) and len(got["facts"]) == 3
    on = make_client("lite", env={"MEMORY_CODING_CHAIN_BLOCK_ENABLED": "true"})
    three_chain_writes(on)
    assert [row.get("file") for row in chain_rows(chain_search(on)) if "file" in row] == ["src/search.py"]
    ablated = make_client("lite", env={"MEMORY_CODING_CHAIN_BLOCK_ENABLED": "true", "HCM_BLOCK_OFF": "1"})
    three_chain_writes(ablated)
    got = chain_search(ablated)
    assert (got["chain_block"], got["chain_used"]) == ("", []) and len(got["facts"]) == 3


def test_chain_failure_never_fails_write_or_search(make_client, monkeypatch, caplog) -> None:
    client = make_client("lite", chain_block_enabled=True)

    def boom() -> Any:
        raise RuntimeError("chain db unavailable")

    monkeypatch.setattr(client.context.stores, "chain", boom)
    with caplog.at_level(logging.WARNING, logger="hy_memory_langgraph.flows.productivity.chain"):
        result = client.add(edit_trace("Raise it", "        t = 10", "        t = 30"), scene="coding",
                            user_id="u1", workspace_id=WS, branch="fix/search-timeout")
        found = chain_search(client)
    assert result["success"] is True and result["chain_rounds"] == 0 and result["fact_ids"]
    assert found["facts"] and (found["chain_block"], found["chain_used"]) == ("", [])
    assert sum("coding chain" in r.getMessage() for r in caplog.records) == 2
