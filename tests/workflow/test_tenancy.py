"""No two user ids share a workflow-memory file: long ids, ``~`` and hashed names."""

from __future__ import annotations

from hy_memory_langgraph.client import WorkflowMemoryService
from hy_memory_langgraph.workflow.files import escape_name
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
