"""Cost of memory event spans in chat search: dated LoCoMo questions, event spans off vs on.

Every turn of the 5 LoCoMo conversations is written through ``client.add`` (lite mode,
HyMemoryStore on SQLite, hashing embeddings so the figure is the search itself, not the
model); then each question that names a date (the only ones that read event spans) is
searched with ``hybrid_search`` under the shipped ranking with ``event_spans`` off and on.
Prints the latency per setting (several rounds, alternating) and how many candidate
memories the search read for their event spans.

Data: LoCoMo (Maharana et al., 2024), CC BY-NC 4.0, read from ../shared; never copied.

Usage:
    python -m bench.event_span_cost [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import hy_memory_langgraph.services.hybrid_search as chat_search
from bench.common.corpora import CATEGORIES, LOCOMO_PATH, locomo_doc_text
from bench.common.locomo import iter_questions, load_locomo
from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.retrieval.query import time_mentions
from hy_memory_langgraph.retrieval.ranking import DEFAULT_CHAT_RANKING
from hy_memory_langgraph.testing import HashingEmbeddings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    convs = load_locomo(LOCOMO_PATH)
    read: list[int] = []
    counted = chat_search.event_candidates

    def counting(*a: object, **k: object) -> list[str]:
        found = counted(*a, **k)  # type: ignore[arg-type]
        read.append(len(found))
        return found

    chat_search.event_candidates = counting  # type: ignore[assignment]
    settings = {"event spans off": replace(DEFAULT_CHAT_RANKING, event_spans=False),
                "event spans on": replace(DEFAULT_CHAT_RANKING, event_spans=True)}
    with tempfile.TemporaryDirectory() as tmp:
        client = HyMemoryClient(mode="lite", data_dir=Path(tmp), embeddings=HashingEmbeddings(dims=256))
        for conv in convs:
            for t in conv.turns:
                client.add([{"role": "user", "content": locomo_doc_text(t.speaker, t.text, t.img_caption)}],
                           user_id=conv.sample_id, session_id=f"{conv.sample_id}-session{t.session}",
                           memory_at=t.session_date)
        questions = [(conv.sample_id, qa.question) for conv, qa in iter_questions(convs, CATEGORIES)
                     if qa.evidence and time_mentions(qa.question)]
        latency: dict[str, list[float]] = {name: [] for name in settings}
        reads: dict[str, list[int]] = {name: [] for name in settings}
        for _ in range(args.rounds):
            for name, ranking in settings.items():
                for user, question in questions:
                    read.clear()
                    started = time.perf_counter()
                    chat_search.hybrid_search(client.context, user, question, 10, ranking=ranking)
                    latency[name].append((time.perf_counter() - started) * 1000)
                    reads[name].append(sum(read))
        client.close()
    print(f"{len(questions)} dated LoCoMo questions, {args.rounds} rounds, SQLite, hashing embeddings")
    print("| setting | p50 ms | mean ms | memories read for event spans (mean) |")
    print("|---|---|---|---|")
    for name in settings:
        print(f"| {name} | {statistics.median(latency[name]):.1f} | {statistics.fmean(latency[name]):.1f} | "
              f"{statistics.fmean(reads[name]):.0f} |")


if __name__ == "__main__":
    main()
