"""Workflow documents in a database (``MEMORY_DB_URL``) give the same results as the files."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.client import WorkflowMemoryService
from hy_memory_langgraph.workflow.database import WorkflowDatabase
from hy_memory_langgraph.workflow.files import WorkflowDocuments, WorkflowFiles
from tests.workflow.conftest import ALIAS_ZH, ALIAS_ZH_PENDING, WF_ID, msgs
from tests.workflow.support import prompt_text

SAVES: list[dict[str, Any]] = [
    {"msg_list": msgs(ALIAS_ZH_PENDING)},
    {"msg_list": msgs(ALIAS_ZH), "workflow_id": WF_ID},
    {"user_message": ["每页显示30条"], "assistant_message": ["好"]},
    {"user_message": ['在该流程中"成本中心"指"部门编码"字段'], "assistant_message": [], "workflow_id": WF_ID},
    {"msg_list": msgs(ALIAS_ZH)},  # a duplicate
]


def _run(documents: WorkflowDocuments) -> tuple[list[list[tuple[str, str]]], list[dict[str, Any]]]:
    service = WorkflowMemoryService(documents)
    saved = [[(e["status"], e["file"]) for e in service.memory_extract("u1", **args)["entries"]]
             for args in SAVES]
    prompts = [service.memory_prompt("u1"), service.memory_prompt("u1", workflow_id=WF_ID),
               service.memory_prompt("nobody")]
    return saved, [{**p, "memoryPrompt": prompt_text(p["memoryPrompt"])} for p in prompts]  # nonce aside


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else str(tmp_path / "wf.db")
    docs = WorkflowDatabase(url, schema="workflow_memory")
    yield docs
    docs.close()


def test_database_and_files_answer_the_same(database: WorkflowDatabase, tmp_path: Path) -> None:
    from_database = _run(database)
    assert from_database == _run(WorkflowFiles(tmp_path / "files"))
    assert "问题流程" in from_database[1][1]["memoryPrompt"] and "30" in from_database[1][0]["memoryPrompt"]


def test_concurrent_writers_lose_no_entry(database: WorkflowDatabase) -> None:
    service = WorkflowMemoryService(database)
    barrier = threading.Barrier(4)

    def save(i: int) -> None:
        barrier.wait()
        alias = f'业务别名"流程{i}号"= 工作流"第{i}种审批流程"，workflowId=10000000{i}'
        assert service.memory_extract("u1", msg_list=msgs(alias))["saved"] is True

    threads = [threading.Thread(target=save, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    prompt = service.memory_prompt("u1")["memoryPrompt"]
    assert all(f"流程{i}号" in prompt for i in range(4))
