"""``hy-memory demo``: write a few memories and search them (lite mode, no API key).

Runs in a new temporary data dir that is removed afterwards, or in ``--data-dir`` (kept).
The handler only; its arguments are in :mod:`~hy_memory_langgraph.cli.parsers`.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path
from typing import Any, Final

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.models import E5Embeddings

_DEMO_TURNS: Final = [
    ("2024-05-01T09:00:00Z", "I just adopted a grey cat and named her Miso."),
    ("2024-05-03T18:30:00Z", "I'm training for the Berlin marathon in September."),
    ("2024-05-10T12:00:00Z", "我最喜欢的茶是龙井，每天早上都喝。"),
    ("2024-06-02T08:15:00Z", "We moved to Lisbon last week, the new flat is near the river."),
]
_DEMO_QUERIES: Final = [
    "What is the name of my pet?",
    "我喜欢喝什么茶？",
    "Which city do I live in now?",
    "running race plans",
]


def _run(data_dir: Path, *, quiet: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"data_dir": str(data_dir), "writes": [], "searches": []}
    config = MemoryConfig.from_env(data_dir=data_dir)
    with HyMemoryClient(mode="lite", config=config, embeddings=E5Embeddings()) as client:
        for at, text in _DEMO_TURNS:
            result = client.add([{"role": "user", "content": text}], user_id="demo_user", memory_at=at)
            out["writes"].append({"text": text, "ops_summary": result["ops_summary"]})
            if not quiet:
                print(f"add  [{result['scene']}] {result['ops_summary']}  {text}")
        for query in _DEMO_QUERIES:
            found = client.search(query, user_ids=["demo_user"], limit=2)
            hits = [{"score": m["score"], "memory_at": m["memory_at"], "content": m["content"]}
                    for m in found["memories"]]
            out["searches"].append({"query": query, "memories": hits})
            if not quiet:
                print(f"\nsearch: {query}  ({found['elapsed_ms']:.1f} ms)")
                for m in hits:
                    print(f"  {m['score']:.3f}  {m['memory_at'][:10]}  {m['content']}")
        out["llm_calls"] = client.llm_usage.total_calls
    if not quiet:
        print(f"\nLLM calls: {out['llm_calls']} (lite mode)")
    return out


def demo(args: argparse.Namespace) -> Any:
    if getattr(args, "data_dir", None):
        data_dir = Path(args.data_dir).expanduser()
        if not args.json:
            print(f"data dir: {data_dir} (kept)")
        return _run(data_dir, quiet=args.json)
    data_dir = Path(tempfile.mkdtemp(prefix="hy-memory-demo-"))
    try:
        if not args.json:
            print(f"data dir: {data_dir} (temporary, removed at the end)")
        return {**_run(data_dir, quiet=args.json), "removed": True}
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
