"""What the client returns, the TypedDicts of ``results.py`` and ``docs/design.md`` agree:
every result has the required keys of its type and no key the type does not name, and
every key the design document lists for a shape is a key of its type."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph import results as R
from hy_memory_langgraph.testing import ScriptedChatModel
from tests.productivity.support import tool_trace

DESIGN = (Path(__file__).resolve().parents[1] / "docs" / "design.md").read_text(encoding="utf-8")


def _fits(value: dict[str, Any], shape: Any) -> None:
    keys, required, optional = set(value), set(shape.__required_keys__), set(shape.__optional_keys__)
    assert required <= keys, (shape.__name__, sorted(required - keys))
    assert keys <= required | optional, (shape.__name__, sorted(keys - required - optional))


def test_every_result_has_its_documented_shape(make_client) -> None:
    client = make_client("lite")
    chat = client.add("I adopted a grey cat called Miso", user_id="u1")
    again = client.add("I adopted a grey cat called Miso", user_id="u1")  # a SKIP op
    _fits(chat, R.ChatWriteResult)
    for op in chat["ops"] + again["ops"]:
        _fits(op, R.ChatOp)
    found = client.search("cat", user_ids=["u1"])
    _fits(found, R.ChatSearchResult)
    _fits(found["memories"][0], R.ChatMemoryDict)
    _fits(client.get(chat["memory_ids"][0]), R.ChatMemoryDict)
    _fits(client.update(chat["memory_ids"][0], "I adopted a grey cat called Miso Soup"), R.ChatMemoryDict)
    for event in client.history(chat["memory_ids"][0]):
        _fits(event, R.HistoryEvent)
    for scene in ("working", "coding"):
        write = client.add(tool_trace("Fix the timeout in search.py"), scene=scene, user_id="u1")
        _fits(write, R.ProductivityWriteResult)
        for op in write["fact_ops"]:
            _fits(op, R.FactOp)
        result = client.search("timeout", scene=scene, user_ids=["u1"], min_score=-1.0)
        _fits(result, R.ProductivitySearchResult)
        _fits(result["facts"][0], R.FactDict)
        _fits(client.get(write["memory_id"]), R.FactDict)
        for event in client.history(write["memory_id"]):
            _fits(event, R.HistoryEvent)
    _fits(client.list_memories("u1"), R.MemoryPage)
    rows = list(client.export_memories())
    _fits(make_client("lite").import_memories(rows, user_ids=None), R.ImportReport)
    _fits(client.memory_prompt("u1"), R.MemoryPromptResult)
    pro = make_client("pro", ScriptedChatModel.from_stages({}), background_delay_s=3600.0)
    _fits(pro.add("I adopted a grey cat called Miso", user_id="u1", background=True), R.QueuedWriteResult)
    pending = pro.search("grey cat Miso", user_ids=["u1"])["memories"]
    assert pending[0]["pending"] is True
    _fits(pending[0], R.ChatMemoryDict)
    _fits(client.memory_extract("u1", msg_list=[{"msgRole": "user", "msgValue": "以后回复用中文"}]),
          R.MemoryExtractResult)


def _documented(heading: str) -> set[str]:
    """The backticked names of the paragraph (or table) under ``**heading**``."""
    start = DESIGN.index(f"**{heading}**")
    end = min(i for i in (DESIGN.find("\n**", start + 4), DESIGN.find("\n## ", start)) if i > 0)
    return set(re.findall(r"`([a-z_]+)`", DESIGN[start:end]))


@pytest.mark.parametrize(("heading", "shapes"), [
    ("Chat write", [R.ChatWriteResult, R.ChatOp]),
    ("Chat search", [R.ChatSearchResult, R.ChatMemoryDict]),
    ("History", [R.HistoryEvent]),
    ("Working / coding write", [R.ProductivityWriteResult, R.ExperienceOp, R.FactOp]),
    ("Working / coding search", [R.ProductivitySearchResult, R.FactDict, R.ExperienceDict]),
    ("Queued write", [R.QueuedWriteResult]),
])
def test_the_design_document_names_only_keys_of_the_types(heading: str, shapes: list[Any]) -> None:
    named = set().union(*(shape.__annotations__.keys() for shape in shapes))
    named |= set().union(*(set(getattr(base, "__annotations__", {})) for shape in shapes for base in shape.__mro__))
    values = {"chat", "productivity", "null", "true", "limit", "duplicate", "trivial", "history", "scene",
              "coding", "add", "search", "embed_text"}  # values and words, not keys
    keys = {k for k in _documented(heading) if k not in values and not k.isupper()}
    assert keys and keys <= named, sorted(keys - named)
