"""Pure helpers of the productivity pipeline (no client)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.messages import normalize_messages
from hy_memory_langgraph.nodes.productivity_experiences import render_drafts
from hy_memory_langgraph.nodes.productivity_extract import parse_extraction
from hy_memory_langgraph.nodes.productivity_input import resolve_variant
from hy_memory_langgraph.nodes.productivity_lite import commands_of, errors_of
from hy_memory_langgraph.nodes.productivity_search import EXPERIENCE_GATE, FACT_GATE
from hy_memory_langgraph.pipelines.productivity import (
    build_productivity_graph,
    build_productivity_search_graph,
)
from hy_memory_langgraph.nodes.productivity_scope import subject_key
from hy_memory_langgraph.repos.productivity import ProductivityRepository, new_id, parse_id
from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.testing import HashingEmbeddings


def test_ids_name_kind_and_variant() -> None:
    fact, exp = new_id("fact", "coding"), new_id("experience", "working")
    assert fact.startswith("fact_coding_") and exp.startswith("exp_working_")
    assert parse_id(fact) == ("fact", "coding") and parse_id(exp) == ("experience", "working")
    assert parse_id("0" * 32) is None and parse_id("fact_chat_" + "0" * 32) is None


@pytest.mark.parametrize(("subject", "key"), [
    ("src/a.py:Client.get", "src/a.py"), ("src/a.py", "src/a.py"), (" README.md#usage ", "readme.md"),
    ("Board Memo  Q2", "board memo q2"), ("reservation 4WQ150", "reservation 4wq150"),
    ("`api.py`", "api.py"), ("", ""),
])
def test_subject_key(subject: str, key: str) -> None:
    assert subject_key(subject) == key


def test_variant_resolution() -> None:
    assert resolve_variant("coding", None) == "coding"
    assert resolve_variant("chat", "working") == "working"
    with pytest.raises(ValueError):
        resolve_variant("chat", None)


def test_parse_extraction_is_tolerant() -> None:
    reply = {"experiences": [
        {"task": "t", "solution": "s", "search_keys": ["a", "b", "c", "d", "e", "f", "t"],
         "confidence": "95%", "boundary_envs": "py3.11", "files": None},
        {"task": "t", "solution": "dup"}, {"task": "", "solution": "x"}, "junk", {"solution": "no task"},
    ], "fact": {"statement": "did it", "subject": None, "files": "a.py", "details": ["x"]}}
    drafts, fact = parse_extraction(reply, ["b.py"])
    assert len(drafts) == 1 and drafts[0]["search_keys"] == ["a", "b", "c", "d", "e"]
    assert drafts[0]["confidence"] == 0.95 and drafts[0]["boundary_envs"] == ["py3.11"]
    assert fact == {"subject": "a.py", "statement": "did it", "files": ["a.py", "b.py"],
                    "details": '["x"]', "source": "extract"}
    assert parse_extraction(None, []) == ([], None)
    assert parse_extraction({"fact": {"statement": " "}}, []) == ([], None)


def test_render_drafts_aliases_shared_candidates_once() -> None:
    cand = {"memory_id": "exp_x", "task": "c", "search_keys": [], "solution": "s", "boundary_envs": []}
    drafts = [{"task": f"d{i}", "search_keys": [], "solution": "s", "boundary_envs": []} for i in range(3)]
    block, aliases = render_drafts(drafts, [[cand], [], [cand]])
    assert aliases == {"e_0": "exp_x"}
    assert block.splitlines()[0].startswith("d0:") and block.splitlines()[2].startswith("d2:")
    assert "d1:" not in block


def test_commands_and_errors_of_a_trace() -> None:
    msgs = normalize_messages([
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "run_shell_command", "arguments": "ls -la"}},
            {"id": "2", "type": "function", "function": {"name": "exec", "arguments": '{"cmd": ["git", "status"]}'}},
        ]},
        {"role": "tool", "tool_call_id": "1", "content": "total 0"},
        {"role": "tool", "tool_call_id": "2", "content": "weird output", "is_error": True},
    ])
    assert commands_of(msgs) == ["ls -la", "git status"]
    assert errors_of(msgs) == ["exec: weird output"]


def test_graphs_have_the_documented_nodes() -> None:
    write = set(build_productivity_graph().get_graph().nodes)
    assert {"prepare", "lite_fact", "extract", "gather_experience_candidates", "reconcile_experiences",
            "apply_experiences", "gather_fact_candidates", "reconcile_fact", "summarize_progress",
            "insert_fact", "finish"} <= write
    search = set(build_productivity_search_graph().get_graph().nodes)
    assert {"prepare", "search_facts", "search_experiences", "finish"} <= search
    assert (FACT_GATE, EXPERIENCE_GATE) == (0.30, 0.40)


def _fill(repo: ProductivityRepository) -> None:
    rows = [("a", None, None), ("b", "ws", None), ("c", "ws", "x"), ("d", "ws", "y")]
    repo.put([{"kind": "fact", "memory_id": new_id("fact", "working"), "user_id": "u", "status": "active",
               "embed_text": f"deploy note {tag}", "tag": tag, "workspace_id": ws, "branch": br}
              for tag, ws, br in rows])


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_or_filter_is_exact_on_every_backend(backend: str, tmp_path: Path) -> None:
    emb = HashingEmbeddings(dims=32)
    index: Any = {"dims": 32, "embed": emb, "fields": ["embed_text"]}
    store = InMemoryStore(index=index) if backend == "memory" else HyMemoryStore(tmp_path / "x.db", index=index)
    repo = ProductivityRepository(store, MemoryConfig.from_env({}, data_dir=tmp_path), "working")
    assert repo.native is (backend == "sqlite")
    _fill(repo)
    where = {"status": "active", "workspace_id": "ws", "$or": [{"branch": "x"}, {"branch": None}]}
    hits = repo.search("fact", ["u"], "deploy note", where=where, limit=10)
    assert sorted(v["tag"] for v, _ in hits) == ["b", "c"]
    top = repo.search("fact", ["u", "nobody"], "deploy note", where=where, limit=1)
    assert top[0][0]["tag"] == hits[0][0]["tag"]
    assert sorted(v["tag"] for v in repo.scan("fact", "u", where)) == ["b", "c"]
    close = getattr(store, "close", None)
    if close:
        close()


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_few_or_nearest(backend: str, tmp_path: Path) -> None:
    emb = HashingEmbeddings(dims=32)
    index: Any = {"dims": 32, "embed": emb, "fields": ["embed_text"]}
    store = InMemoryStore(index=index) if backend == "memory" else HyMemoryStore(tmp_path / "y.db", index=index)
    repo = ProductivityRepository(store, MemoryConfig.from_env({}, data_dir=tmp_path), "coding")
    repo.put([{"kind": "fact", "memory_id": new_id("fact", "coding"), "user_id": "u", "status": "active",
               "subject_key": "a.py", "embed_text": f"a.py: change number {i}", "memory_ts": float(i)}
              for i in range(12)])
    where = {"status": "active", "subject_key": "a.py", "memory_ts": {"$lte": 3.0}}
    few = repo.few_or_nearest("fact", "u", "a.py: change number 1", where=where, limit=8)
    assert [v["memory_ts"] for v in few] == [3.0, 2.0, 1.0, 0.0]  # newest first, no ranking
    many = repo.few_or_nearest("fact", "u", "a.py: change number 11", where={"subject_key": "a.py"}, limit=8)
    assert len(many) == 8 and many[0]["memory_ts"] == 11.0  # nearest first
    close = getattr(store, "close", None)
    if close:
        close()
