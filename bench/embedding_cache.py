"""What the embedding cache saves on a LoCoMo re-ingest (lite mode, embedded e5-small).

Four passes, each in its own process and a fresh data dir, write every turn of the
LoCoMo conversations through ``client.add`` and search every question of categories 1-4:

1. ``no cache``: ``HyMemoryClient()`` as it is by default;
2. ``no cache, again``: the same, to measure how much two runs differ on their own;
3. ``cache, cold``: ``HyMemoryClient(embedding_cache=CACHE)`` with an empty cache file;
4. ``cache, warm``: the same cache file, now filled by pass 3 (another process, another
   data dir: a re-ingest).

It prints, per pass, the calls and texts that reached the embedding model, the time spent
in it, the wall time of the ingest and of the searches, how many questions have a top-10
(dialogue ids and scores, ties in any order) different from pass 1, and, for the cache
passes, the largest difference between the cached vectors of all turns and the model's
fresh vectors of the same texts (0 means bit-identical).

Data: LoCoMo (Maharana et al., 2024), CC BY-NC 4.0, read from ../shared; never copied.

Usage:
    python -m bench.embedding_cache [--data PATH] [--conversations N] [--fast]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from bench.common.locomo import iter_questions, load_locomo
from bench.common.paths import LOCOMO_PATH
from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.models import E5Embeddings
from hy_memory_langgraph.testing import HashingEmbeddings

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
PASSES = ("no cache", "no cache, again", "cache, cold", "cache, warm")


class CountingEmbeddings(Embeddings):
    """Counts the calls, texts and seconds that reach the wrapped model."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.dims = getattr(inner, "dims", None)
        self.calls = self.texts = 0
        self.seconds = 0.0
        self._lock = threading.Lock()

    def _count(self, texts: int, started: float) -> None:
        with self._lock:
            self.calls += 1
            self.texts += texts
            self.seconds += time.perf_counter() - started

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        started = time.perf_counter()
        out = self.inner.embed_documents(texts)
        self._count(len(texts), started)
        return out

    def embed_query(self, text: str) -> list[float]:
        started = time.perf_counter()
        out = self.inner.embed_query(text)
        self._count(1, started)
        return out


def one_pass(args: argparse.Namespace) -> dict[str, Any]:
    """Ingest and search once (runs inside a child process); returns the measurements."""
    convs = load_locomo(args.data)[: args.conversations]
    counting = CountingEmbeddings(HashingEmbeddings(dims=256) if args.fast else E5Embeddings())
    with tempfile.TemporaryDirectory() as tmp:
        client = HyMemoryClient(mode="lite", data_dir=tmp, embeddings=counting,
                                embedding_cache=args.cache or None)
        started = time.perf_counter()
        turns = 0
        for conv in convs:
            for turn in conv.turns:
                text = turn.message(captions=False)
                if turn.img_caption:
                    text += f" [shared an image: {turn.img_caption}]"
                role = "user" if turn.speaker == conv.speaker_a else "assistant"
                client.add([{"role": role, "content": text}], user_id=conv.sample_id,
                           session_id=f"{conv.sample_id}-session{turn.session}",
                           memory_at=turn.session_date, metadata={"dia_id": turn.dia_id})
                turns += 1
        ingest_s = time.perf_counter() - started
        ingest_calls, ingest_texts, ingest_embed_s = counting.calls, counting.texts, counting.seconds
        started = time.perf_counter()
        tops = []
        for conv, qa in iter_questions(convs, CATEGORIES):
            found = client.search(qa.question, user_ids=[conv.sample_id], limit=10)
            # Ties keep no fixed order (ids are random), so compare each top-10 sorted.
            tops.append(sorted(((m["metadata"].get("dia_id"), m["score"]) for m in found["memories"]),
                               key=lambda hit: (-hit[1], str(hit[0]))))
        search_s = time.perf_counter() - started
        calls, texts, seconds = counting.calls, counting.texts, counting.seconds
        vector_diff = None
        if args.cache:  # after the measurements: cached vectors against fresh ones
            sample = [t.message()
                      for conv in convs for t in conv.turns]
            cached = client.embeddings.embed_documents(sample)
            fresh = counting.inner.embed_documents(sample)
            vector_diff = max(abs(a - b) for u, v in zip(cached, fresh) for a, b in zip(u, v))
        client.close()
    return {"turns": turns, "questions": len(tops), "ingest_s": ingest_s, "search_s": search_s,
            "ingest_calls": ingest_calls, "ingest_texts": ingest_texts, "ingest_embed_s": ingest_embed_s,
            "search_calls": calls - ingest_calls, "search_texts": texts - ingest_texts,
            "search_embed_s": seconds - ingest_embed_s, "tops": tops, "vector_diff": vector_diff}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=LOCOMO_PATH.resolve())
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--fast", action="store_true", help="hashing embeddings instead of e5-small")
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_pass(args)))
        return
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cache = str(Path(tmp) / "embedding-cache.db")
        for name in PASSES:
            argv = [sys.executable, __file__, "--child", "--data", str(args.data)]
            argv += ["--fast"] if args.fast else []
            argv += ["--conversations", str(args.conversations)] if args.conversations else []
            argv += ["--cache", cache] if name.startswith("cache") else []
            done = subprocess.run(argv, capture_output=True, text=True, check=True)
            results[name] = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{name}: done", file=sys.stderr)
        cache_mb = Path(cache).stat().st_size / 1e6
    base = results["no cache"]
    print(f"LoCoMo re-ingest ({args.data.name}, {base['turns']} turns, {base['questions']} questions; "
          f"embeddings: {'hashing (fast)' if args.fast else 'e5-small (embedded)'}; lite mode; "
          f"cache file {cache_mb:.1f} MB)\n")
    print("| pass | ingest: model calls / texts | model time | ingest wall | "
          "search: model calls / texts | model time | search wall | top-10 ≠ pass 1 | cached − fresh vectors |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        differ = sum(1 for a, b in zip(r["tops"], base["tops"]) if a != b)
        diff = "-" if r["vector_diff"] is None else f"{r['vector_diff']:.1g}"
        print(f"| {name} | {r['ingest_calls']:,} / {r['ingest_texts']:,} | {r['ingest_embed_s']:.1f} s | "
              f"{r['ingest_s']:.1f} s | {r['search_calls']:,} / {r['search_texts']:,} | "
              f"{r['search_embed_s']:.1f} s | {r['search_s']:.1f} s | {differ} / {len(r['tops'])} | {diff} |")


if __name__ == "__main__":
    main()
