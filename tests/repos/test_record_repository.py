"""The shared mechanics of every record repository, on each backend.

``InMemoryStore`` declares no capability, so the repository takes its fallback paths
(``$or`` split and merged, guards checked in process, replaced vectors deleted first);
``HyMemoryStore`` declares them all. Both must behave the same.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from hy_memory_langgraph.errors import ConflictError
from hy_memory_langgraph.repos.base import RecordRepository, split_or, version_texts
from hy_memory_langgraph.repos.records import ChatMemory
from hy_memory_langgraph.store import HyMemoryStore

INDEX = None  # the repository mechanics need no vectors


def _memory(memory_id: str, content: str, user_id: str = "u1", **kw: object) -> ChatMemory:
    return ChatMemory(memory_id=memory_id, user_id=user_id, memory_at="2026-01-02T03:04:05+00:00",
                      memory_ts=1.0, content=content, **kw)  # type: ignore[arg-type]


@pytest.fixture
def repo(open_store: Callable[..., BaseStore]) -> RecordRepository:
    return RecordRepository(open_store(index=INDEX), {"chat": "chat_memories"}, "chat_history")


def _add(repo: RecordRepository, *memories: ChatMemory) -> None:
    change = repo.begin("req-1")
    for memory in memories:
        change.add(memory, "ADD")
    repo.commit(change)


def test_capabilities_follow_what_the_store_declares(repo: RecordRepository) -> None:
    declared = isinstance(repo.store, HyMemoryStore)
    flags = [repo.caps.supports_or_filters, repo.caps.replaces_vectors_on_put, repo.caps.supports_guards,
             repo.caps.lists_newest_first, repo.caps.supports_lexical_index]
    assert flags == [declared] * 5
    assert (repo.indexed is not None) is declared


def test_added_records_are_found_by_id_and_located(repo: RecordRepository) -> None:
    _add(repo, _memory("m1", "likes tea"), _memory("m2", "lives in Oslo", user_id="u2"))
    got = repo.get("m1")
    assert isinstance(got, ChatMemory) and got.content == "likes tea" and got.request_id == "req-1"
    assert got.created_at and got.created_at == got.updated_at
    assert repo.locate("m2") == ("u2", "chat") and repo.locate("nope") is None
    assert [r.memory_id for r in repo.get_many(["m2", "nope", "m1", "m2"])] == ["m2", "m1"]


def test_a_commit_moves_the_revision_of_each_user_it_touched(repo: RecordRepository) -> None:
    assert repo.revision("u1") is None
    _add(repo, _memory("m1", "likes tea"))
    first = repo.revision("u1")
    _add(repo, _memory("m2", "likes coffee"))
    assert first is not None and repo.revision("u1") not in (None, first)
    assert repo.revision("u2") is None


def test_scan_honours_or_on_every_store(repo: RecordRepository) -> None:
    _add(repo, _memory("m1", "a", subject="tea"), _memory("m2", "b", subject="oslo"),
         _memory("m3", "c", subject="other"))
    found = repo.scan("chat", "u1", {"$or": [{"subject": "tea"}, {"subject": "oslo"}]})
    assert sorted(r.memory_id for r in found) == ["m1", "m2"]


def test_recent_lists_the_newest_active_records_first(repo: RecordRepository) -> None:
    for i in range(4):
        _add(repo, _memory(f"m{i}", f"fact {i}"))
    assert [r.memory_id for r in repo.recent("chat", "u1", 2)] == ["m3", "m2"]


def test_a_save_of_a_stale_read_conflicts_and_writes_nothing(repo: RecordRepository) -> None:
    _add(repo, _memory("m1", "likes tea"))
    first, second = repo.get("m1"), repo.get("m1")
    assert isinstance(first, ChatMemory) and isinstance(second, ChatMemory)
    change = repo.begin(None)
    first.content = "likes green tea"
    change.save(first, "UPDATE", previous="likes tea")
    repo.commit(change)
    stale = repo.begin(None)
    second.content = "likes black tea"
    stale.save(second, "UPDATE", previous="likes tea")
    with pytest.raises(ConflictError):
        repo.commit(stale)
    stored = repo.get("m1")
    assert isinstance(stored, ChatMemory) and stored.content == "likes green tea"
    assert [e["op"] for e in repo.history("m1")] == ["ADD", "UPDATE"]
    assert version_texts(repo.history("m1")) == ["likes tea", "likes green tea"]


def test_delete_leaves_a_content_free_tombstone(repo: RecordRepository) -> None:
    _add(repo, _memory("m1", "my pin is 4321"))
    assert repo.delete("m1") is True and repo.delete("m1") is False
    assert repo.get("m1") is None and repo.locate("m1") is None
    events = repo.history("m1")
    assert [e["op"] for e in events] == ["DELETE"]
    # no text of the memory (its times and sequence number are digits too: left out)
    assert not any("4321" in str(value) for event in events for key, value in event.items()
                   if key not in ("at", "seq"))


def test_delete_all_removes_one_user_only(repo: RecordRepository) -> None:
    _add(repo, _memory("m1", "a"), _memory("m2", "b"), _memory("m3", "c", user_id="u2"))
    assert repo.delete_all("u1") == 2
    assert repo.get_many(["m1", "m2", "m3"])[0].memory_id == "m3"
    assert repo.history("m1") == [] and repo.revision("u1") is None


def test_dump_and_restore_round_trip_and_refuse_foreign_ids(repo: RecordRepository,
                                                            open_store: Callable[..., BaseStore]) -> None:
    _add(repo, _memory("m1", "likes tea"))
    dumped = list(repo.dump())
    records = [v for kind, _, v in dumped if kind == "record"]
    events = [(k, v) for kind, k, v in dumped if kind == "event"]
    target = RecordRepository(open_store("copy.db", index=INDEX), {"chat": "chat_memories"}, "chat_history")
    _add(target, _memory("m1", "someone else's", user_id="u9"))
    written, refused = target.restore(records, events)
    assert (written, [r["memory_id"] for r in refused]) == (0, ["m1"])
    assert "another user" in refused[0]["reason"]
    fresh = RecordRepository(open_store("fresh.db", index=INDEX), {"chat": "chat_memories"}, "chat_history")
    assert fresh.restore(records, events) == (1, [])
    restored = fresh.get("m1")
    assert isinstance(restored, ChatMemory) and restored.content == "likes tea"
    assert [e["op"] for e in fresh.history("m1")] == ["ADD"]


def test_restore_refuses_rows_that_are_not_records(repo: RecordRepository) -> None:
    written, refused = repo.restore([{"memory_id": "x", "user_id": "u1", "kind": "chat"}])
    assert written == 0 and "not a valid memory record" in refused[0]["reason"]


def test_split_or_gives_plain_filters() -> None:
    assert split_or({"a": 1, "$or": [{"b": 2}, {"c": 3}]}) == [{"a": 1, "b": 2}, {"a": 1, "c": 3}]
    assert split_or({"a": 1}) == [{"a": 1}]


def test_a_store_declaring_flags_without_ranked_searches_gets_no_lexical_index() -> None:
    class Flagged(InMemoryStore):
        supports_or_filters = True
        replaces_vectors_on_put = False
        supports_guards = False
        lists_newest_first = False
        supports_lexical_index = True  # claimed, but no ranked-key searches

    repo = RecordRepository(Flagged(), {"chat": "chat_memories"}, "chat_history")
    assert repo.caps.supports_or_filters and repo.indexed is None
