"""Lite mode: deterministic extraction rules (zero LLM calls), zh and en.

The rules cover the four clarifications the contract names (``docs/design.md#workflow-memory``)
plus the profile:

* **workflow name / disambiguation** → ``global`` aliases: alias fact sentences in any
  message and alias statements of the user (:mod:`.aliases`), and answered "which
  workflow?" questions (:mod:`.choices`);
* **field name, browse-button value, option value** → ``workflow``: definitions the
  user states (:mod:`.definitions`) and answered "which value of field X?" questions
  (:mod:`.choices`);
* **preferences** → ``user``: page size, reply style, "from now on …" habits
  (:mod:`.preferences`).

When no rule can structure a clarification of a field, option or browse button, the
user's sentence is kept verbatim. One-off values typed into a form (text, dates,
amounts) and ordinary completed forms give nothing. Candidates are not yet routed:
:mod:`hy_memory_langgraph.workflow.routing` decides their final dimension.
"""

from __future__ import annotations

from typing import Any

from hy_memory_langgraph.workflow.lite.aliases import alias_statement, parse_alias_sentence
from hy_memory_langgraph.workflow.lite.choices import choice_candidates
from hy_memory_langgraph.workflow.lite.definitions import definition_candidate
from hy_memory_langgraph.workflow.lite.patterns import Sentence, is_question, split_sentences
from hy_memory_langgraph.workflow.lite.preferences import preference_candidates
from hy_memory_langgraph.workflow.validation import Message


def _overlaps(sentence: Sentence, spans: list[tuple[int, int]]) -> bool:
    return any(sentence.start < end and start < sentence.end for start, end in spans)


def _user_sentence(sentence: Sentence) -> list[dict[str, Any]]:
    """Candidates of one user sentence: an alias statement, else a definition, else preferences."""
    if not is_question(sentence.raw) and (alias := alias_statement(sentence.text)) is not None:
        return [alias]
    if (definition := definition_candidate(sentence)) is not None:
        return [definition]
    return preference_candidates(sentence.text)


def lite_candidates(messages: tuple[Message, ...] | list[Message]) -> list[dict[str, Any]]:
    """Candidates found by the rules, in message order (not yet routed nor deduplicated).

    Example:
        >>> found = lite_candidates([Message("user", "我说的报销就是国内差旅费用报销流程")])
        >>> found[0]["alias"], found[0]["workflow_name"]
        ('报销', '国内差旅费用报销流程')
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        facts = parse_alias_sentence(message.text)
        spans = [fact.pop("span") for fact in facts]
        out.extend(facts)
        if message.role != "user":
            continue
        for sentence in split_sentences(message.text):
            if not _overlaps(sentence, spans):
                out.extend(_user_sentence(sentence))
    has_alias = any(c.get("alias") for c in out)
    out.extend(choice_candidates(messages, workflow_choices=not has_alias))
    return out
