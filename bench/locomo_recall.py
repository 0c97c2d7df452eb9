"""LoCoMo evidence recall of chat search (lite mode, embedded embeddings).

Every turn of each conversation is written through ``client.add`` (session date as
``memory_at``, the LoCoMo session as ``session_id``, ``"{speaker}: {text}"`` as the
message; lite mode keeps the previous turn of the session as retrieval context), every
question of categories
1-4 is searched through the library, and evidence recall@5/@10 is printed per
category, for the hybrid default and, in the same run over the same stored
memories, BM25 alone and vectors alone.

Data: LoCoMo (Maharana et al., 2024), CC BY-NC 4.0, read from ../shared; never copied.

Usage:
    python bench/locomo_recall.py [--data PATH] [--fast] [--store memory|sqlite]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_data import Conversation, iter_questions, load_locomo  # noqa: E402

from hy_memory_langgraph.client import HyMemoryClient  # noqa: E402
from hy_memory_langgraph.nodes.chat.search import VECTOR_WEIGHT, hybrid_search  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "locomo" / "locomo_dev5.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10)


def _client(args: argparse.Namespace, data_dir: Path) -> HyMemoryClient:
    kwargs = {}
    if args.fast:
        from hy_memory_langgraph.testing import HashingEmbeddings

        kwargs["embeddings"] = HashingEmbeddings(dims=256)
    if args.store == "memory":
        from langgraph.store.memory import InMemoryStore

        kwargs["store_factory"] = lambda path, index: InMemoryStore(index=index)
    return HyMemoryClient(mode="lite", data_dir=data_dir, **kwargs)


def _ingest(client: HyMemoryClient, conv: Conversation) -> float:
    started = time.perf_counter()
    for turn in conv.turns:
        text = f"{turn.speaker}: {turn.text}"
        if turn.img_caption:
            text += f" [shared an image: {turn.img_caption}]"
        role = "user" if turn.speaker == conv.speaker_a else "assistant"
        client.add([{"role": role, "content": text}], user_id=conv.sample_id,
                   session_id=f"{conv.sample_id}-session{turn.session}",
                   memory_at=turn.session_date, metadata={"dia_id": turn.dia_id})
    return time.perf_counter() - started


def _recall(found: list[str], evidence: list[str], k: int) -> float:
    top = set(found[:k])
    return sum(1 for e in evidence if e in top) / len(evidence)


def run(args: argparse.Namespace) -> None:
    convs = load_locomo(args.data)
    weights = {"hybrid (default)": VECTOR_WEIGHT, "BM25 only": 0.0, "vector only": 1.0}
    scores: dict[str, dict[int, dict[int, list[float]]]] = {
        name: defaultdict(lambda: defaultdict(list)) for name in weights}
    client_latency: list[float] = []
    turns = ingest_s = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        client = _client(args, Path(tmp))
        for conv in convs:
            ingest_s += _ingest(client, conv)
            turns += len(conv.turns)
        by_conv = defaultdict(list)
        for conv, qa in iter_questions(convs, CATEGORIES):
            if qa.evidence:
                by_conv[conv.sample_id].append(qa)
        for sample_id, questions in by_conv.items():
            for qa in questions:
                t0 = time.perf_counter()
                client.search(qa.question, user_ids=[sample_id], limit=max(KS))
                client_latency.append((time.perf_counter() - t0) * 1000)
                for name, weight in weights.items():
                    hits = hybrid_search(client.context, sample_id, qa.question, max(KS), vector_weight=weight)
                    found = [h.metadata.get("dia_id") for h in hits]
                    for k in KS:
                        scores[name][qa.category][k].append(_recall(found, qa.evidence, k))
        client.close()
    _report(scores, turns, ingest_s, client_latency, args)


def _report(scores, turns, ingest_s, latency, args) -> None:
    print(f"LoCoMo evidence recall ({args.data.name}; embeddings: {'hashing (fast)' if args.fast else 'e5-small (embedded)'}; store: {args.store})")
    print(f"ingest: {int(turns)} turns via client.add in {ingest_s:.1f} s ({turns / ingest_s:.0f} turns/s); "
          f"client.search p50 {statistics.median(latency):.1f} ms over {len(latency)} questions\n")
    header = "| retriever | " + " | ".join(f"{CATEGORIES[c]} R@5 / R@10" for c in CATEGORIES) + " | overall R@5 | overall R@10 |"
    print(header)
    print("|" + "---|" * (len(CATEGORIES) + 3))
    for name, by_cat in scores.items():
        cells = []
        for cat in CATEGORIES:
            r5, r10 = (statistics.fmean(by_cat[cat][k]) for k in KS)
            cells.append(f"{r5:.3f} / {r10:.3f} (n={len(by_cat[cat][5])})")
        overall = {k: statistics.fmean([v for cat in CATEGORIES for v in by_cat[cat][k]]) for k in KS}
        print(f"| {name} | " + " | ".join(cells) + f" | {overall[5]:.3f} | {overall[10]:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA.resolve())
    parser.add_argument("--fast", action="store_true", help="hashing embeddings instead of e5-small")
    parser.add_argument("--store", choices=["sqlite", "memory"], default="sqlite")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
