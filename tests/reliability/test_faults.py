"""Every fault raises one of our errors naming the file or field and the fix; one damaged
row never takes down a user's other memories."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.testing import HashingEmbeddings
from tests.productivity.support import tool_trace


def _client(data_dir: Path, **kwargs: Any) -> HyMemoryClient:
    return HyMemoryClient(mode="lite", data_dir=data_dir, embeddings=HashingEmbeddings(dims=32), **kwargs)


def _damage(db: Path, namespace_like: str, key: str, value: str) -> None:
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        done = conn.execute(sa.text("UPDATE hy_store_items SET value = :v WHERE namespace LIKE :ns AND key = :k"),
                            {"v": value, "ns": namespace_like, "k": key})
        assert done.rowcount == 1
    engine.dispose()


@pytest.mark.parametrize("damage", ["{not json", "[1, 2, 3]", json.dumps({"memory_id": "x", "kind": "chat"}),
                                    json.dumps({"memory_id": "x", "user_id": "alice", "memory_at": "2024",
                                                "memory_ts": "soon", "content": 42})])
def test_a_damaged_memory_row_is_skipped_and_the_rest_still_works(tmp_path: Path, damage: str,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    with _client(tmp_path / "d") as client:
        bad = client.add("I adopted a grey cat called Miso", user_id="alice", session_id="s1")["memory_ids"][0]
        good = client.add("I run marathons in autumn", user_id="alice", session_id="s2")["memory_ids"][0]
    _damage(tmp_path / "d" / "data" / "chat_memory.db", "chat.alice", bad, damage)
    with _client(tmp_path / "d") as client:
        found = client.search("cat marathons autumn", user_ids=["alice"], min_score=-10)
        assert [m["memory_id"] for m in found["memories"]] == [good]
        assert client.get(bad) is None and client.get(good)["content"] == "I run marathons in autumn"
        assert client.add("My sister lives in Lyon", user_id="alice", session_id="s1")["success"] is True
        assert len(client.list_memories("alice")["memories"]) == 2
        assert client.delete_all("alice") >= 2
    assert any("skipped" in r.getMessage() for r in caplog.records)


def test_a_damaged_trace_row_never_fails_an_add(tmp_path: Path) -> None:
    with _client(tmp_path / "d") as client:
        client.add("I adopted a grey cat called Miso", user_id="alice", session_id="s1")
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'd' / 'data' / 'chat_memory.db'}")
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE hy_store_items SET value = '{broken' WHERE namespace LIKE 'trace%'"))
    engine.dispose()
    with _client(tmp_path / "d") as client:
        assert client.add("Her favourite toy is a red ball", user_id="alice", session_id="s1")["success"] is True
        assert client.search("red ball", user_ids=["alice"])["memories"]


@pytest.mark.parametrize("text", ["a \ud800", "\udfff tail", "mid\ud83d text"])
def test_a_lone_surrogate_is_an_input_error_everywhere(tmp_path: Path, text: str) -> None:
    with _client(tmp_path / "d") as client:
        memory_id = client.add("I like tea", user_id="alice")["memory_ids"][0]
        for call in (lambda: client.update(memory_id, text),
                     lambda: client.update(memory_id, "fine", metadata={"note": text}),
                     lambda: client.add(text, user_id="alice"),
                     lambda: client.add("fine", user_id="alice", metadata={text: 1}),
                     lambda: client.search(text, user_ids=["alice"]),
                     lambda: client.add("fine", user_id=text)):
            with pytest.raises(InvalidInputError, match="surrogate"):
                call()
        assert client.get(memory_id)["content"] == "I like tea"


def _limit_pages(store: Any, pages: int) -> None:
    """SQLite's own size limit on the store's file: the write path meets SQLITE_FULL,
    exactly as on a full disk."""
    sa.event.listen(store._engine, "connect", lambda conn, _: conn.execute(f"PRAGMA max_page_count = {pages}"))
    store._engine.dispose()


def test_a_full_disk_is_our_error_naming_the_file_and_nothing_is_half_written(tmp_path: Path) -> None:
    from hy_memory_langgraph.errors import StoreFullError

    with _client(tmp_path / "d") as client:
        client.add("I like green tea", user_id="alice")
        store = client.context.stores.chat()
        with store._engine.connect() as conn:
            used = conn.exec_driver_sql("PRAGMA page_count").scalar()
        _limit_pages(store, used + 2)
        written = 0
        with pytest.raises(StoreFullError, match=r"chat_memory\.db.*full.*free space"):
            for i in range(50):
                client.add(f"note {i} " + "word " * 2000, user_id="alice", session_id=f"s{i}")
                written += 1
        found = [m["content"] for m in client.search("green tea", user_ids=["alice"])["memories"]]
        assert "I like green tea" in found  # reads go on while the disk is full
        assert len(client.list_memories("alice", limit=100)["memories"]) == 1 + written  # no half write
        _limit_pages(store, 1_000_000)
        assert client.add("I like black tea too", user_id="alice")["success"] is True
    with _client(tmp_path / "d") as client:  # the file is sound
        assert client.delete_all("alice") == 2 + written


@pytest.mark.parametrize("where", ["header", "middle"])
def test_a_damaged_database_file_is_our_error_naming_it(tmp_path: Path, where: str) -> None:
    from hy_memory_langgraph.errors import StoreCorruptionError

    with _client(tmp_path / "d") as client:
        for i in range(200):
            client.add(f"note number {i} about tea and " + "filler " * 30, user_id="alice", session_id=f"s{i % 7}")
    db = tmp_path / "d" / "data" / "chat_memory.db"
    data = bytearray(db.read_bytes())
    start = 0 if where == "header" else len(data) // 2
    data[start:start + 8192] = b"\xde\xad\xbe\xef" * 2048
    db.write_bytes(bytes(data))
    before = db.read_bytes()
    with _client(tmp_path / "d") as client:
        with pytest.raises(StoreCorruptionError, match=r"chat_memory\.db is damaged.*backup"):
            client.add("one more note", user_id="alice")  # refused before anything is written
        with pytest.raises(StoreCorruptionError, match=r"chat_memory\.db is damaged"):
            client.search("tea", user_ids=["alice"])
    assert db.read_bytes() == before


def test_an_embedding_model_that_returns_nan_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    from hy_memory_langgraph.errors import ModelUnavailableError

    broken = HashingEmbeddings(dims=32)
    with _client(tmp_path / "d") as client:
        client.add("I like green tea", user_id="alice")
    nan = type("NanEmbeddings", (HashingEmbeddings,), {
        "embed_documents": lambda self, texts: [[float("nan")] * 32 for _ in texts],
        "embed_query": lambda self, text: [float("nan")] * 32})(dims=32)
    with HyMemoryClient(mode="lite", data_dir=tmp_path / "d", embeddings=nan) as client:
        with pytest.raises(ModelUnavailableError, match="NaN"):
            client.add("I like black tea", user_id="alice")
        with pytest.raises(ModelUnavailableError, match="NaN"):
            client.search("tea", user_ids=["alice"])
    with HyMemoryClient(mode="lite", data_dir=tmp_path / "d", embeddings=broken) as client:
        assert [m["content"] for m in client.search("tea", user_ids=["alice"])["memories"]] == ["I like green tea"]


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


@pytest.mark.parametrize("form", ["dict", "json_string"])
def test_deeply_nested_tool_arguments_never_raise_recursion_errors(tmp_path: Path, form: str) -> None:
    args = _deep(600)
    raw = args if form == "dict" else json.dumps(args)
    trace = [{"role": "user", "content": "Save the config"},
             {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
              "function": {"name": "save", "arguments": raw}}]},
             {"role": "tool", "tool_call_id": "c1", "content": "saved"}]
    with _client(tmp_path / "d") as client:
        with pytest.raises(InvalidInputError, match="metadata nests too deeply: more than MEMORY_MAX_DEPTH=64"):
            client.add("hi", user_id="alice", metadata=_deep(600))
        with pytest.raises(InvalidInputError, match="messages (holds JSON text that )?nests too deeply.*MEMORY_MAX_DEPTH"):
            client.add(trace, scene="working", user_id="alice")
        assert client.search("config", user_ids=["alice"]) is not None


@pytest.mark.parametrize("metadata", [{1: "a", "1": "b"}, {"a": [{None: 1}]}, {"a": {True: 1}},
                                      {"a": {(1, 2): 1}}])
def test_metadata_with_a_key_that_is_no_string_is_refused_and_nothing_is_written(
        tmp_path: Path, metadata: dict[Any, Any]) -> None:
    with _client(tmp_path / "d") as client:
        with pytest.raises(InvalidInputError, match=r"metadata has the key .* pass '.*' if that is the key"):
            client.add("I like green tea", user_id="alice", metadata=metadata)
        assert client.list_memories("alice")["memories"] == []
        written = client.add("I like green tea", user_id="alice", metadata={"1": "b"})
        assert client.get(written["memory_ids"][0])["metadata"]["1"] == "b"


def test_the_cli_reports_deep_json_as_invalid_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hy_memory_langgraph.cli import main

    deep = tmp_path / "deep.json"
    deep.write_text(json.dumps({"messages": "hi", "metadata": _deep(450)})[:-1] + "[" * 100000 + "]" * 100000 + "}")
    code = main(["add", str(deep), "-u", "alice", "--json", "--data-dir", str(tmp_path / "d")])
    envelope = json.loads(capsys.readouterr().out)
    assert code == 2 and envelope["error"]["code"] in ("INVALID_JSON", "INVALID_INPUT")


def test_an_imported_row_nested_too_deep_is_refused_and_the_user_keeps_searching(tmp_path: Path) -> None:
    with _client(tmp_path / "a") as client:
        client.add("I like green tea", user_id="alice")
        rows = list(client.export_memories())
    deep = [dict(r) for r in rows]
    memory = next(r for r in deep if r["type"] == "memory")
    memory["value"] = {**memory["value"], "metadata": _deep(600)}
    with _client(tmp_path / "b") as client:
        with pytest.raises(InvalidInputError, match=r"row \d+ nests too deeply: more than MEMORY_MAX_DEPTH=64 levels"):
            client.import_memories(deep, user_ids=None)
        assert client.search("tea", user_ids=["alice"])["memories"] == []
        assert client.add("I like black tea", user_id="alice")["success"] is True
        assert len(client.search("tea", user_ids=["alice"])["memories"]) == 1


@pytest.mark.parametrize("damage", ["{not json", json.dumps({"memory_id": "x", "kind": "chat"})])
def test_a_damaged_row_on_postgresql_is_skipped_too(pg_url: str, tmp_path: Path, damage: str) -> None:
    def client() -> HyMemoryClient:
        return HyMemoryClient(mode="lite", db_url=pg_url, data_dir=tmp_path, embeddings=HashingEmbeddings(dims=32))

    with client() as first:
        bad = first.add("I adopted a grey cat called Miso", user_id="alice", session_id="s1")["memory_ids"][0]
        good = first.add("I run marathons in autumn", user_id="alice", session_id="s2")["memory_ids"][0]
    engine = sa.create_engine(pg_url)
    with engine.begin() as conn:
        done = conn.execute(sa.text("UPDATE chat_memory.hy_store_items SET value = :v WHERE key = :k "
                                    "AND namespace = 'chat.alice'"),
                            {"v": damage, "k": bad})
        assert done.rowcount == 1
    engine.dispose()
    with client() as second:
        found = second.search("cat marathons autumn", user_ids=["alice"], min_score=-10)
        assert [m["memory_id"] for m in found["memories"]] == [good]
        assert second.get(bad) is None
        assert len(second.list_memories("alice")["memories"]) == 1
        assert second.add("My sister lives in Lyon", user_id="alice", session_id="s1")["success"] is True


REPO = Path(__file__).resolve().parents[2]

FULL_DISK = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from hy_memory_langgraph.client import HyMemoryClient
    from tests.reliability.probe import outcomes
    from hy_memory_langgraph.testing import HashingEmbeddings
    data_dir = Path(sys.argv[1])
    def client():
        return HyMemoryClient(mode="lite", data_dir=data_dir, embeddings=HashingEmbeddings(dims=32))
    first = client()
    first.add("I like green tea", user_id="alice")
    first.close()
    with open(data_dir / "filler", "wb") as filler:  # the disk fills up
        try:
            while True:
                filler.write(b"x" * 65536)
                filler.flush()
        except OSError as exc:
            full = exc.strerror
    out = {"full": full}
    reader = client()
    calls = {
        "list": lambda: [m["content"] for m in reader.list_memories("alice")["memories"]],
        "search": lambda: [m["content"] for m in reader.search("green tea", user_ids=["alice"])["memories"]],
        "coding": lambda: reader.search("tea", scene="coding", user_ids=["alice"])["facts"],
        "stats": lambda: reader.stats()["users"],
        "export": lambda: sum(row["type"] == "memory" for row in reader.export_memories()),
        "add": lambda: reader.add("I like black tea", user_id="alice")["success"],
    }
    out.update(outcomes(calls))
    (data_dir / "filler").unlink()  # space again: the same client writes, the new store included
    out["after"] = reader.add("I fix the parser in search.py", scene="coding", user_id="alice")["success"]
    reader.close()
    print(json.dumps(out))
""")


def test_reads_on_a_full_disk_return_the_data(tmp_path: Path) -> None:
    """A real full disk (a 4 MB file system of its own): the data already stored is read
    (a search included), a store never created
    reads as empty, a write is a StoreFullError; once space is back, writes go on."""
    if shutil.which("unshare") is None:
        pytest.fail("a full disk is simulated with a tmpfs in a mount namespace: install unshare(1)")
    script = tmp_path / "full.py"
    script.write_text(FULL_DISK)
    mount = tmp_path / "disk"
    mount.mkdir()
    namespaces = ["-m"] if os.geteuid() == 0 else ["-r", "-m"]  # root, or a user namespace of our own
    shell = f"mount -t tmpfs -o size=4m tmpfs {mount} && exec {sys.executable} {script} {mount / 'd'}"
    done = subprocess.run(["unshare", *namespaces, "sh", "-c", shell], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["full"] == "No space left on device"
    assert out["list"] == ["I like green tea"] and out["search"] == ["I like green tea"], out
    assert out["coding"] == [] and out["stats"] == 1 and out["export"] == 1, out
    assert out["add"].startswith("StoreFullError") and "free space" in out["add"], out
    assert out["after"] is True


def test_a_client_opened_during_another_process_long_write_searches_at_once(tmp_path: Path) -> None:
    """Another connection holds the write lock of every database (BEGIN IMMEDIATE) for the
    whole test: opening a client, searching, listing and reading statistics neither wait for it nor fail; a write waits the configured
    timeout (MEMORY_DB_TIMEOUT_S) and says so."""
    from hy_memory_langgraph.config import MemoryConfig
    from hy_memory_langgraph.errors import StoreBusyError

    with _client(tmp_path / "d") as client:
        client.add("I like green tea", user_id="alice")
        client.add(tool_trace("Fix the parser in search.py"), scene="coding", user_id="alice")
    holders = []
    for db in sorted((tmp_path / "d" / "data").glob("*.db")):
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        holders.append(holder)
    try:
        config = MemoryConfig.from_env({"MEMORY_DB_TIMEOUT_S": "1"}, data_dir=tmp_path / "d")
        done: dict[str, Any] = {}

        def reads() -> None:
            with HyMemoryClient(mode="lite", config=config, embeddings=HashingEmbeddings(dims=32)) as client:
                done["search"] = [m["content"] for m in client.search("green tea", user_ids=["alice"])["memories"]]
                done["list"] = len(client.list_memories("alice")["memories"])
                done["coding"] = len(client.search("search.py", scene="coding", user_ids=["alice"])["facts"])
                done["stats"] = client.stats()["users"]
                with pytest.raises(StoreBusyError, match="MEMORY_DB_TIMEOUT_S"):
                    client.add("I like black tea", user_id="alice")
                done["ok"] = True

        # With the timeout at 1 s, each read would fail with StoreBusyError if it waited
        # for the lock; the thread is joined with a deadline, not timed.
        worker = threading.Thread(target=reads, daemon=True)
        worker.start()
        worker.join(120)
        assert not worker.is_alive()
        assert done == {"search": ["I like green tea"], "list": 2, "coding": 1, "stats": 1, "ok": True}, done
    finally:
        for holder in holders:
            holder.rollback()
            holder.close()
