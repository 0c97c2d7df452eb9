"""LLM economy of the chat scene: calls and prompt tokens per ``add`` and per search mode.

A counting fake model (scripted replies, prompt tokens estimated as characters / 4
by the library's own accounting) stands in for the LLM, so the figures measure what
the pipelines SEND, independent of any provider. Input: the sessions of one LoCoMo
conversation (CC BY-NC 4.0, Maharana et al. 2024), each session one ``add`` in pro
mode; then every search mode over the first questions.

Usage:
    python -m bench.llm_economy [--data PATH] [--sessions N] [--questions N]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.common.locomo import load_locomo
from bench.common.paths import LOCOMO_PATH
from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.fences import read_fences
from hy_memory_langgraph.testing import HashingEmbeddings, ScriptedChatModel


def _extract(messages: list[Any]) -> dict[str, Any]:
    said = [row["user"] for region in read_fences(str(messages[-1].content)) if region.name == "new_messages"
            for row in region.rows if "user" in row]
    return {"facts": [{"content": text[:113], "subject": "user", "owner": "user"} for text in said[:3]]}


def _model() -> ScriptedChatModel:
    return ScriptedChatModel.from_stages({
        "chat_extract": _extract,
        "chat_reconcile": {"operations": [{"fact": "n0", "op": "ADD", "target": None}]},
        "query_full": {"scene": "chat", "rewrite": "standalone query", "time_range": {"start": None, "end": None}},
        "query_classify": {"scene": "chat"},
        "query_rewrite": {"rewrite": "standalone query", "time_range": {}},
    })


def _delta(client: HyMemoryClient, before: dict[str, dict[str, Any]]) -> tuple[int, int]:
    after = client.llm_usage.snapshot()
    calls = sum(s["calls"] for s in after.values()) - sum(s["calls"] for s in before.values())
    tokens = sum(s["prompt_tokens"] for s in after.values()) - sum(s["prompt_tokens"] for s in before.values())
    return calls, tokens


def run(args: argparse.Namespace) -> None:
    conv = load_locomo(args.data)[0]
    sessions: dict[int, list[Any]] = defaultdict(list)
    for turn in conv.turns:
        sessions[turn.session].append(turn)
    add_calls, add_tokens = [], []
    searches: dict[str, list[tuple[int, int]]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        client = HyMemoryClient(mode="pro", llm=_model(), embeddings=HashingEmbeddings(dims=128), data_dir=tmp)
        for number in sorted(sessions)[: args.sessions]:
            turns = sessions[number]
            msgs = [{"role": "user" if t.speaker == conv.speaker_a else "assistant",
                     "content": t.message(captions=False)} for t in turns]
            before = client.llm_usage.snapshot()
            client.add(msgs, user_id="u", session_id="s", memory_at=turns[0].session_date)
            calls, tokens = _delta(client, before)
            add_calls.append(calls)
            add_tokens.append(tokens)
        modes = {
            "default, query=": lambda q, prev: client.search(q, user_ids=["u"]),
            "default, queries=[prev, q]": lambda q, prev: client.search(queries=[prev, q], user_ids=["u"]),
            "agentic, query=": lambda q, prev: client.search(q, user_ids=["u"], search_mode="agentic"),
            "explicit scene='chat'": lambda q, prev: client.search(q, scene="chat", user_ids=["u"], search_mode="agentic"),
        }
        questions = [qa.question for qa in conv.qa[: args.questions]]
        for name, call in modes.items():
            for prev, query in zip(["(start)"] + questions, questions):
                before = client.llm_usage.snapshot()
                call(query, prev)
                searches[name].append(_delta(client, before))
        client.close()
    print(f"LLM economy, chat scene ({len(add_calls)} adds = LoCoMo sessions of {conv.sample_id}, "
          f"avg {statistics.fmean(len(s) for s in list(sessions.values())[: args.sessions]):.1f} turns each)\n")
    print("| operation | LLM calls (avg) | LLM calls (max) | prompt tokens (avg) |")
    print("|---|---|---|---|")
    print(f"| chat add (pro) | {statistics.fmean(add_calls):.2f} | {max(add_calls)} | {statistics.fmean(add_tokens):.0f} |")
    for name, rows in searches.items():
        calls, tokens = zip(*rows)
        print(f"| search: {name} | {statistics.fmean(calls):.2f} | {max(calls)} | {statistics.fmean(tokens):.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=LOCOMO_PATH.resolve())
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--questions", type=int, default=20)
    run(parser.parse_args())


if __name__ == "__main__":
    main()
