"""Concurrent writers (threads, processes) never lose entries nor corrupt a file."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from hy_memory_langgraph.client import WorkflowMemoryService
from hy_memory_langgraph.workflow.entries import parse_entries
from tests.workflow.conftest import msgs

REPO = Path(__file__).resolve().parents[2]


def _alias(i: int) -> str:
    return f'业务别名"别名{i}"= 工作流"流程{i}"，workflowId={1000 + i}。以后每页显示{10 + i}条'


def _aliases(root: Path, user: str = "u1") -> set[str]:
    text = (root / user / "memory.md").read_text(encoding="utf-8")
    return {e.alias for e in parse_entries(text) if e.kind == "alias"}  # type: ignore[misc]


def test_threads_sharing_one_service_lose_nothing(service: WorkflowMemoryService, workflow_root: Path) -> None:
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda i: service.memory_extract("u1", msg_list=msgs(_alias(i))), range(32)))
    assert all(r["saved"] for r in results)
    assert _aliases(workflow_root) == {f"别名{i}" for i in range(32)}
    # the pageSize slot was replaced in place by every writer: exactly one survives
    assert service.memory_prompt("u1")["counts"]["user"] == 1


def test_threads_with_separate_services_and_a_reader(make_service: Any, workflow_root: Path) -> None:
    stop = threading.Event()
    failures: list[Any] = []

    def reader() -> None:
        reader_service = make_service()
        while not stop.is_set():
            result = reader_service.memory_prompt("u1")
            if not result["available"]:
                failures.append(result["diagnosis"])

    def writer(t: int) -> None:
        own = make_service()
        for j in range(6):
            own.memory_extract("u1", msg_list=msgs(_alias(t * 100 + j)))

    watcher = threading.Thread(target=reader)
    watcher.start()
    threads = [threading.Thread(target=writer, args=(t,)) for t in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    watcher.join()
    assert failures == []
    assert _aliases(workflow_root) == {f"别名{t * 100 + j}" for t in range(6) for j in range(6)}
    assert not [p for p in (workflow_root / "u1").iterdir() if p.name.endswith(".tmp")]


_WRITER = """
import sys
from hy_memory_langgraph.client import WorkflowMemoryService
service = WorkflowMemoryService(sys.argv[1])
for j in range(8):
    i = int(sys.argv[2]) * 100 + j
    text = f'业务别名"别名{i}"= 工作流"流程{i}"，workflowId={1000 + i}'
    assert service.memory_extract("u1", msg_list=[{"msgRole": "user", "msgValue": text}])["saved"]
"""


def test_processes_lose_nothing(workflow_root: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(workflow_root), str(p)], env=env)
             for p in range(2)]
    assert [proc.wait(timeout=60) for proc in procs] == [0, 0]
    assert _aliases(workflow_root) == {f"别名{p * 100 + j}" for p in range(2) for j in range(8)}
