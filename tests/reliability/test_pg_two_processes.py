"""Two processes, one PostgreSQL database, through ``HyMemoryClient``.

Each process interleaves chat and coding writes with searches, round by round
(a barrier between rounds): every write the other process acknowledged in the
previous round must be found by this process's next search. Afterwards: no
duplicates, and both processes updating one memory at the same time lose no
update (each successful update is a version and an event in its history).
"""

from __future__ import annotations

import multiprocessing as mp
from typing import Any

from hy_memory_langgraph import HyMemoryClient
from hy_memory_langgraph.testing import HashingEmbeddings

ROUNDS = 6
UPDATES = 5
TIMEOUT_S = 240


def _client(url: str, data_dir: str) -> HyMemoryClient:
    return HyMemoryClient(mode="lite", db_url=url, data_dir=data_dir,
                          embeddings=HashingEmbeddings(dims=64))


def _coding_trace(me: str, i: int) -> list[dict[str, Any]]:
    path = f"src/{me}_module_{i}.py"
    return [
        {"role": "user", "content": f"Fix bug {me}{i}zz in {path}"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "Edit", "arguments": f'{{"file_path": "{path}", "old_string": "a = {i}", '
                                         f'"new_string": "a = {i + 1}"}}'}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "Edit", "content": "ok"},
    ]


def _worker(me: str, other: str, url: str, data_dir: str, barrier: Any, shared: Any, out: Any) -> None:
    misses: list[str] = []
    with _client(url, data_dir) as client:
        for i in range(ROUNDS):
            client.add(f"{me} note number {me}{i}xq", user_id="team")
            client.add(_coding_trace(me, i), scene="coding", user_id="team", workspace_id="ws")
            barrier.wait(TIMEOUT_S)  # both writes of this round are acknowledged
            chat = client.search(f"{other}{i}xq", user_ids=["team"], limit=50)["memories"]
            if not any(f"{other}{i}xq" in m["content"] for m in chat):
                misses.append(f"chat {other}{i}")
            facts = client.search(f"bug {other}{i}zz", scene="coding", user_ids=["team"],
                                  workspace_id="ws", limit=50, min_score=-1.0)["facts"]
            if not any(f"{other}{i}zz" in f["statement"] for f in facts):
                misses.append(f"coding {other}{i}")
        barrier.wait(TIMEOUT_S)
        versions = []
        for n in range(UPDATES):
            versions.append(client.update(shared, f"shared memory edited by {me} #{n}")["version"])
    out.put((me, misses, versions))


def test_two_processes_share_one_database(pg_url: str, tmp_path: Any) -> None:
    with _client(pg_url, str(tmp_path / "parent")) as client:
        shared = client.add("shared memory, original text", user_id="team")["memory_ids"][0]
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(2)
    out = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(me, other, pg_url, str(tmp_path / me), barrier, shared, out))
             for me, other in (("alpha", "beta"), ("beta", "alpha"))]
    for proc in procs:
        proc.start()
    results = {}
    try:
        for _ in procs:
            me, misses, versions = out.get(timeout=TIMEOUT_S)
            results[me] = (misses, versions)
    finally:
        for proc in procs:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.kill()
    assert all(proc.exitcode == 0 for proc in procs)
    assert results["alpha"][0] == [] and results["beta"][0] == []
    with _client(pg_url, str(tmp_path / "parent")) as client:
        memories = client.search("note number", user_ids=["team"], limit=1000)["memories"]
        notes = [m["content"] for m in memories if "note number" in m["content"]]
        assert sorted(notes) == sorted(f"{me} note number {me}{i}xq"
                                       for me in ("alpha", "beta") for i in range(ROUNDS))
        facts = client.search("Fix bug", scene="coding", user_ids=["team"], workspace_id="ws",
                              limit=1000, min_score=-1.0)["facts"]
        assert len({f["memory_id"] for f in facts}) == len(facts) == 2 * ROUNDS
        final = client.get(shared)
        assert final is not None and final["version"] == 1 + 2 * UPDATES
        updates = [e for e in client.history(shared) if e["op"] == "UPDATE"]
        assert len(updates) == 2 * UPDATES
        assert {e["content"] for e in updates} == {f"shared memory edited by {me} #{n}"
                                                   for me in ("alpha", "beta") for n in range(UPDATES)}
    all_versions = sorted(results["alpha"][1] + results["beta"][1])
    assert all_versions == list(range(2, 2 + 2 * UPDATES))  # each update its own version
