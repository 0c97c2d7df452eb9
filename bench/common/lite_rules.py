"""The lite-mode write rules applied to a benchmark corpus, to measure them with the CV harness.

Lite chat memory (``hy_memory_langgraph/nodes/chat/turns.py``) does not store a turn that
repeats an earlier one (same owner, session and matched text) nor a trivial one (an
acknowledgement, emoji, function words only), whose text is carried into the next stored
turn of the session. :func:`apply_lite_rules` does the same to a corpus written one turn
per ``add`` (as ``locomo_recall.py e2e`` writes it), with the library's own predicates,
so the held-out recall of the kept memories can be compared with that of every turn.
Questions are unchanged; an evidence turn that is no longer stored counts as missed.
"""

from __future__ import annotations

from dataclasses import replace

from bench.common.corpora import Corpus, Doc
from hy_memory_langgraph.messages import is_trivial
from hy_memory_langgraph.repos.chat import turn_hash
from hy_memory_langgraph.services.turns import CONTEXT_CHARS

__all__ = ["apply_lite_rules"]


def apply_lite_rules(corpus: Corpus, *, trivial: bool, dedup: bool) -> tuple[Corpus, dict[str, int]]:
    """The corpus as lite mode would store it, and how many turns each rule dropped."""
    kept: list[Doc] = []
    seen: set[str] = set()
    carried: dict[str, list[str]] = {}
    dropped = {"trivial": 0, "duplicate": 0, "evidence_dropped": 0}
    evidence = {g for q in corpus.queries for g in q.gold} if corpus.gold_kind == "evidence" else set()
    for doc in corpus.docs:
        pending = carried.setdefault(doc.session, [])
        if trivial and is_trivial(doc.text):
            pending.append(doc.text)
            dropped["trivial"] += 1
            dropped["evidence_dropped"] += doc.id in evidence
            continue
        key = turn_hash(doc.role, doc.session, doc.text)
        if dedup and key in seen:
            carried[doc.session] = []
            dropped["duplicate"] += 1
            dropped["evidence_dropped"] += doc.id in evidence
            continue
        seen.add(key)
        text = "\n".join(pending)
        kept.append(replace(doc, carried=text[-CONTEXT_CHARS:]))
        carried[doc.session] = []
    return replace(corpus, docs=kept), dropped
