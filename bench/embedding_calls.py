"""Embedding-model calls per ``add`` in pro mode (chat and working), counted at the model.

A counting embedding stands in for the model (it batches queries the way the embedded e5
does, and embeds a query differently from a document, as e5 does), a scripted chat model
for the LLM: the chat extraction returns ``--facts`` new facts per add (reconciled as ADD),
the working extraction two experiences and a fact. Each figure is the median over
``--adds`` adds after a warm-up add of the same user.

Usage:
    python -m bench.embedding_calls [--adds 10] [--facts 4]
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
from typing import Any

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.testing import HashingEmbeddings, ScriptedChatModel


class CountingEmbeddings(HashingEmbeddings):
    """Counts model calls and texts; queries carry a prefix, as with e5."""

    def __init__(self) -> None:
        super().__init__(dims=64)
        self.calls = 0
        self.texts = 0

    def _note(self, texts: int) -> None:
        self.calls += 1
        self.texts += texts

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self._note(len(texts))
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self._note(1)
        return HashingEmbeddings.embed_query(self, "query: " + text)

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        self._note(len(texts))
        return [HashingEmbeddings.embed_query(self, "query: " + t) for t in texts]


def _turn(messages: list[Any]) -> str:
    """The number of the conversation a prompt is about (the last one it quotes)."""
    found = re.findall(r"number (\d{4})", str(messages[-1].content))
    return found[-1] if found else "none"


def _chat_model(facts: int) -> ScriptedChatModel:
    def extract(messages: list[Any]) -> dict[str, Any]:
        turn = _turn(messages)
        return {"facts": [{"content": f"The user fact {i} of {turn}", "subject": "user", "owner": "user"}
                          for i in range(facts)]}
    ops = {"operations": [{"fact": f"n{i}", "op": "ADD", "target": None} for i in range(facts)]}
    return ScriptedChatModel.from_stages({"chat_extract": extract, "chat_reconcile": ops})


def _work_model() -> ScriptedChatModel:
    def extract(messages: list[Any]) -> dict[str, Any]:
        turn = _turn(messages)
        experiences = [{"task": f"task {k} of {turn}", "search_keys": [f"key {k}"], "solution": "steps",
                        "boundary_envs": [], "confidence": 0.8, "files": []} for k in range(2)]
        return {"experiences": experiences, "fact": {"subject": f"report {turn}", "statement": "exported it",
                                                     "files": [], "details": "ok"}}
    return ScriptedChatModel.from_stages({"working_extract": extract, "experience_reconcile": {"decisions": []},
                                          "fact_reconcile": {"supersede": []}, "progress_summary": {"summary": "s"}})


def _trace(i: int) -> list[dict[str, Any]]:
    call = {"id": f"c{i}", "type": "function", "function": {"name": "export", "arguments": "{}"}}
    return [{"role": "user", "content": f"Export report number {i:04d}"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": "saved"},
            {"role": "assistant", "content": f"Done {i:04d}"}]


def measure(scene: str, adds: int, facts: int) -> tuple[float, float]:
    """Median (calls, texts) per add."""
    emb = CountingEmbeddings()
    llm = _chat_model(facts) if scene == "chat" else _work_model()
    calls, texts = [], []
    with HyMemoryClient(mode="pro", llm=llm, data_dir=tempfile.mkdtemp(), embeddings=emb) as client:
        for i in range(adds + 1):
            before = (emb.calls, emb.texts)
            if scene == "chat":
                client.add(f"conversation number {i:04d}", user_id="u1")
            else:
                client.add(_trace(i), scene="working", user_id="u1")
            if i:
                calls.append(emb.calls - before[0])
                texts.append(emb.texts - before[1])
    return statistics.median(calls), statistics.median(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--adds", type=int, default=10)
    parser.add_argument("--facts", type=int, default=4)
    args = parser.parse_args()
    for scene in ("chat", "working"):
        calls, texts = measure(scene, args.adds, args.facts)
        print(f"{scene:8s} pro add: {calls:g} embedding calls, {texts:g} texts (median of {args.adds})")


if __name__ == "__main__":
    main()
