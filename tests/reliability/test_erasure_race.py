"""Erasure wins races: ``delete_all(user)`` while another process keeps writing for that
user leaves nothing the writer had acknowledged before the erasure started (a lite write
keeps the session's last turns as context: read before an erasure and written after it,
they would come back)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.testing import HashingEmbeddings

pytestmark = pytest.mark.slow

_WRITER = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from hy_memory_langgraph.client import HyMemoryClient
    from hy_memory_langgraph.testing import HashingEmbeddings
    data, acked, stop = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    client = HyMemoryClient(mode="lite", data_dir=data, embeddings=HashingEmbeddings(dims=32))
    with acked.open("a") as log:
        seq = 0
        while not stop.exists():
            seq += 1
            client.add(f"note {seq} about the garden RACE{seq:06d}X", user_id="alice", session_id="s1")
            log.write(f"{seq}\\n")
            log.flush()
    client.close()
""")


def _acked(path: Path) -> list[int]:
    if not path.exists():
        return []
    return [int(line) for line in path.read_text().split("\n")[:-1] if line]


def _wait_for(condition, what: str, limit: float = 120.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"waited {limit:g} s for {what}"
        time.sleep(0.01)


@pytest.mark.parametrize("round_", range(4))
def test_delete_all_racing_a_writer_process_leaves_nothing_acknowledged_before(
        tmp_path: Path, round_: int) -> None:
    data, acked, stop = tmp_path / "d", tmp_path / "acked", tmp_path / "stop"
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(data), str(acked), str(stop)])
    try:
        _wait_for(lambda: len(_acked(acked)) >= 5 + 3 * round_, "the writer's first writes")
        client = HyMemoryClient(mode="lite", data_dir=data, embeddings=HashingEmbeddings(dims=32))
        before = max(_acked(acked))  # every write acknowledged before the erasure starts
        client.delete_all("alice")
        after = max(_acked(acked))  # the write in flight now (after + 1) may have begun before
        _wait_for(lambda: max(_acked(acked)) >= after + 3, "writes after the erasure")
        stop.touch()
        assert writer.wait(timeout=120) == 0
        rows = client.list_memories("alice", limit=10_000)["memories"]
        client.close()
    finally:
        stop.touch()
        writer.wait(timeout=120)
    erased = [f"RACE{s:06d}X" for s in range(1, before + 1)]
    stored = " ".join(f"{m['content']} {m.get('context') or ''}" for m in rows)
    assert [e for e in erased if e in stored] == []
    assert all(f"RACE{s:06d}X" in stored for s in (after + 2, after + 3))  # later writes kept
    left = [(p.name, e) for p in data.rglob("*") if p.is_file() for e in erased
            if e.encode() in p.read_bytes()]
    assert left == []
