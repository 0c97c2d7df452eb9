"""Several store objects / processes on one database stay consistent."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import sqlalchemy as sa
from langgraph.store.base import PutOp
from store_helpers import index_config, key_set, keys

from hy_memory_langgraph.errors import ConflictError
from hy_memory_langgraph.store import GuardOp, HyMemoryStore

N_CHILD = 120
N_PARENT = 120

CHILD = textwrap.dedent(
    """
    import sys
    from langgraph.store.base import PutOp
    from hy_memory_langgraph.store import HyMemoryStore
    from hy_memory_langgraph.testing import HashingEmbeddings

    path, n = sys.argv[1], int(sys.argv[2])
    index = {"dims": 64, "embed": HashingEmbeddings(dims=64), "fields": ["text"]}
    with HyMemoryStore(path, index=index) as store:
        print("ready", flush=True)
        sys.stdin.readline()
        for i in range(0, n, 4):
            store.batch([PutOp(("proc", "child"), f"c{j}", {"text": f"child note {j}", "j": j})
                         for j in range(i, min(n, i + 4))])
            store.search(("proc",), query="parent note", limit=3)
        store.put(("proc", "child"), "marker", {"text": "zebra marker from the child"})
    print("done", flush=True)
    """
)


def _open(path: Path) -> HyMemoryStore:
    return HyMemoryStore(path, index=index_config(["text"]))


def test_two_objects_see_each_others_writes(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    with _open(db) as a, _open(db) as b:
        a.put(("s",), "x", {"text": "penguin colony on ice"})
        assert b.get(("s",), "x").value == {"text": "penguin colony on ice"}
        assert keys(b.search(("s",), query="penguin colony", limit=1)) == ["x"]
        b.put(("s",), "x", {"text": "desert camel caravan"})
        b.put(("s",), "y", {"text": "penguin colony again"})
        assert keys(a.search(("s",), query="desert camel caravan", limit=1)) == ["x"]
        assert keys(a.search(("s",), query="penguin colony again", limit=1)) == ["y"]
        a.delete(("s",), "y")
        assert key_set(b.search(("s",), query="penguin", limit=5)) == {"x"}
        assert b.list_namespaces() == [("s",)]
        # created_at survives an overwrite made through the other object
        first = a.get(("s",), "x")
        b.put(("s",), "x", {"text": "third version"})
        again = a.get(("s",), "x")
        assert again.created_at == first.created_at and again.updated_at > first.updated_at


def test_threads_share_one_store(tmp_path: Path) -> None:
    with _open(tmp_path / "threads.db") as store:
        errors: list[BaseException] = []

        def work(t: int) -> None:
            try:
                for i in range(25):
                    store.put(("t", str(t)), f"k{i}", {"text": f"thread {t} item {i}"})
                    store.search(("t",), query=f"thread {t}", limit=2)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors
        assert len(store.search(("t",), limit=1000)) == 100


def test_subprocess_writes_concurrently(tmp_path: Path) -> None:
    db = tmp_path / "mp.db"
    parent = _open(db)
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(db), str(N_CHILD)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "ready"
        proc.stdin.write("go\n")
        proc.stdin.flush()
        for i in range(0, N_PARENT, 4):
            parent.batch([PutOp(("proc", "parent"), f"p{j}", {"text": f"parent note {j}"})
                          for j in range(i, min(N_PARENT, i + 4))])
            parent.search(("proc",), query="child note", limit=3)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "done" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    try:
        everything = parent.search(("proc",), limit=10_000)
        assert len(everything) == N_CHILD + N_PARENT + 1
        assert keys(parent.search(("proc",), query="zebra marker from the child", limit=1)) == ["marker"]
        assert keys(parent.search(("proc", "child"), query="child note 7", limit=1)) == ["c7"]
        cache = parent.index_cache
        assert cache is not None
        vector_total = sum(cache.peek(key).index.ntotal for key in cache.keys_of(parent._scoped.owner))  # type: ignore[union-attr]
        assert vector_total == N_CHILD + N_PARENT + 1
    finally:
        parent.close()
    engine = sa.create_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
            counts = conn.exec_driver_sql(
                "SELECT (SELECT count(*) FROM hy_store_items), (SELECT count(*) FROM hy_store_vectors)"
            ).one()
            assert tuple(counts) == (N_CHILD + N_PARENT + 1, N_CHILD + N_PARENT + 1)
    finally:
        engine.dispose()
    with _open(db) as reopened:  # loaded from the database alone
        assert keys(reopened.search(("proc",), query="zebra marker from the child", limit=1)) == ["marker"]


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_guarded_increments_are_never_lost(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Two store objects racing guarded read-modify-writes of one item: every increment lands."""
    if kind == "postgres":
        url = request.getfixturevalue("pg_url")
        opener = lambda: HyMemoryStore.from_url(url, name="race")  # noqa: E731
    else:
        opener = lambda: HyMemoryStore(tmp_path / "race.db")  # noqa: E731
    stores = [opener(), opener()]
    stores[0].put(("c",), "n", {"n": 0})
    per_thread, conflicts = 25, [0, 0]
    barrier = threading.Barrier(2)

    def work(i: int) -> None:
        store = stores[i]
        barrier.wait()
        done = 0
        while done < per_thread:
            current = store.get(("c",), "n").value["n"]
            try:
                store.batch([GuardOp(("c",), "n", {"n": current}), PutOp(("c",), "n", {"n": current + 1})])
                done += 1
            except ConflictError:
                conflicts[i] += 1

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    try:
        assert stores[0].get(("c",), "n").value["n"] == 2 * per_thread
    finally:
        for store in stores:
            store.close()
