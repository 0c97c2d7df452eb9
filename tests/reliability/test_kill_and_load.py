"""Durability under SIGKILL and correctness under a multi-process, multi-thread load.

* A writer process is killed 14 times (7 in each of two databases), at random moments (inside writes and while its
  scope index catches up); every write it acknowledged is found after each restart and
  by vector search, and the store opens cleanly.
* 4 processes x 4 threads add, search, update and delete chat memories on one data dir
  for a few seconds: no errors, and every acknowledged write is readable afterwards.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.testing import HashingEmbeddings

REPO = Path(__file__).resolve().parents[2]
KILLS = 14

WRITER = textwrap.dedent("""
    import sys, uuid
    from hy_memory_langgraph.store import HyMemoryStore
    from hy_memory_langgraph.testing import HashingEmbeddings
    store = HyMemoryStore(sys.argv[1], index={"dims": 32, "embed": HashingEmbeddings(dims=32),
                                               "fields": ["text"]})
    print("ready", flush=True)
    n = 0
    while True:
        key = uuid.uuid4().hex
        store.put(("kill",), key, {"text": f"note {key} number {n}"})
        print(key, flush=True)
        n += 1
        if n % 7 == 0:  # searches load and catch up the scope index between writes
            store.search(("kill",), query="note", limit=1)
""")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "OMP_WAIT_POLICY": "PASSIVE"}


def _run_and_kill(db: Path, script: Path, rng: random.Random) -> list[str]:
    proc = subprocess.Popen([sys.executable, str(script), str(db)], stdout=subprocess.PIPE,
                            text=True, env=_env())
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    acked = [proc.stdout.readline().strip()]  # at least one write, however busy the machine
    deadline = time.monotonic() + rng.uniform(0.05, 0.6)  # then a kill at a random point
    while time.monotonic() < deadline:
        line = proc.stdout.readline().strip()
        if line:
            acked.append(line)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    acked += [line.strip() for line in proc.stdout.read().splitlines() if line.strip()]
    proc.stdout.close()
    return acked


def _check(db: Path, acked: list[str]) -> None:
    from hy_memory_langgraph.store import HyMemoryStore

    store = HyMemoryStore(db, index={"dims": 32, "embed": HashingEmbeddings(dims=32),
                                     "fields": ["text"]})
    try:
        assert [k for k in acked if store.get(("kill",), k) is None] == []
        if acked:  # the last write is in the vector index (scored), wherever 32-d hashing vectors rank it
            scores = {item.key: item.score for item in store.search(("kill",), query=f"note {acked[-1]}",
                                                                    limit=len(acked) + 1000)}
            assert scores.get(acked[-1]) is not None
    finally:
        store.close()


def _kill_loop(db: Path, script: Path, kills: int, seed: int) -> int:
    rng = random.Random(seed)
    acked: list[str] = []
    for _ in range(kills):
        acked += _run_and_kill(db, script, rng)
        _check(db, acked)
    return len(acked)


@pytest.mark.slow
def test_sigkill_never_loses_an_acknowledged_write(tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    with ThreadPoolExecutor(2) as pool:  # two databases, two kill loops side by side
        written = list(pool.map(lambda n: _kill_loop(tmp_path / f"kill{n}.db", script,
                                                     KILLS // 2, seed=n), range(2)))
    assert sum(written) >= KILLS


LOADER = textwrap.dedent("""
    import json, random, sys, threading, time
    from hy_memory_langgraph.client import HyMemoryClient
    from hy_memory_langgraph.testing import HashingEmbeddings
    data_dir, proc_no, ops = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    client = HyMemoryClient(mode="lite", data_dir=data_dir, embeddings=HashingEmbeddings(dims=32))
    log, errors, lock = [], [], threading.Lock()
    def work(thread_no):
        rng = random.Random(proc_no * 100 + thread_no)
        user = f"u{rng.randrange(3)}"
        mine = []
        for _ in range(ops):  # a count, not a duration: as much work on a busy machine
            try:
                action = rng.random()
                if action < 0.5 or not mine:
                    text = f"p{proc_no} t{thread_no} fact {rng.random()}"
                    ids = client.add(text, user_id=user)["memory_ids"]
                    mine += [(i, text) for i in ids]
                    with lock: log.append(["add", ids[0], user])
                elif action < 0.75:
                    client.search("fact", user_ids=[user], limit=5)
                elif action < 0.9:
                    mid, _ = rng.choice(mine)
                    client.update(mid, f"updated by p{proc_no} t{thread_no}")
                else:
                    mid, _ = mine.pop(rng.randrange(len(mine)))
                    assert client.delete(mid) is True
                    with lock: log.append(["delete", mid, user])
            except Exception as exc:
                with lock: errors.append(f"{type(exc).__name__}: {exc}")
    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
    client.close()
    print(json.dumps({"log": log, "errors": errors}))
""")


@pytest.mark.slow
def test_four_processes_times_four_threads(tmp_path: Path) -> None:
    script = tmp_path / "loader.py"
    script.write_text(LOADER)
    data_dir = tmp_path / "shared"
    HyMemoryClient(mode="lite", data_dir=data_dir, embeddings=HashingEmbeddings(dims=32)).close()
    procs = [subprocess.Popen([sys.executable, str(script), str(data_dir), str(n), "25"],
                              stdout=subprocess.PIPE, text=True, env=_env()) for n in range(4)]
    outputs = [json.loads(p.communicate(timeout=300)[0]) for p in procs]
    assert [o["errors"] for o in outputs] == [[], [], [], []]
    added = {entry[1]: entry[2] for o in outputs for entry in o["log"] if entry[0] == "add"}
    deleted = {entry[1] for o in outputs for entry in o["log"] if entry[0] == "delete"}
    assert len(added) >= 40
    client = HyMemoryClient(mode="lite", data_dir=data_dir, embeddings=HashingEmbeddings(dims=32))
    try:
        for memory_id in added:
            assert (client.get(memory_id) is None) == (memory_id in deleted), memory_id
        for user in {u for u in added.values()}:
            found = {m["memory_id"] for m in client.search("fact", user_ids=[user], limit=1000)["memories"]}
            assert found.isdisjoint(deleted)
    finally:
        client.close()
