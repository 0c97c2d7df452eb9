"""bench/locomo_qa.py end to end against the loopback OpenAI-compatible stub, on one
small LoCoMo-format conversation: ingest, search, answer, judge, table, resume (plumbing,
not quality: the stub answers from a key)."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

CONVERSATION = {
    "sample_id": "conv-t",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a grey cat, her name is Miso."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Miso is a lovely name!"},
            {"speaker": "Bo", "dia_id": "D1:3", "text": "I just came back from Porto with my dog Rex."},
        ],
        "session_2_date_time": "10:04 am on 19 June, 2023",
        "session_2": [
            {"speaker": "Ann", "dia_id": "D2:1", "text": "I started cello lessons last week."},
            {"speaker": "Bo", "dia_id": "D2:2", "text": "Rex hates the sound of the cello, ha."},
        ],
    },
    "qa": [
        {"question": "What is the name of Ann's cat?", "answer": "Miso", "evidence": ["D1:1"], "category": 4},
        {"question": "When did Bo come back from Porto?", "answer": "May 2023", "evidence": ["D1:3"], "category": 2},
        {"question": "Which pets do Ann and Bo have?", "answer": "a cat and a dog", "evidence": ["D1:1", "D1:3"],
         "category": 1},
        {"question": "Would Ann enjoy a concert of cello music?", "answer": "Yes", "evidence": ["D2:1"],
         "category": 3},
        {"question": "What is Bo's cat called?", "adversarial_answer": "Miso", "evidence": ["D1:1"], "category": 5},
    ],
}
#: What the stub's answer model says per question: right for three, no answer for one.
ANSWERS = {"What is the name of Ann's cat?": "Miso", "When did Bo come back from Porto?": "in May 2023",
           "Which pets do Ann and Bo have?": "A cat and a dog", "Would Ann enjoy a concert of cello music?":
           "I don't know"}


@pytest.fixture(scope="module")
def locomo_qa() -> ModuleType:
    return importlib.import_module("bench.locomo_qa")


def _section(text: str, tag: str) -> list[str]:
    """The lines of a prompt section ``<tag ...>`` .. ``</tag ...>``, each a JSON value
    (its one string when it is an object of one, e.g. ``{"user": "..."}``) or text."""
    match = re.search(rf"<{tag}[^>]*>\n(.*?)\n?</{tag}[^>]*>", text, re.S)
    lines = []
    for line in (match.group(1) if match else "").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            value = line
        if isinstance(value, dict) and len(value) == 1:
            value = next(iter(value.values()))
        if str(value).strip():
            lines.append(str(value))
    return lines


def _respond(request: dict[str, Any]) -> str:
    """Pro extraction and reconciliation (one fact per new message, each added), the
    answer model (from :data:`ANSWERS`) and the judge (does the answer hold the gold?)."""
    system, user = str(request["messages"][0]["content"]), str(request["messages"][-1]["content"])
    if '"operations"' in system:
        ids = list(dict.fromkeys(re.findall(r"\b(n\d+)\b", "\n".join(_section(user, "new_facts")))))
        return json.dumps({"operations": [{"fact": i, "op": "ADD", "target": None} for i in ids]})
    if '"facts"' in system:
        lines = [line.split(": ", 1)[-1] for line in _section(user, "new_messages")]
        return json.dumps({"facts": [{"content": line, "subject": "user", "owner": "user"} for line in lines]})
    if user.startswith("Notes:"):
        return ANSWERS[user.rsplit("Question: ", 1)[1].split("\n", 1)[0]]
    if "Reference answer:" in user:
        gold = user.split("Reference answer: ", 1)[1].split("\n", 1)[0]
        graded = user.split("Answer to grade: ", 1)[1]
        label = "CORRECT" if gold.lower() in graded.lower() else "WRONG"
        return json.dumps({"reason": "compared with the reference", "label": label})
    return "{}"


@pytest.mark.parametrize("mode", ["lite", "pro"])
def test_one_conversation_end_to_end(locomo_qa: ModuleType, openai_stub, tmp_path: Path, mode: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    openai_stub.responder = _respond
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([CONVERSATION]), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["--base-url", openai_stub.base_url, "--model", "stub-answer", "--judge-model", "stub-judge",
            "--api-key", "test", "--mode", mode, "--data", str(data), "--out", str(out),
            "--embeddings", "hashing", "--top-k", "5"]
    locomo_qa.main(argv)
    table = capsys.readouterr().out

    saved = json.loads((out / "conv-t.json").read_text(encoding="utf-8"))
    assert [q["label"] for q in saved["questions"]] == ["CORRECT", "CORRECT", "CORRECT", "WRONG"]
    assert [q["category"] for q in saved["questions"]] == [4, 2, 1, 3]  # category 5 is never asked
    assert saved["ingest"]["turns"] == 5 and len(saved["ingest"]["add_ms"]) == 3  # 2 + 1 turns, then 2
    assert all(q["memories"] >= 1 and q["answer_tokens"]["input"] > 0 and q["judge_tokens"]["output"] > 0
               for q in saved["questions"])
    bodies = {r.body["model"]: r for r in openai_stub.chat_requests}
    assert {"stub-answer", "stub-judge"} <= set(bodies) and all(r.body["temperature"] == 0 for r in bodies.values())
    asked = [r.prompt_text for r in openai_stub.chat_requests if r.body["model"] == "stub-answer"
             and "Notes:" in r.prompt_text]
    assert len(asked) == 4 and all("[2023-" in p for p in asked)  # memories shown with their dates
    assert not any("Bo's cat" in p for p in asked)
    extraction = [r for r in openai_stub.chat_requests if '"facts"' in str(r.body["messages"][0]["content"])]
    assert bool(extraction) == (mode == "pro")
    assert (saved["ingest"]["llm_tokens"] > 0) == (mode == "pro")

    assert "| single-hop | 1 | 1.000 |" in table and "| open-domain | 1 | 0.000 |" in table
    assert "| **overall** | 4 | **0.750** |" in table and "search p50" in table and "add p50" in table

    calls = len(openai_stub.chat_requests)
    locomo_qa.main(argv)  # resumed: the conversation is done, nothing is asked again
    assert len(openai_stub.chat_requests) == calls and capsys.readouterr().out == table

    with pytest.raises(SystemExit, match="top_k: 5 there, 3 now"):
        locomo_qa.main([*argv[:-1], "3"])


def test_an_ingest_cut_short_is_started_again(locomo_qa: ModuleType, openai_stub, tmp_path: Path) -> None:
    openai_stub.responder = _respond
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([CONVERSATION]), encoding="utf-8")
    out = tmp_path / "out"
    stale = out / "memory" / "conv-t"
    stale.mkdir(parents=True)
    (stale / "leftover").write_text("from a run that was killed", encoding="utf-8")
    locomo_qa.main(["--base-url", openai_stub.base_url, "--model", "m", "--api-key", "k", "--data", str(data),
                    "--out", str(out), "--embeddings", "hashing", "--questions", "1"])
    assert not (stale / "leftover").exists() and (stale / "ingest.json").exists()
    assert len(json.loads((out / "conv-t.json").read_text(encoding="utf-8"))["questions"]) == 1


def test_judge_labels_are_read_strictly(locomo_qa: ModuleType) -> None:
    assert locomo_qa.judge_label('{"reason": "x", "label": "wrong"}') == ("WRONG", True)
    assert locomo_qa.judge_label("CORRECT") == ("CORRECT", True)
    assert locomo_qa.judge_label("not CORRECT, rather WRONG") == ("WRONG", False)
    assert locomo_qa.render_memories([{"memory_at": "2023-05-08T13:56:00+00:00", "content": "Ann:  hi\n there"}]) \
        == "[2023-05-08] Ann: hi there"
