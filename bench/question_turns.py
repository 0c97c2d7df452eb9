"""Probe: where a stored fact ranks below stored question-only turns, by ``question_weight``
and ``question_echo``.

The repro: a lite client stores a few statements (one per write and session) and, later,
turns that only ask about one of them (``"What's the name of your cat?"``; lite writes
now carry such turns instead of storing them, so the probe edits stored turns into them,
as data written before, imported or edited holds them). The search
``"what's the name of my cat"`` shares more words with those questions than with the fact
that answers it (``"My cat is called Miso."``). For each weight (1.0 = off, the shipped
default, then the grid of ``locomo_recall.py cv --section questions``) and each echo
threshold (0 = every question weighted, then :data:`QUESTION_ECHOES`; only questions whose
calibrated similarity to the query reaches it are weighted) the probe prints the fact's
rank, the ranks of the questions and the scores; first the shipped default, then each
question's calibrated similarity to the query.

Usage:
    python -m bench.question_turns [--fast] [--weights 1.0 0.5 ...] [--echoes 0 0.75 ...]

``--fast`` uses hashing embeddings (no model) instead of the embedded e5-small.
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace

from langchain_core.embeddings import Embeddings

from bench.common.harness import QUESTION_ECHOES, QUESTION_WEIGHTS
from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.models import E5Embeddings
from hy_memory_langgraph.retrieval.ranking import DEFAULT_CHAT_RANKING
from hy_memory_langgraph.testing import HashingEmbeddings

FACT = "My cat is called Miso."
STATEMENTS = ["I work as a nurse in Porto.", "My sister Ana lives in Lisbon.", FACT,
              "We went hiking in the Alps last summer.", "I am learning to play the cello."]
QUESTIONS = ["What's the name of your cat?", "Do you remember the name of the cat?"]
QUERY = "what's the name of my cat"


def _client(embeddings: Embeddings, data_dir: str) -> HyMemoryClient:
    """A lite client holding the repro's memories (each turn its own write and session).

    Lite writes no longer store question-only turns (they are carried into the next
    stored turn); the questions here are stored turns edited into questions, which search
    ranks like the question-only turns earlier versions stored.
    """
    client = HyMemoryClient(mode="lite", data_dir=data_dir, embeddings=embeddings)
    for i, text in enumerate(STATEMENTS):
        client.add([{"role": "user", "content": text}], user_id="u1", session_id=f"s{i}")
    for i, text in enumerate(QUESTIONS):
        placeholder = client.add([{"role": "assistant", "content": f"Placeholder {i}."}], user_id="u1",
                                 session_id=f"q{i}")["memory_ids"][0]
        client.update(placeholder, text)
    return client


def _report(client: HyMemoryClient, weight: float, echo: float) -> str:
    """One table row: the settings, the fact's rank, the questions' ranks, the top scores."""
    client.context.chat_ranking = replace(DEFAULT_CHAT_RANKING, question_weight=weight, question_echo=echo)
    found = client.search(QUERY, user_ids=["u1"], limit=10)["memories"]
    texts = [m["content"] for m in found]
    questions = ", ".join(str(texts.index(q) + 1) for q in QUESTIONS)
    scores = "; ".join(f"{m['content'][:24]} {m['score']:.3f}" for m in found[:4])
    return f"| {weight:g} | {echo:g} | {texts.index(FACT) + 1} | {questions} | {scores} |"


def _echoes(client: HyMemoryClient) -> str:
    """Each question's calibrated similarity to the query (what ``question_echo`` compares)."""
    scale = client.context.stores.calibration().for_text(QUERY)
    hits = client.context.chat_repo.vector_search("u1", QUERY, limit=len(STATEMENTS) + len(QUESTIONS))
    cosines = {m.content: float(m.score or 0.0) for m in hits}
    return "; ".join(f"{q!r} cosine {cosines[q]:.3f} -> {scale.similarity(cosines[q]):.3f}"
                     for q in [*QUESTIONS, FACT])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="hashing embeddings instead of e5-small")
    parser.add_argument("--weights", type=float, nargs="+", default=None)
    parser.add_argument("--echoes", type=float, nargs="+", default=None)
    args = parser.parse_args()
    default = DEFAULT_CHAT_RANKING
    weights = args.weights or list(dict.fromkeys([1.0, *QUESTION_WEIGHTS[1:]]))
    echoes = args.echoes or list(QUESTION_ECHOES)
    grid = [(1.0, 0.0)] + [(w, e) for w in weights if w < 1.0 for e in echoes]
    embeddings: Embeddings = HashingEmbeddings(dims=256) if args.fast else E5Embeddings()
    print(f"query {QUERY!r}; fact {FACT!r}; {len(STATEMENTS)} statements, {len(QUESTIONS)} "
          f"question-only turns; {'hashing' if args.fast else 'e5-small'} embeddings; shipped "
          f"default question_weight {default.question_weight:g}, question_echo {default.question_echo:g}\n")
    with tempfile.TemporaryDirectory() as tmp:
        client = _client(embeddings, tmp)
        try:
            print("calibrated similarity to the query: " + _echoes(client) + "\n")
            print("| question_weight | question_echo | rank of the fact | ranks of the questions | top 4 (score) |")
            print("|---|---|---|---|---|")
            print(_report(client, default.question_weight, default.question_echo).replace("| ", "| default ", 1))
            for weight, echo in grid:
                print(_report(client, weight, echo))
        finally:
            client.close()


if __name__ == "__main__":
    main()
