"""Benchmark corpora for chat-search recall: LoCoMo and BFCL v4 memory, as plain records.

A :class:`Corpus` is one user's memories (:class:`Doc`, in write order) and the questions
asked about them (:class:`Query`). Two kinds of gold:

* ``"evidence"`` (LoCoMo): ``gold`` holds the ``dia_id`` of each supporting turn; recall@k
  of a question is the share of its evidence found in the top k.
* ``"answer"`` (BFCL): ``gold`` holds acceptable answer strings; recall@k is 1 when any of
  them (normalised, see :func:`normalize_answer_text`) occurs in the text of a top-k memory.

Data is read where it lives (:mod:`bench.common.paths`), never copied into the repository:

* LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents",
  2024), CC BY-NC 4.0: benchmark use only, attribution kept.
* BFCL v4 memory (Berkeley Function-Calling Leaderboard, gorilla project), Apache-2.0.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from bench.common.locomo import Conversation, iter_questions, load_locomo, locomo_doc_text
from bench.common.paths import BFCL_DIR, LOCOMO_PATH

__all__ = [
    "BFCL_DIR",
    "CATEGORIES",
    "Corpus",
    "Doc",
    "LOCOMO_PATH",
    "Query",
    "bfcl_corpora",
    "locomo_corpora",
    "locomo_doc_text",
    "normalize_answer_text",
]

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


@dataclass(frozen=True)
class Doc:
    """One stored memory: ``text`` is the message as written (``content``); ``carried``
    the trivial turns before it that lite mode does not store (see ``lite_rules.py``)."""

    id: str
    text: str
    session: str
    date: datetime | None
    role: str = "user"
    carried: str = ""


@dataclass(frozen=True)
class Query:
    """One question; ``gold`` is evidence ids or answer strings (see the module doc)."""

    text: str
    category: str
    gold: tuple[str, ...]


@dataclass
class Corpus:
    """One user's memories (in write order) and the questions about them."""

    id: str
    docs: list[Doc]
    queries: list[Query]
    gold_kind: str = "evidence"
    speakers: tuple[str, ...] = field(default_factory=tuple)


def _locomo_corpus(conv: Conversation) -> Corpus:
    docs = [
        Doc(id=t.dia_id, text=locomo_doc_text(t.speaker, t.text, t.img_caption),
            session=f"{conv.sample_id}-session{t.session}", date=t.session_date,
            role="user" if t.speaker == conv.speaker_a else "assistant")
        for t in conv.turns
    ]
    queries = [
        Query(text=qa.question, category=CATEGORIES[qa.category], gold=tuple(qa.evidence))
        for _, qa in iter_questions([conv], CATEGORIES)
        if qa.evidence
    ]
    return Corpus(id=conv.sample_id, docs=docs, queries=queries, gold_kind="evidence",
                  speakers=(conv.speaker_a, conv.speaker_b))


def locomo_corpora(path: Path = LOCOMO_PATH) -> list[Corpus]:
    """One corpus per LoCoMo conversation, questions of categories 1-4 with evidence."""
    return [_locomo_corpus(conv) for conv in load_locomo(path)]


def _json_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _bfcl_prereq_docs(rows: Iterable[dict], scenario: str) -> list[Doc]:
    """Each prerequisite conversation is one session; each user message one memory."""
    docs: list[Doc] = []
    base = datetime(2025, 1, 1, 9, 0)
    for n, row in enumerate(rows):
        for turn_no, turn in enumerate(row["question"]):
            for msg in turn:
                if msg.get("role") in ("user", "assistant") and str(msg.get("content", "")).strip():
                    docs.append(Doc(id=f"{row['id']}:{turn_no}", text=str(msg["content"]),
                                    session=f"{scenario}-{row['id']}",
                                    date=base + timedelta(days=n), role=msg["role"]))
    return docs


def bfcl_corpora(root: Path = BFCL_DIR) -> list[Corpus]:
    """One corpus (one user) per BFCL memory scenario."""
    answers = {row["id"]: row["ground_truth"] for row in _json_lines(root / "possible_answer" / "BFCL_v4_memory.json")}
    questions: dict[str, list[Query]] = {}
    for row in _json_lines(root / "BFCL_v4_memory.json"):
        text = " ".join(m["content"] for turn in row["question"] for m in turn if m.get("role") == "user")
        gold = tuple(str(a) for a in answers[row["id"]])
        questions.setdefault(row["scenario"], []).append(Query(text=text, category=row["scenario"], gold=gold))
    corpora = []
    for path in sorted((root / "memory_prereq_conversation").glob("memory_*.json")):
        scenario = path.stem.removeprefix("memory_")
        docs = _bfcl_prereq_docs(_json_lines(path), scenario)
        corpora.append(Corpus(id=f"bfcl-{scenario}", docs=docs, queries=questions.get(scenario, []),
                              gold_kind="answer"))
    return corpora


_NON_WORD = re.compile(r"[^\w%$.]+")


def normalize_answer_text(text: str) -> str:
    """Case-folded, NFKC, punctuation (except ``% $ .``) as single spaces, padded.

    Padded with spaces so ``" 35 " in normalize_answer_text(doc)`` matches whole words.

    Example:
        >>> normalize_answer_text("I'm 35 years-old!")
        ' i m 35 years old '
    """
    text = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    text = _NON_WORD.sub(" ", text)
    text = re.sub(r"\.(?=\s|$)", " ", text)  # sentence dots, not decimal points
    return f" {' '.join(text.split())} "
