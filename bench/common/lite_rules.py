"""The lite-mode write rules applied to a benchmark corpus, to measure them with the CV harness.

Lite chat memory (``hy_memory_langgraph/services/turns.py``) does not store a turn that
repeats an earlier one (same owner, session and matched text) nor a trivial one (an
acknowledgement, emoji, function words only), whose text is carried into the next stored
turn of the session. :func:`apply_lite_rules` does the same to a corpus written one turn
per ``add`` (as ``locomo_recall.py e2e`` writes it), with the library's own predicates,
so the held-out recall of the kept memories can be compared with that of every turn.
Questions are unchanged; an evidence turn that is no longer stored counts as missed.

Two more rules are measured the same way, not shipped: ``reactions`` carries a turn that
only reacts to the message before it (:func:`bench.lab.reactions.is_reaction`)
like a trivial one, ``questions`` a question-only one.
:func:`reaction_ids` names the reaction turns of a corpus stored as it is.
"""

from __future__ import annotations

from dataclasses import replace

from bench.common.corpora import Corpus, Doc
from bench.lab.reactions import is_reaction
from hy_memory_langgraph.messages.signal import is_question_only, is_trivial
from hy_memory_langgraph.repos.chat import turn_hash
from hy_memory_langgraph.services.turns import CONTEXT_CHARS

__all__ = ["apply_lite_rules", "reaction_ids"]


def apply_lite_rules(corpus: Corpus, *, trivial: bool, dedup: bool, reactions: bool = False,
                     questions: bool = False) -> tuple[Corpus, dict[str, int]]:
    """The corpus as lite mode would store it, and how many turns each rule dropped.

    ``reactions`` / ``questions``: reaction and question-only turns are carried like
    trivial ones (a reaction is judged against the session's last stored turn).
    """
    kept: list[Doc] = []
    seen: set[str] = set()
    carried: dict[str, list[str]] = {}
    context: dict[str, str] = {}
    dropped = {"trivial": 0, "duplicate": 0, "reaction": 0, "question": 0, "evidence_dropped": 0}
    evidence = {g for q in corpus.queries for g in q.gold} if corpus.gold_kind == "evidence" else set()
    for doc in corpus.docs:
        pending = carried.setdefault(doc.session, [])
        rule = ("trivial" if trivial and is_trivial(doc.text) else
                "reaction" if reactions and is_reaction(doc.text, context.get(doc.session, "")) else
                "question" if questions and is_question_only(doc.text) else None)
        if rule is not None:
            pending.append(doc.text)
            dropped[rule] += 1
            dropped["evidence_dropped"] += doc.id in evidence
            continue
        key = turn_hash(doc.role, doc.session, doc.text)
        if dedup and key in seen:
            carried[doc.session] = []
            dropped["duplicate"] += 1
            dropped["evidence_dropped"] += doc.id in evidence
            context[doc.session] = doc.text
            continue
        seen.add(key)
        text = "\n".join(pending)
        kept.append(replace(doc, carried=text[-CONTEXT_CHARS:]))
        carried[doc.session] = []
        context[doc.session] = doc.text
    return replace(corpus, docs=kept), dropped


def reaction_ids(corpus: Corpus) -> frozenset[str]:
    """The memories of ``corpus`` that only react to the session's memory before them."""
    found: set[str] = set()
    context: dict[str, str] = {}
    for doc in corpus.docs:
        if is_reaction(doc.text, context.get(doc.session, "")):
            found.add(doc.id)
        context[doc.session] = doc.text
    return frozenset(found)
