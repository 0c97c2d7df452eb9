"""Pure helpers of the productivity pipeline (no client)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.flows.productivity.experiences import render_drafts
from hy_memory_langgraph.flows.productivity.extract import parse_extraction
from hy_memory_langgraph.flows.productivity.graph import (
    build_productivity_graph,
    build_productivity_search_graph,
)
from hy_memory_langgraph.flows.productivity.lite import commands_of, errors_of
from hy_memory_langgraph.flows.productivity.retrieval import EXPERIENCE_GATE, FACT_GATE
from hy_memory_langgraph.messages.normalize import normalize_messages
from hy_memory_langgraph.prompts.replies import ProductivityExtract
from hy_memory_langgraph.repos.filters import subject_key
from hy_memory_langgraph.repos.productivity import (
    ProductivityRepository,
    new_id,
    parse_id,
)
from hy_memory_langgraph.repos.records import Experience, Fact, Record
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


def test_parse_extraction_is_tolerant() -> None:
    reply = {"experiences": [
        {"task": "t", "solution": "s", "search_keys": ["a", "b", "c", "d", "e", "f", "t"],
         "confidence": "95%", "boundary_envs": "py3.11", "files": None},
        {"task": "t", "solution": "dup"}, {"task": "", "solution": "x"}, "junk", {"solution": "no task"},
    ], "fact": {"statement": "did it", "subject": None, "files": "a.py", "details": ["x"]}}
    drafts, fact = parse_extraction(ProductivityExtract.model_validate(reply), ["b.py"])
    assert len(drafts) == 1 and drafts[0]["search_keys"] == ["a", "b", "c", "d", "e"]
    assert drafts[0]["confidence"] == 0.95 and drafts[0]["boundary_envs"] == ["py3.11"]
    assert fact == {"subject": "a.py", "statement": "did it", "files": ["a.py", "b.py"],
                    "details": '["x"]', "source": "extract"}
    assert parse_extraction(None, []) == ([], None)
    assert parse_extraction(ProductivityExtract.model_validate({"fact": {"statement": " "}}), []) == ([], None)


def test_render_drafts_aliases_shared_candidates_once() -> None:
    cand = Experience(memory_id="exp_x", user_id="u", variant="working", task="c", solution="s",
                      memory_at="2024-01-01T00:00:00+00:00", memory_ts=0.0)
    drafts = [{"task": f"d{i}", "search_keys": [], "solution": "s", "boundary_envs": []} for i in range(3)]
    rows, aliases = render_drafts(drafts, [[cand], [], [cand]])
    assert aliases == {"e_0": "exp_x"}
    assert [(r.get("draft"), r.get("candidate"), r.get("of")) for r in rows] == [
        ("d0", None, None), (None, "e_0", "d0"), ("d2", None, None), (None, "e_0", "d2")]


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
    assert {"search_facts", "search_experiences", "chain_block", "finish"} <= search
    assert (FACT_GATE, EXPERIENCE_GATE) == (0.30, 0.40)


def _fact(scene: str, statement: str, **fields: Any) -> Fact:
    fields.setdefault("memory_ts", 0.0)
    return Fact(memory_id=new_id("fact", scene), user_id="u", variant=scene, subject="",
                statement=statement, embed_text=statement, memory_at="2024-01-01T00:00:00+00:00",
                **fields)


def _store_facts(repo: ProductivityRepository, facts: list[Fact]) -> None:
    change = repo.begin("r")
    for fact in facts:
        change.add(fact, "INSERT")
    repo.commit(change)


def _fill(repo: ProductivityRepository) -> None:
    rows = [("a", None, None), ("b", "ws", None), ("c", "ws", "x"), ("d", "ws", "y")]
    _store_facts(repo, [_fact("working", f"deploy note {tag}", workspace_id=ws, branch=br)
                        for tag, ws, br in rows])


def _tag(fact: Record) -> str:
    return fact.text.rsplit(" ", 1)[-1]


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_or_filter_is_exact_on_every_backend(backend: str, tmp_path: Path) -> None:
    emb = HashingEmbeddings(dims=32)
    index: Any = {"dims": 32, "embed": emb, "fields": ["embed_text"]}
    store = InMemoryStore(index=index) if backend == "memory" else HyMemoryStore(tmp_path / "x.db", index=index)
    repo = ProductivityRepository(store, MemoryConfig.from_env({}, data_dir=tmp_path), "working")
    assert repo.caps.supports_or_filters is (backend == "sqlite")
    _fill(repo)
    where = {"status": "active", "workspace_id": "ws", "$or": [{"branch": "x"}, {"branch": None}]}
    hits = repo.search_layers({"fact": 10}, ["u"], "deploy note", where=where)["fact"]
    assert sorted(_tag(r) for r, _ in hits) == ["b", "c"]
    top = repo.search_layers({"fact": 1}, ["u", "nobody"], "deploy note", where=where)["fact"]
    assert _tag(top[0][0]) == _tag(hits[0][0])
    assert sorted(_tag(r) for r in repo.scan("fact", "u", where)) == ["b", "c"]
    close = getattr(store, "close", None)
    if close:
        close()


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_few_or_nearest(backend: str, tmp_path: Path) -> None:
    emb = HashingEmbeddings(dims=32)
    index: Any = {"dims": 32, "embed": emb, "fields": ["embed_text"]}
    store = InMemoryStore(index=index) if backend == "memory" else HyMemoryStore(tmp_path / "y.db", index=index)
    repo = ProductivityRepository(store, MemoryConfig.from_env({}, data_dir=tmp_path), "coding")
    _store_facts(repo, [_fact("coding", f"a.py: change number {i}", subject_key="a.py",
                              memory_ts=float(i)) for i in range(12)])
    where = {"status": "active", "subject_key": "a.py", "memory_ts": {"$lte": 3.0}}
    few = repo.few_or_nearest("fact", "u", "a.py: change number 1", where=where, limit=8)
    assert [r.memory_ts for r in few] == [3.0, 2.0, 1.0, 0.0]  # newest first, no ranking
    many = repo.few_or_nearest("fact", "u", "a.py: change number 11", where={"subject_key": "a.py"}, limit=8)
    assert len(many) == 8 and many[0].memory_ts == 11.0  # nearest first
    close = getattr(store, "close", None)
    if close:
        close()
