"""No two user ids share a workflow-memory file: long ids, ``~`` and legacy names."""

from __future__ import annotations

from pathlib import Path

import pytest

from hy_memory_langgraph.client import WorkflowMemoryService
from hy_memory_langgraph.workflow.files import WorkflowFiles, escape_name
from tests.workflow.conftest import ALIAS_ZH, msgs

HOSTILE = ["v" * 300, "v" * 301, "a~b", "a%7Eb", "a%257Eb", "~", "%7E", ".", "%2E", "..", "a/b", "a%2Fb",
           "用户" * 80, "用户" * 81, "x" * 200, "x" * 199 + "~"]


def test_distinct_ids_get_distinct_names() -> None:
    names = [escape_name(v) for v in HOSTILE]
    assert len(set(names)) == len(HOSTILE)
    hashed = escape_name("v" * 300)
    assert escape_name(hashed) != hashed  # an id shaped like another's hashed name stays apart
    assert all(len(n) <= 200 and "/" not in n and n not in (".", "..") for n in names)


def test_an_id_shaped_like_a_hashed_name_reads_and_erases_nothing_of_its_owner(
        service: WorkflowMemoryService) -> None:
    owner = "v" * 300
    service.memory_extract(owner, msg_list=msgs(ALIAS_ZH))
    assert "问题流程" in service.memory_prompt(owner)["memoryPrompt"]
    impostor = escape_name(owner)
    assert "问题流程" not in service.memory_prompt(impostor)["memoryPrompt"]
    service.delete_user(impostor)
    assert "问题流程" in service.memory_prompt(owner)["memoryPrompt"]


@pytest.mark.parametrize("user_id", ["a~b", "ops~team@example.com"])
def test_a_directory_under_the_old_name_of_an_id_with_a_tilde_moves(workflow_root: Path, user_id: str) -> None:
    service = WorkflowMemoryService(workflow_root)
    service.memory_extract(user_id, msg_list=msgs(ALIAS_ZH))
    current = WorkflowFiles(workflow_root).user_dir(user_id)
    legacy = workflow_root / current.name.replace("%7E", "~")
    current.rename(legacy)  # as an older release left it
    assert "问题流程" in WorkflowMemoryService(workflow_root).memory_prompt(user_id)["memoryPrompt"]
    assert current.is_dir() and not legacy.exists()


def test_an_old_hashed_name_is_never_moved_to_an_id_that_spells_it(workflow_root: Path) -> None:
    service = WorkflowMemoryService(workflow_root)
    owner = "v" * 300
    service.memory_extract(owner, msg_list=msgs(ALIAS_ZH))
    hashed = WorkflowFiles(workflow_root).user_dir(owner).name
    assert "问题流程" not in service.memory_prompt(hashed)["memoryPrompt"]
    assert (workflow_root / hashed).is_dir()  # still the owner's
