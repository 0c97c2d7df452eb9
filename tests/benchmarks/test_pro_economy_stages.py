"""The side-by-side economy benchmark recognises every stage of our own prompts.

A stage it cannot place is answered ``{}`` and counted as ``unknown``; after a prompt
rewrite that would silently stop the reconcile stages from being reached.
"""

from __future__ import annotations

import json

import pytest

from bench.pro_economy import _answer, _stage
from hy_memory_langgraph.prompts import load_prompt

STAGES = {
    "chat_extract": "ours.chat_extract",
    "chat_reconcile": "ours.chat_reconcile",
    "productivity_extract_working": "ours.working_extract",
    "experience_reconcile": "ours.experience_reconcile",
    "fact_reconcile": "ours.fact_reconcile",
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("name", "stage"), sorted(STAGES.items()))
def test_each_prompt_is_placed_and_answered_in_its_schema(name: str, stage: str, lang: str) -> None:
    template = load_prompt(name, lang)  # type: ignore[arg-type]
    system, user = template.render(**{v: "n0: [subject=user] x" for v in template.variables})
    assert _stage(system, system + "\n" + user) == stage
    answer = json.loads(_answer(stage, {"facts": ["The user likes tea."], "task": "book a flight"}, user))
    assert answer and isinstance(answer, dict)
