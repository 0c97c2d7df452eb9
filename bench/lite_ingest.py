"""Lite ingest side by side: this package, mem0 and LangGraph's InMemoryStore.

Every system gets the same vectors, so the figures measure the systems and not the
model. Two runs:

* ``locomo``: every turn of the LoCoMo conversations (CC BY-NC 4.0, Maharana et al.
  2024) written one ``add`` per turn, each conversation its own user. The vectors are the
  embedded e5-small's document vectors of the exact texts each system embeds, computed
  once (kept in the benchmark embedding cache) and served from a table; a text outside
  the table (a search query, a text a system derives from a turn) gets a hashing vector
  and is counted (``misses``).
* ``scale``: one user filled with ``--scale`` synthetic one-sentence memories, then the
  add rate over the last ``--tail`` of them, and the p50 of 20 searches at that size;
  64-d hashing vectors (no model).

Systems: this package (``HyMemoryClient(mode="lite")``, one ``add`` per turn); mem0
(``Memory.add(..., infer=False)``: stores the message as it is, no LLM; Qdrant local on
disk, its default), run from the interpreter ``--peer-python`` (default
``$HY_PEER_PYTHON``) that has ``mem0ai`` installed; LangGraph's ``InMemoryStore`` with an
index (``put`` per turn) in the scale run. Without a peer interpreter only this package
and InMemoryStore are measured, and the run says so.

Usage::

    python -m bench.lite_ingest [--run locomo|scale|both] [--conversations N] [--rounds R]
                                [--scale 20000] [--tail 500] [--peer-python PATH]

``--rounds R`` runs each run R times per system, alternating the order of the systems,
and prints ours / peer items/s per round and their median: the machine's rate moves by
several percent between runs, so only systems run back to back compare.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common.peers import add_peer_arguments, run_child

DIMS_HASH = 64


# ---------------------------------------------------------------- vectors, stdlib + numpy only


def _hash_vector(text: str, dims: int) -> list[float]:
    import numpy as np

    seed = int.from_bytes(hashlib.sha1(text.encode("utf-8")).digest()[:8], "little")
    vec = np.random.default_rng(seed).standard_normal(dims).astype(np.float32)
    return (vec / np.linalg.norm(vec)).tolist()


class _Table:
    """Vectors by text from ``table.npz`` (``texts``, ``vecs``); a miss is hashed and counted."""

    def __init__(self, path: str | None, dims: int) -> None:
        import numpy as np

        self.dims, self.misses, self.rows = dims, 0, {}
        if path:
            with np.load(path) as data:
                self.rows = {str(t): v for t, v in zip(data["texts"], data["vecs"], strict=True)}
                self.dims = int(data["vecs"].shape[1])

    def vector(self, text: str) -> list[float]:
        row = self.rows.get(text)
        if row is None:
            self.misses += 1
            return _hash_vector(text, self.dims)
        return row.tolist()


# ---------------------------------------------------------------- the children


def _items(job: dict[str, Any]) -> list[dict[str, Any]]:
    return job["items"]


def _child_ours(job: dict[str, Any]) -> dict[str, Any]:
    from langchain_core.embeddings import Embeddings

    from hy_memory_langgraph.client import HyMemoryClient

    table = _Table(job.get("table"), job["dims"])

    class TableEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [table.vector(t) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return table.vector(text)

    client = HyMemoryClient(mode="lite", embeddings=TableEmbeddings(), data_dir=job["data_dir"])
    add = lambda item: client.add([item["message"]], user_id=item["user_id"],  # noqa: E731
                                  session_id=item["session_id"])
    search = lambda q, user: client.search(q, user_ids=[user], limit=10)  # noqa: E731
    out = _timed(job, add, search)
    client.close()
    return {**out, "misses": table.misses}


def _child_mem0(job: dict[str, Any]) -> dict[str, Any]:
    os.environ.setdefault("OPENAI_API_KEY", "unused-no-llm-call-with-infer-false")
    os.environ["MEM0_TELEMETRY"] = "False"
    from mem0 import Memory  # type: ignore[import-not-found]
    from mem0.embeddings.base import EmbeddingBase  # type: ignore[import-not-found]

    table = _Table(job.get("table"), job["dims"])

    class TableEmbedder(EmbeddingBase):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(None)

        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            return table.vector(text)

    data = Path(job["data_dir"])
    memory = Memory.from_config({
        "vector_store": {"provider": "qdrant", "config": {
            "path": str(data / "qdrant"), "on_disk": True, "collection_name": "bench",
            "embedding_model_dims": table.dims}},
        "history_db_path": str(data / "history.db")})
    memory.embedding_model = TableEmbedder()
    add = lambda item: memory.add([item["message"]], user_id=item["user_id"], infer=False)  # noqa: E731
    search = lambda q, user: memory.search(q, filters={"user_id": user}, top_k=10)  # noqa: E731
    return {**_timed(job, add, search), "misses": table.misses}


def _child_inmemory(job: dict[str, Any]) -> dict[str, Any]:
    from langgraph.store.memory import InMemoryStore

    table = _Table(job.get("table"), job["dims"])
    store = InMemoryStore(index={"dims": table.dims, "embed": lambda texts: [table.vector(t) for t in texts],
                                 "fields": ["text"]})
    counter = iter(range(10**9))
    add = lambda item: store.put(("memories", item["user_id"]), str(next(counter)),  # noqa: E731
                                 {"text": item["message"]["content"]})
    search = lambda q, user: store.search(("memories", user), query=q, limit=10)  # noqa: E731
    return {**_timed(job, add, search), "misses": table.misses}


def _timed(job: dict[str, Any], add: Any, search: Any) -> dict[str, Any]:
    walls = []
    for item in _items(job):
        started = time.perf_counter()
        add(item)
        walls.append(time.perf_counter() - started)
    searches = []
    for query, user in job.get("queries", []):
        started = time.perf_counter()
        search(query, user)
        searches.append(time.perf_counter() - started)
    return {"walls": walls, "searches": searches}


_CHILDREN = {"ours": _child_ours, "mem0": _child_mem0, "inmemory": _child_inmemory}


def _child_main(system: str, job_path: str) -> int:
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    result = _CHILDREN[system](job)
    Path(job["out"]).write_text(json.dumps(result))
    return 0


# ---------------------------------------------------------------- the parent


def _locomo_items(conversations: int) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    from bench.common.locomo import load_locomo
    from bench.common.paths import LOCOMO_PATH

    items, queries = [], []
    for conv in load_locomo(LOCOMO_PATH)[:conversations]:
        for turn in conv.turns:
            role = "user" if turn.speaker == conv.speaker_a else "assistant"
            items.append({"message": {"role": role, "content": turn.message(captions=False)},
                          "user_id": conv.sample_id, "session_id": f"{conv.sample_id}-{turn.session}"})
        queries += [(qa.question, conv.sample_id) for qa in conv.qa[:4]]
    return items, queries


def _scale_items(size: int) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    import random

    rng = random.Random(11)
    words = ("tea coffee Oslo chess jazz garden budget train flight hotel doctor review report "
             "meeting sister dog cat bike piano recipe movie book deadline invoice").split()
    items = [{"message": {"role": "user", "content": f"Note {n}: the user mentioned {' and '.join(rng.sample(words, 3))}."},
              "user_id": "u", "session_id": f"s{n // 20}"} for n in range(size)]
    return items, [(f"what about {w}", "u") for w in words[:20]]


def _e5_table(items: list[dict[str, Any]], path: Path) -> None:
    """e5 document vectors of every text a system embeds here: the message content."""
    import numpy as np

    from bench.common.embed_cache import EmbeddingCache
    from hy_memory_langgraph.models import E5Embeddings

    texts = list(dict.fromkeys(item["message"]["content"] for item in items))
    model = E5Embeddings()
    vecs = EmbeddingCache(tag="e5-small").embed(texts, model.embed_documents, side="passage")
    np.savez(path, texts=np.array(texts), vecs=vecs.astype(np.float32))


def _run(system: str, python: str, job: dict[str, Any], workdir: Path) -> dict[str, Any]:
    job = {**job, "data_dir": str(workdir / f"{system}-data"), "out": str(workdir / f"{system}.out.json")}
    Path(job["data_dir"]).mkdir(parents=True, exist_ok=True)
    env = {"MEM0_TELEMETRY": "False", "MEM0_DIR": str(workdir / "mem0home")}
    return run_child("bench.lite_ingest", system, python, job, workdir, env)


def _p50_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000 if values else float("nan")


def _print(run: str, system: str, result: dict[str, Any], tail: int | None, queries: list[tuple[str, str]]) -> float:
    """One line per system (returns its items/s); ``first search``: each user's first
    search after its adds, p50 over the users."""
    walls = result["walls"][-tail:] if tail else result["walls"]
    rate = len(walls) / sum(walls)
    users = [user for _, user in queries]
    firsts = [t for i, t in enumerate(result["searches"]) if i == 0 or users[i] != users[i - 1]]
    print(f"{run:<7} {system:<9} adds={len(walls):<6} items/s={rate:6.1f}  add p50={statistics.median(walls) * 1000:6.2f} ms"
          f"  search p50={_p50_ms(result['searches']):7.1f} ms  first search p50={_p50_ms(firsts):7.1f} ms"
          f"  vector misses={result['misses']}")
    return rate


def _summary(run: str, rates: dict[str, list[float]]) -> None:
    """Ours against each peer, round by round (each round's systems ran back to back)."""
    for peer, theirs in rates.items():
        if peer == "ours":
            continue
        ratios = [a / b for a, b in zip(rates["ours"], theirs, strict=True)]
        print(f"{run:<7} ours/{peer} items/s per round: " + " / ".join(f"{r:.2f}" for r in ratios)
              + f"  median {statistics.median(ratios):.2f}")


def _rounds(run: str, job: dict[str, Any], systems: list[tuple[str, str]], rounds: int, workdir: Path,
            tail: int | None) -> None:
    """Each system once per round, the order alternating (a slow moment hits all), then
    ours against each peer per round when there are several rounds."""
    rates: dict[str, list[float]] = {}
    for round_ in range(rounds):
        for name, python in (systems if round_ % 2 == 0 else systems[::-1]):
            result = _run(name, python, job, workdir / run / f"round{round_}")
            rates.setdefault(name, []).append(_print(run, name, result, tail, job["queries"]))
    if rounds > 1 and len(rates) > 1:
        _summary(run, rates)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", choices=("locomo", "scale", "both"), default="both")
    parser.add_argument("--conversations", type=int, default=5)
    parser.add_argument("--scale", type=int, default=20000)
    parser.add_argument("--tail", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=1,
                        help="rounds of each run, each system once per round, the order alternating")
    add_peer_arguments(parser)
    args = parser.parse_args(argv)
    if args.child:
        return _child_main(*args.child)
    if not args.peer_python:
        print("mem0: no --peer-python / $HY_PEER_PYTHON given; measuring this package and InMemoryStore only")
    peer = [("mem0", args.peer_python)] if args.peer_python else []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if args.run in ("locomo", "both"):
            items, queries = _locomo_items(args.conversations)
            _e5_table(items, workdir / "table.npz")
            job = {"items": items, "queries": queries, "table": str(workdir / "table.npz"), "dims": 384}
            _rounds("locomo", job, [("ours", sys.executable), *peer], args.rounds, workdir, None)
        if args.run in ("scale", "both"):
            items, queries = _scale_items(args.scale)
            job = {"items": items, "queries": queries, "table": None, "dims": DIMS_HASH}
            systems = [("ours", sys.executable), *peer, ("inmemory", sys.executable)]
            _rounds("scale", job, systems, args.rounds, workdir, args.tail)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
