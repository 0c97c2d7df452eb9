"""Erasure: after ``delete(id)`` / ``delete_all(user)`` no file under the data dir holds
the erased content (rows, history, traces, chain, workflow files, change log, index
files, free pages, write-ahead logs)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.repos.records import ChatMemory
from hy_memory_langgraph.store.db.engine import create_store_engine
from hy_memory_langgraph.testing import HashingEmbeddings
from tests.productivity.support import tool_trace


def _client(data_dir: Path) -> HyMemoryClient:
    return HyMemoryClient(mode="lite", data_dir=data_dir, embeddings=HashingEmbeddings(dims=32))


def _holding(root: Path, needle: str) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and needle.encode("utf-8") in p.read_bytes())


def _fill(client: HyMemoryClient, user: str, tag: str) -> dict[str, Any]:
    first = client.add(f"My locker number is {tag}-LOCKER-7731", user_id=user, session_id="s1")
    client.add(f"My favourite tea is {tag}-OOLONG-1191", user_id=user, session_id="s1")
    coding = client.add(tool_trace(f"Fix {tag}-CODE-4410 in search.py", tool="Edit",
                                   args={"file_path": "search.py", "old_string": "t = 1",
                                         "new_string": f"t = '{tag}-PATCH-5520'"}),
                        scene="coding", user_id=user)
    client.add(tool_trace(f"Send the {tag}-MAIL-6630 report"), scene="working", user_id=user)
    client.memory_extract(user, msg_list=[{"msgRole": "user",
                                           "msgValue": f"以后回复用中文 {tag}-WORKFLOW-8840"}])
    return {"chat": first["memory_ids"][0], "fact": coding["memory_id"]}


def test_delete_one_memory_leaves_its_text_nowhere(tmp_path: Path) -> None:
    client = _client(tmp_path / "d")
    ids = _fill(client, "alice", "ALICE")
    assert _holding(tmp_path / "d", "ALICE-LOCKER-7731")  # stored before the delete
    assert client.delete(ids["chat"]) is True
    assert _holding(tmp_path / "d", "ALICE-LOCKER-7731") == []
    history = client.history(ids["chat"])
    assert [e["op"] for e in history] == ["DELETE"] and "content" not in history[0]
    # the next turn no longer carries it as retrieval context; the rest is kept
    tea = client.search("favourite tea", user_ids=["alice"])["memories"][0]
    assert "LOCKER" not in tea.get("context", "") and "ALICE-OOLONG-1191" in tea["content"]
    assert client.delete(ids["fact"]) is True
    assert _holding(tmp_path / "d", "ALICE-CODE-4410") == []
    client.close()
    assert _holding(tmp_path / "d", "ALICE-LOCKER-7731") == []


def test_delete_all_erases_every_file_trace_of_the_user(tmp_path: Path) -> None:
    client = _client(tmp_path / "d")
    _fill(client, "alice", "ALICE")
    _fill(client, "bob", "BOB")
    client.delete_all("alice")
    client.close()
    for needle in ("ALICE-LOCKER-7731", "ALICE-OOLONG-1191", "ALICE-CODE-4410",
                   "ALICE-PATCH-5520", "ALICE-MAIL-6630", "ALICE-WORKFLOW-8840", "alice"):
        assert _holding(tmp_path / "d", needle) == [], needle
    for needle in ("BOB-LOCKER-7731", "BOB-PATCH-5520", "BOB-WORKFLOW-8840"):
        assert _holding(tmp_path / "d", needle), needle  # other users keep everything


def test_ids_are_matched_exactly_when_erasing(tmp_path: Path) -> None:
    client = _client(tmp_path / "d")
    for user in ("alice", "Alice", "alice_", "al%ce"):
        _fill(client, user, user.upper().replace("%", "P").replace("_", "U") + user[-1])
    client.delete_all("ALICE")  # no such user: nothing of the others goes
    client.delete_all("al%ce")
    assert client.search("locker", user_ids=["alice"])["memories"]
    assert client.search("locker", user_ids=["alice_"])["memories"]
    chain = client.context.chain_store
    from hy_memory_langgraph.chain.store import owner_of
    for user in ("alice", "Alice", "alice_"):
        assert chain.threads_for(owner_of(user, None), None, any_file=True), user
    assert chain.threads_for(owner_of("al%ce", None), None, any_file=True) == []
    client.close()


def test_secure_delete_is_on_for_every_database(tmp_path: Path) -> None:
    client = _client(tmp_path / "d")
    _fill(client, "alice", "ALICE")
    client.close()
    databases = list((tmp_path / "d").rglob("*.db"))
    assert len(databases) >= 5
    for db in databases:
        engine, _ = create_store_engine(db)
        with engine.connect() as conn:
            assert conn.execute(sa.text("PRAGMA secure_delete")).scalar() == 1, db.name
        engine.dispose()


def _seed(client: HyMemoryClient, user: str, count: int) -> None:
    repo = client.context.chat_repo
    for start in range(0, count, 500):
        change = repo.begin("bulk")
        for i in range(start, min(start + 500, count)):
            change.add(ChatMemory(memory_id=f"{user}-m{i}", user_id=user, content=f"note number {i}",
                                  memory_at="2024-01-01T00:00:00+00:00", memory_ts=0.0), "ADD")
        repo.commit(change)


def _statements_of(action: Any) -> int:
    """SQL statements ``action()`` runs on any engine: the count, not the clock, says an
    erasure is bulk (rows go in chunks of hundreds, never one statement per memory)."""
    count = 0
    caller = threading.get_ident()  # background threads (checkpoints, the pipeline log) are not the erasure's

    def seen(*_: Any) -> None:
        nonlocal count
        if threading.get_ident() == caller:
            count += 1

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", seen)
    try:
        action()
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", seen)
    return count


def test_delete_all_is_a_bulk_operation(tmp_path: Path) -> None:
    client = _client(tmp_path / "d")
    _seed(client, "alice", 5000)
    _seed(client, "bob", 50)
    client.delete_all("nobody")  # every store open before counting
    many = _statements_of(lambda: client.delete_all("alice"))
    few = _statements_of(lambda: client.delete_all("bob"))
    assert client.search("note", user_ids=["alice", "bob"])["memories"] == []
    client.close()
    print(f"delete_all statements: 5,000 memories {many}, 50 memories {few}")
    assert few > 0 and (many - few) * 20 <= 5000 - 50, (many, few)  # >= 20 memories a statement


@pytest.mark.parametrize("scene", ["chat", "coding"])
def test_delete_after_update_leaves_no_version_in_the_traces(tmp_path: Path, scene: str) -> None:
    """The trace (and the window pro extraction reads) held the message as received;
    deleting the memory after an update removes every version's text from them."""
    client = _client(tmp_path / "d")
    if scene == "chat":
        memory_id = client.add("My locker number is ORIG-LOCKER-7731", user_id="alice", session_id="s1")["memory_ids"][0]
        client.update(memory_id, "My locker number is NEW-LOCKER-8842")
        client.add("I like green tea", user_id="alice", session_id="s1")
    else:
        memory_id = client.add(tool_trace("Fix ORIG-CODE-7731 in search.py"), scene="coding",
                               user_id="alice")["memory_id"]
    assert _holding(tmp_path / "d", "ORIG-") != []
    assert client.delete(memory_id) is True
    for needle in ("ORIG-LOCKER-7731", "NEW-LOCKER-8842", "ORIG-CODE-7731"):
        assert _holding(tmp_path / "d", needle) == [], needle
    window = client.context.chat_traces.recent_messages("alice", "s1", turns=10) if scene == "chat" else []
    assert all("LOCKER" not in str(m) for m in window)
    client.close()
    for needle in ("ORIG-LOCKER-7731", "NEW-LOCKER-8842", "ORIG-CODE-7731"):
        assert _holding(tmp_path / "d", needle) == [], needle


def test_delete_all_erases_the_users_embedding_cache_rows(tmp_path: Path) -> None:
    client = HyMemoryClient(mode="lite", data_dir=tmp_path / "d", embeddings=HashingEmbeddings(dims=32),
                            embedding_cache=True)
    cache = client.embeddings
    texts = {"alice": "My locker number is ALICE-7731", "bob": "My locker number is BOB-8842"}
    for user, text in texts.items():
        client.add(text, user_id=user)
        client.search(f"what is the locker number of {user}", user_ids=[user])
    kv = cache.store
    assert kv.mget([cache.key(texts["alice"])])[0] is not None
    erased = client.delete_all("alice")
    assert erased == 1
    assert kv.mget([cache.key(texts["alice"]), cache.key("what is the locker number of alice", query=True)]) == [None, None]
    assert kv.mget([cache.key(texts["bob"])])[0] is not None  # another user's rows stay
    assert list(kv.yield_keys(prefix=cache._owner_prefix("alice"))) == []
    memory_id = client.search("locker", user_ids=["bob"])["memories"][0]["memory_id"]
    assert client.delete(memory_id) is True
    assert kv.mget([cache.key(texts["bob"])]) == [None]
    client.close()


# ------------------------------------------------------------- the pipeline log keeping text


def _texting_client(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> HyMemoryClient:
    monkeypatch.setenv("MEMORY_PIPELINE_LOG_TEXT", "true")  # the log keeps what it saw
    return _client(data_dir)


def _in_log(paths: list[str]) -> bool:
    return any(p.startswith("data/pipeline_log.db") for p in paths)


def test_delete_all_leaves_no_text_in_a_pipeline_log_that_keeps_text(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    client = _texting_client(tmp_path / "d", monkeypatch)
    _fill(client, "alice", "ALICE")
    _fill(client, "bob", "BOB")
    client.search("ALICE-LOCKER-7731 or BOB-LOCKER-7731", user_ids=["alice", "bob"])
    client.recorder.write_pending()
    assert _in_log(_holding(tmp_path / "d", "ALICE-LOCKER-7731"))
    client.delete_all("alice")
    client.close()
    for needle in ("ALICE-LOCKER-7731", "ALICE-OOLONG-1191", "ALICE-CODE-4410", "ALICE-MAIL-6630", "alice"):
        assert _holding(tmp_path / "d", needle) == [], needle
    assert _in_log(_holding(tmp_path / "d", "BOB-OOLONG-1191"))  # bob's own requests stay


def test_delete_drops_the_log_records_quoting_the_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = _texting_client(tmp_path / "d", monkeypatch)
    ids = _fill(client, "alice", "ALICE")
    client.search("ALICE-LOCKER-7731", user_ids=["alice"])  # a record of the result quotes it
    assert client.delete(ids["chat"]) is True  # records not written yet are dropped too
    assert client.delete(ids["fact"]) is True
    client.close()
    assert _holding(tmp_path / "d", "ALICE-LOCKER-7731") == []
    assert _holding(tmp_path / "d", "ALICE-CODE-4410") == []
    assert _in_log(_holding(tmp_path / "d", "ALICE-OOLONG-1191"))  # the other memory's stay


# ------------------------------------------------------------- background writes


def _pro(data_dir: Path, model: Any, monkeypatch: pytest.MonkeyPatch) -> HyMemoryClient:
    monkeypatch.setenv("MEMORY_PIPELINE_LOG_TEXT", "true")  # the log keeps text too: erased as well
    monkeypatch.setenv("MEMORY_BACKGROUND_DELAY_S", "3600")  # no run before the test says so
    return HyMemoryClient(mode="pro", llm=model, data_dir=data_dir, embeddings=HashingEmbeddings(dims=32))


def test_delete_all_erases_queued_background_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hy_memory_langgraph.testing import ScriptedChatModel

    model = ScriptedChatModel.from_stages({"chat_extract": {"facts": []}})
    client = _pro(tmp_path / "d", model, monkeypatch)
    client.add("My locker number is ALICE-QUEUED-7731", user_id="alice", session_id="s1", background=True)
    client.add("My locker number is BOB-QUEUED-8842", user_id="bob", session_id="s1", background=True)
    assert _holding(tmp_path / "d", "ALICE-QUEUED-7731")  # the queue holds it
    client.delete_all("alice")
    assert [p["user_id"] for p in client.pending()] == ["bob"]
    assert client.search("locker", user_ids=["alice"])["memories"] == []  # nothing pending either
    assert _holding(tmp_path / "d", "ALICE-QUEUED-7731") == []
    client.flush()
    assert model.call_count == 1  # bob's run only
    client.close()
    assert _holding(tmp_path / "d", "ALICE-QUEUED-7731") == [] and _holding(tmp_path / "d", "BOB-QUEUED-8842")


def test_delete_all_stops_a_running_background_write_and_erases_what_it_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's run is inside its reconcile call (checkpoints and journal entries
    written, facts extracted) when the erasure comes: it is stopped, then everything it
    left (memories, checkpoint blobs, journal entries, log records) is erased."""
    from hy_memory_langgraph.testing import ScriptedChatModel

    inside, release = threading.Event(), threading.Event()

    def reconcile(_: Any) -> str:
        inside.set()
        assert release.wait(60)
        return '{"operations": []}'

    def extract(messages: Any) -> str:
        if "ALICE-RUN-5520" in str(messages[-1].content):
            return '{"facts": [{"content": "The user\'s badge is ALICE-FACT-5520", "subject": "badge", "owner": "user"}]}'
        return '{"facts": [{"content": "The user\'s badge is ALICE-OLD-1191", "subject": "badge", "owner": "user"}]}'

    model = ScriptedChatModel.from_stages({"chat_extract": extract, "chat_reconcile": reconcile})
    client = _pro(tmp_path / "d", model, monkeypatch)
    inside.set()  # the synchronous add's reconcile (no candidates: none) must not block
    release.set()
    client.add("I have a badge", user_id="alice", session_id="s1")
    inside.clear()
    release.clear()
    client.add("My badge is ALICE-RUN-5520", user_id="alice", session_id="s1", background=True)
    flushing = threading.Thread(target=client.flush)
    flushing.start()
    assert inside.wait(60)
    assert _holding(tmp_path / "d", "ALICE-FACT-5520")  # in the run's checkpoint
    erasing = threading.Thread(target=client.delete_all, args=("alice",))
    erasing.start()
    queue = client.background.queue
    while [j.state for j in queue.jobs(user_ids=["alice"])] != ["cancelled"]:  # the erasure began
        erasing.join(0.01)
    release.set()
    erasing.join()
    flushing.join()
    assert client.list_memories("alice")["memories"] == [] and client.pending() == []
    client.close()
    for needle in ("ALICE-RUN-5520", "ALICE-FACT-5520", "ALICE-OLD-1191", "alice"):
        assert _holding(tmp_path / "d", needle) == [], needle
