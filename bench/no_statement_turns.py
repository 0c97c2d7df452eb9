"""How many lite memories state nothing: question-only turns and reactions, per corpus.

Each corpus is taken as lite chat memory stored it before question-only turns were
carried (one memory per user or assistant message with text; trivial turns and repeats
not stored, ``lite_rules.py``), then each memory is classified with the library's predicates: question-only
(:func:`~hy_memory_langgraph.messages.is_question_only`: every sentence with content asks)
and reaction (:func:`bench.lab.reactions.is_reaction`: it says nothing the
session's memory before it did not, one word aside, and asks nothing else). The trivial
turns lite mode already leaves out are counted too. For LoCoMo, how many of them are
evidence of a question (what skipping them would cost recall).

Corpora (read in place from ../shared, never copied): LoCoMo dev five (Maharana et al.,
2024, CC BY-NC 4.0), τ-bench airline (MIT; the user and assistant messages with text of
each dialogue, one session each), BFCL v4 memory (Apache-2.0; the prerequisite
conversations).

Usage::

    python -m bench.no_statement_turns [--examples 5]
"""

from __future__ import annotations

import argparse
import json

from bench.common.corpora import Corpus, Doc, bfcl_corpora, locomo_corpora
from bench.common.lite_rules import apply_lite_rules, reaction_ids
from bench.common.paths import TAU_PATH
from hy_memory_langgraph.messages.signal import is_question_only, is_trivial


def tau_corpus() -> Corpus:
    """The τ-bench airline dialogues as one user's chat turns (a session per dialogue)."""
    docs = []
    for n, row in enumerate(json.loads(TAU_PATH.read_text(encoding="utf-8"))):
        for i, message in enumerate(row["traj"]):
            content = message.get("content")
            if message.get("role") in ("user", "assistant") and isinstance(content, str) and content.strip():
                docs.append(Doc(id=f"{n}:{i}", text=content, session=f"tau-{n}", date=None, role=message["role"]))
    return Corpus(id="tau-airline", docs=docs, queries=[], gold_kind="answer")


def _row(name: str, corpora: list[Corpus], examples: int) -> None:
    turns = sum(len(c.docs) for c in corpora)
    trivial = sum(is_trivial(d.text) for c in corpora for d in c.docs)
    stored = [apply_lite_rules(c, trivial=True, dedup=True)[0] for c in corpora]
    memories = sum(len(c.docs) for c in stored)
    questions = {(c.id, d.id) for c in stored for d in c.docs if is_question_only(d.text)}
    reactions = {(c.id, d) for c in stored for d in reaction_ids(c)}
    gold = {(c.id, g) for c in stored if c.gold_kind == "evidence" for q in c.queries for g in q.gold}
    either = questions | reactions
    evidence = (f"{len(questions & gold)} / {len(reactions & gold)} of {len(gold)}" if gold else "—")
    print(f"| {name} | {turns} | {trivial} | {memories} | {len(questions)} ({len(questions) / memories:.1%}) | "
          f"{len(reactions)} ({len(reactions) / memories:.1%}) | **{len(either) / memories:.1%}** | {evidence} |")
    if examples:
        texts = {(c.id, d.id): d.text for c in stored for d in c.docs}
        for label, found in (("question-only", questions), ("reaction", reactions)):
            for key in sorted(found)[:examples]:
                print(f"|  | {label}: {texts[key][:100]!r} |||||||")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=0, help="print the first N of each kind per corpus")
    args = parser.parse_args()
    print("| corpus | turns | trivial (not stored) | lite memories | question-only | reactions | no statement "
          "| evidence among them: question-only / reactions |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    _row("LoCoMo (5 conversations)", locomo_corpora(), args.examples)
    _row("τ-bench airline (100 dialogues)", [tau_corpus()], args.examples)
    _row("BFCL v4 memory (5 scenarios)", bfcl_corpora(), args.examples)


if __name__ == "__main__":
    main()
