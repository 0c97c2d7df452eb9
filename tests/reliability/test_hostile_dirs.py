"""Hostile locations get our errors, never a dependency's: a data dir below a regular
file, a symbolic link loop, a directory where a database file should be, and a read-only
data dir, where searches work and writes are refused cleanly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.errors import ConfigError, HyMemoryError, StoreError
from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.testing import HashingEmbeddings

REPO = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent("""
    import json, sys
    from hy_memory_langgraph.client import HyMemoryClient
    from hy_memory_langgraph.errors import HyMemoryError
    from hy_memory_langgraph.testing import HashingEmbeddings
    out = {}
    client = HyMemoryClient(mode="lite", data_dir=sys.argv[1], embeddings=HashingEmbeddings(dims=32))
    out["found"] = [m["content"] for m in client.search("green tea", user_ids=["u1"])["memories"]]
    try:
        client.add("I also like coffee", user_id="u1")
        out["add"] = "written"
    except HyMemoryError as exc:
        out["add"] = f"{type(exc).__name__}: {exc}"
    except Exception as exc:
        out["add"] = f"FOREIGN {type(exc).__name__}: {exc}"
    client.close()
    print(json.dumps(out))
""")


def test_data_dir_below_a_regular_file_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match="a-file.*is a file"):
        HyMemoryClient(mode="lite", data_dir=blocker / "memory", embeddings=HashingEmbeddings(dims=32))
    with pytest.raises(StoreError, match="is a file"):
        HyMemoryStore(blocker / "sub" / "store.db")


def _run_read_only(data_dir: Path, script: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if os.geteuid() == 0:  # root ignores permissions: mount the data dir read-only instead
        if shutil.which("unshare") is None:
            pytest.fail("running as root needs unshare(1) to make a read-only mount")
        shell = (f"mount --bind {data_dir} {data_dir} && mount -o remount,ro,bind {data_dir} "
                 f"{data_dir} && exec {sys.executable} {script} {data_dir}")
        cmd = ["unshare", "-m", "sh", "-c", shell]
    else:
        for path in [data_dir, *data_dir.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
        cmd = [sys.executable, str(script), str(data_dir)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_read_only_data_dir_searches_and_refuses_writes(tmp_path: Path) -> None:
    data_dir = tmp_path / "ro"
    client = HyMemoryClient(mode="lite", data_dir=data_dir, embeddings=HashingEmbeddings(dims=32))
    client.add("I like green tea", user_id="u1")
    client.close()
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    out = _run_read_only(data_dir, script)
    assert out["found"] == ["I like green tea"]
    assert out["add"].startswith("ReadOnlyStoreError") and "read-only" in out["add"]
    assert issubclass(HyMemoryError, Exception)


READER = textwrap.dedent("""
    import json, sys
    from hy_memory_langgraph.client import HyMemoryClient
    from tests.reliability.probe import outcomes
    from hy_memory_langgraph.testing import HashingEmbeddings
    out = {}
    client = HyMemoryClient(mode="lite", data_dir=sys.argv[1], embeddings=HashingEmbeddings(dims=32),
                            embedding_cache=True)
    calls = {
        "chat": lambda: [m["content"] for m in client.search("green tea", user_ids=["u1"])["memories"]],
        "new query": lambda: len(client.search("something never asked", user_ids=["u1"])["memories"]),
        "coding": lambda: len(client.search("timeout", scene="coding", user_ids=["u1"])["facts"]),
        "working": lambda: len(client.search("report", scene="working", user_ids=["u1"])["facts"]),
        "export": lambda: len(list(client.export_memories())),
        "stats": lambda: client.stats()["users"],
        "list": lambda: len(client.list_memories("u1")["memories"]),
        "prompt": lambda: client.memory_prompt("u1")["available"],
    }
    out.update(outcomes(calls))
    try:
        client.close()
        out["close"] = "closed"
    except Exception as exc:
        out["close"] = f"FOREIGN {type(exc).__name__}: {exc}"
    print(json.dumps(out))
""")


def test_every_read_works_on_a_read_only_data_dir(tmp_path: Path) -> None:
    """With the embedding cache on, coding and working stores never written, a query never
    cached: reads answer, nothing tries to create a file."""
    data_dir = tmp_path / "ro"
    client = HyMemoryClient(mode="lite", data_dir=data_dir, embeddings=HashingEmbeddings(dims=32),
                            embedding_cache=True)
    client.add("I like green tea", user_id="u1")
    client.close()
    script = tmp_path / "reader.py"
    script.write_text(READER)
    out = _run_read_only(data_dir, script)
    assert out == {"chat": ["I like green tea"], "new query": 1, "coding": 0, "working": 0,
                   "export": out["export"], "stats": 1, "list": 1, "prompt": True, "close": "closed"}, out
    assert isinstance(out["export"], int) and out["export"] >= 3


def _loop(link: Path) -> None:
    """Make ``link`` a symbolic link loop (``link`` → ``link.other`` → ``link``)."""
    other = link.with_name(link.name + ".other")
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(other)
    other.symlink_to(link)


def test_a_symlink_loop_at_the_data_dir_is_a_config_error_naming_it(tmp_path: Path) -> None:
    _loop(tmp_path / "loop")
    with pytest.raises(ConfigError, match=f"'{tmp_path / 'loop'}' is a symbolic link that leads back to itself"):
        HyMemoryClient(mode="lite", data_dir=tmp_path / "loop", embeddings=HashingEmbeddings(dims=32))
    with pytest.raises(ConfigError, match="symbolic link that leads back to itself"):
        HyMemoryClient(mode="lite", data_dir=tmp_path / "loop" / "below", embeddings=HashingEmbeddings(dims=32))


def test_a_symlink_loop_at_a_database_path_is_our_error_naming_it(tmp_path: Path) -> None:
    db = tmp_path / "d" / "data" / "chat_memory.db"
    _loop(db)
    with pytest.raises(StoreError, match=f"{db} is a symbolic link that leads back to itself"):
        HyMemoryStore(db)
    with HyMemoryClient(mode="lite", data_dir=tmp_path / "d", embeddings=HashingEmbeddings(dims=32)) as client:
        with pytest.raises(StoreError, match=f"{db} is a symbolic link that leads back to itself"):
            client.add("I like green tea", user_id="alice")
        with pytest.raises(StoreError, match=f"{db} is a symbolic link that leads back to itself"):
            client.search("tea", user_ids=["alice"])


def test_a_directory_where_a_database_should_be_is_reported_as_such(tmp_path: Path) -> None:
    """Not "damaged, restore from a backup": the file is not there, a directory is."""
    db = tmp_path / "d" / "data" / "chat_memory.db"
    db.mkdir(parents=True)
    with pytest.raises(StoreError, match=f"{db}: it is a directory, not a database file; move it aside") as caught:
        HyMemoryStore(db)
    assert "damaged" not in str(caught.value) and "backup" not in str(caught.value)
    with HyMemoryClient(mode="lite", data_dir=tmp_path / "d", embeddings=HashingEmbeddings(dims=32)) as client:
        for call in (lambda: client.add("I like green tea", user_id="alice"),
                     lambda: client.search("tea", user_ids=["alice"]),
                     lambda: client.list_memories("alice")):
            with pytest.raises(StoreError, match="it is a directory, not a database file") as caught:
                call()
            assert "damaged" not in str(caught.value) and "backup" not in str(caught.value)
    assert db.is_dir() and not any(db.iterdir())  # nothing was written into it


@pytest.mark.parametrize("fault", ["directory", "symlink loop"])
def test_a_pipeline_log_that_cannot_be_opened_fails_no_call(tmp_path: Path, fault: str,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    log_db = tmp_path / "d" / "data" / "pipeline_log.db"  # where the log goes
    if fault == "directory":
        log_db.mkdir(parents=True)
    else:
        _loop(log_db)
    with caplog.at_level("WARNING", logger="hy_memory_langgraph.client.memory"):
        client = HyMemoryClient(mode="lite", data_dir=tmp_path / "d", embeddings=HashingEmbeddings(dims=32))
    assert "pipeline_log.db" in caplog.text and "MEMORY_PIPELINE_LOG_DAYS=0" in caplog.text
    client.add("I like oolong tea", user_id="alice")
    assert client.search("tea", user_ids=["alice"])["memories"][0]["content"] == "I like oolong tea"
    client.close()
