"""HyMemoryClient delegates memory_prompt / memory_extract (and their async twins)."""

from __future__ import annotations

from typing import Any

from tests.workflow.conftest import ALIAS_ZH, WF_ID, msgs


def test_client_files_live_under_config_workflow_dir(make_client: Any, backend: str) -> None:
    client = make_client()
    assert client.memory_extract("u1", msg_list=msgs(ALIAS_ZH), workflow_id=WF_ID)["saved"] is True
    if backend == "postgres":  # MEMORY_DB_URL: the same documents, in the database
        assert not client.config.workflow_dir.exists()
        assert client.workflow.files.read("u1", "global")
    else:
        assert (client.config.workflow_dir / "u1" / "memory.md").is_file()
    prompt = client.memory_prompt("u1", workflow_id=WF_ID)
    assert prompt["available"] is True and "问题流程" in prompt["memoryPrompt"]


def test_client_passes_the_oa_context_provider(make_client: Any) -> None:
    client = make_client(oa_context_provider=lambda user_id: {"version": "10.0.9909.01"})
    oa = client.memory_prompt("u1")["oaContext"]
    assert oa["smartGrouping"] is True and oa["version"] == "10.0.9909.01"


async def test_async_twins(make_client: Any) -> None:
    client = make_client()
    result = await client.amemory_extract("u1", user_message=["每页显示30条"], assistant_message=["好"])
    assert result["saved"] is True and result["entries"][0]["dimension"] == "user"
    prompt = await client.amemory_prompt("u1")
    assert "列表每页显示30条" in prompt["memoryPrompt"]
