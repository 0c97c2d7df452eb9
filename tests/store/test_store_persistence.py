"""Persistence of the derived FAISS index: reopen, missing, corrupt, stale files."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from langgraph.store.base import BaseStore

from hy_memory_langgraph.errors import ConfigError, StoreError
from hy_memory_langgraph.store import HyMemoryStore
from store_helpers import index_config, keys, scores_close

QUERIES = ["green tea", "mountain hiking trip", "python async code", "chocolate"]
TEXTS = [
    "green tea with jasmine", "mountain hiking trip in spring", "python async code review",
    "chocolate cake recipe", "black coffee", "river kayaking trip", "rust borrow checker",
    "matcha latte", "vanilla ice cream", "typescript generics",
]


def _open(path: Path, **kwargs: object) -> HyMemoryStore:
    return HyMemoryStore(path, index=index_config(["text"]), **kwargs)  # type: ignore[arg-type]


def _fill(store: BaseStore) -> None:
    for i, text in enumerate(TEXTS):
        store.put(("p", f"u{i % 3}"), f"k{i}", {"text": text, "i": i})
    store.put(("p", "u0"), "plain", {"text": "not indexed"}, index=False)
    store.delete(("p", "u1"), "k4")


def _snapshot(store: BaseStore) -> list[tuple[list[str], list[float | None]]]:
    out = []
    for q in QUERIES:
        for prefix in [("p",), ("p", "u0")]:
            res = store.search(prefix, query=q, limit=20)
            out.append((keys(res), [r.score for r in res]))
    return out


def _same(a: list, b: list) -> bool:
    return all(ka == kb and scores_close(sa_, sb) for (ka, sa_), (kb, sb) in zip(a, b, strict=True))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "sub" / "dir" / "mem.db"


def test_reopen_from_disk_equal(db: Path, caplog: pytest.LogCaptureFixture) -> None:
    with _open(db) as store:
        _fill(store)
        before = _snapshot(store)
        items_before = store.search(("p",), limit=100)
    assert db.exists() and db.with_name("mem.db.faiss").exists()
    with caplog.at_level(logging.WARNING, logger="hy_memory_langgraph.store"):
        with _open(db) as store:
            assert _same(_snapshot(store), before)
            assert store.search(("p",), limit=100) == items_before
    assert not caplog.records  # the persisted index was reused, no rebuild


def test_missing_faiss_file_is_rebuilt(db: Path, caplog: pytest.LogCaptureFixture) -> None:
    with _open(db) as store:
        _fill(store)
        before = _snapshot(store)
    db.with_name("mem.db.faiss").unlink()
    with caplog.at_level(logging.WARNING, logger="hy_memory_langgraph.store"):
        with _open(db) as store:
            assert _same(_snapshot(store), before)
    assert any("rebuilding" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("target", ["index", "manifest", "truncate", "garbage-valid-checksum"])
def test_corrupt_faiss_file_is_rebuilt(db: Path, caplog: pytest.LogCaptureFixture, target: str) -> None:
    with _open(db) as store:
        _fill(store)
        before = _snapshot(store)
    index_file = db.with_name("mem.db.faiss")
    manifest_file = db.with_name("mem.db.faiss.json")
    if target == "index":
        index_file.write_bytes(b"\x00garbage" * 100)
    elif target == "manifest":
        manifest_file.write_text("{not json")
    elif target == "truncate":
        index_file.write_bytes(index_file.read_bytes()[:100])
    else:  # checksum matches, FAISS cannot read it
        from hy_memory_langgraph.store.persist import checksum

        garbage = b"\x01not a faiss index" * 50
        index_file.write_bytes(garbage)
        manifest = json.loads(manifest_file.read_text())
        manifest["checksum"] = checksum(garbage)
        manifest_file.write_text(json.dumps(manifest))
    with caplog.at_level(logging.WARNING, logger="hy_memory_langgraph.store"):
        with _open(db) as store:
            assert _same(_snapshot(store), before)
    assert any("rebuilding" in r.getMessage() for r in caplog.records)


def test_stale_file_from_other_writer_is_replayed(db: Path, caplog: pytest.LogCaptureFixture) -> None:
    with _open(db) as first:
        _fill(first)
    # the file now reflects `first`; a second writer changes the DB without persisting
    second = _open(db, persist_every=10**9)
    second.put(("p", "u2"), "late", {"text": "green tea latecomer"})
    second.delete(("p", "u0"), "k0")
    second.put(("p", "u1"), "k1", {"text": "chocolate mountain"})
    expected = _snapshot(second)
    second._sync = None  # simulate a crash: nothing persisted on close  # type: ignore[assignment]
    second.close()
    with caplog.at_level(logging.WARNING, logger="hy_memory_langgraph.store"):
        with _open(db) as reopened:
            assert _same(_snapshot(reopened), expected)
    assert not caplog.records  # replayed from the change log, not rebuilt


def test_index_from_another_database_is_not_used(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    with _open(a) as store:
        _fill(store)
    with _open(b) as store:
        store.put(("p",), "only", {"text": "green tea"})
    b.with_name("b.db.faiss").write_bytes(a.with_name("a.db.faiss").read_bytes())
    b.with_name("b.db.faiss.json").write_text(a.with_name("a.db.faiss.json").read_text())
    with caplog.at_level(logging.WARNING, logger="hy_memory_langgraph.store"):
        with _open(b) as store:
            assert keys(store.search(("p",), query="green tea", limit=10)) == ["only"]
    assert any("another database" in r.getMessage() for r in caplog.records)


def test_pruned_change_log_forces_rebuild(db: Path, caplog: pytest.LogCaptureFixture) -> None:
    reader = _open(db, changelog_retention=1)
    writer = _open(db, changelog_retention=1)
    reader.put(("p",), "seed", {"text": "seed"})
    assert reader.search(("p",), query="seed")
    for i in range(1005):  # crosses a prune boundary
        writer.batch([])  # no-op batches are fine
        if i % 200 == 0:
            writer.put(("p",), f"w{i}", {"text": f"writer {i}"})
    writer.put(("p",), "w-last", {"text": "green tea writer"})
    from langgraph.store.base import PutOp

    writer.batch([PutOp(("p",), f"bulk{i}", {"text": f"bulk {i}"}) for i in range(1000)])
    with caplog.at_level(logging.WARNING, logger="hy_memory_langgraph.store"):
        hits = reader.search(("p",), query="green tea writer", limit=1)
    assert keys(hits) == ["w-last"]
    assert any("pruned" in r.getMessage() for r in caplog.records)
    reader.close()
    writer.close()


def test_dims_mismatch_is_config_error(db: Path) -> None:
    with _open(db) as store:
        store.put(("p",), "k", {"text": "x"})
    with pytest.raises(ConfigError, match="64-dim"):
        HyMemoryStore(db, index=index_config(["text"], dims=32))


def test_closed_store_raises(db: Path) -> None:
    store = _open(db)
    store.close()
    store.close()  # idempotent
    assert store.closed
    with pytest.raises(StoreError):
        store.get(("p",), "k")


def test_in_memory_sqlite_url(tmp_path: Path) -> None:
    with HyMemoryStore("sqlite://", index=index_config(["text"])) as store:
        _fill(store)
        assert keys(store.search(("p",), query="green tea", limit=1)) == ["k0"]
    assert list(tmp_path.iterdir()) == []


def test_sqlite_file_url_persists_index(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'url.db'}"
    with HyMemoryStore(url, index=index_config(["text"])) as store:
        _fill(store)
    assert (tmp_path / "url.db.faiss").exists()
    with HyMemoryStore(url, index=index_config(["text"])) as store:
        assert keys(store.search(("p",), query="green tea", limit=1)) == ["k0"]
