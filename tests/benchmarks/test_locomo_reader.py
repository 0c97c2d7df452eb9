"""bench/common/locomo.py: the generic LoCoMo-format reader (on a tiny synthetic file)."""

from __future__ import annotations

import importlib
import json
from datetime import datetime
from pathlib import Path
from types import ModuleType

import pytest


@pytest.fixture(scope="module")
def locomo() -> ModuleType:
    return importlib.import_module("bench.common.locomo")


def _sample(sample_id: str) -> dict:
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            # sessions deliberately out of order, with a date-only session 3 (no turns)
            "session_2_date_time": "10:04 am on 19 June, 2023",
            "session_2": [
                {"speaker": "Bo", "dia_id": "D2:1", "text": "Look at my dog!",
                 "img_url": ["http://x"], "blip_caption": "a photo of a dog", "query": "dog"},
                {"speaker": "Ann", "dia_id": "D2:2", "text": "Cute!", "blip_caption": " "},
            ],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bo"},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "Hey Ann"},
            ],
            "session_10_date_time": "not a date",
            "session_10": [{"speaker": "Ann", "dia_id": "D10:1", "text": "Later"}],
            "session_3_date_time": "9:00 am on 1 July, 2023",
        },
        "qa": [
            {"question": "Who has a dog?", "answer": "Bo", "evidence": ["D2:1"], "category": 4},
            {"question": "When?", "answer": 2023, "evidence": ["D1:1; D2:2"], "category": 2},
            {"question": "Messy?", "answer": "x", "evidence": ["D:10:1", "D2:01", " D1:2 ", "D"],
             "category": 1},
            {"question": "Trap?", "adversarial_answer": "no", "evidence": [], "category": 5},
        ],
        "event_summary": {},
    }  # fmt: skip


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo_tiny.json"
    path.write_text(json.dumps([_sample("conv-a"), _sample("conv-b")]), encoding="utf-8")
    return path


def test_turns_in_session_order_dates_captions(locomo: ModuleType, data_file: Path) -> None:
    convs = locomo.load_locomo(data_file)
    assert [c.sample_id for c in convs] == ["conv-a", "conv-b"]
    conv = convs[0]
    assert (conv.speaker_a, conv.speaker_b) == ("Ann", "Bo")
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D2:1", "D2:2", "D10:1"]
    assert [t.session for t in conv.turns] == [1, 1, 2, 2, 10]
    first, dog, cute, late = conv.turns[0], conv.turns[2], conv.turns[3], conv.turns[4]
    assert first.session_date == datetime(2023, 5, 8, 13, 56)
    assert dog.session_date == datetime(2023, 6, 19, 10, 4)
    assert late.session_date is None
    assert (dog.speaker, dog.text) == ("Bo", "Look at my dog!")
    assert dog.img_caption == "a photo of a dog"
    assert cute.img_caption is None and first.img_caption is None


def test_qa_and_evidence_normalisation(locomo: ModuleType, data_file: Path) -> None:
    qa = locomo.load_locomo(data_file)[0].qa
    assert [q.category for q in qa] == [4, 2, 1, 5]
    assert qa[0].evidence == ["D2:1"]
    assert qa[1].evidence == ["D1:1", "D2:2"] and qa[1].answer == "2023"
    assert qa[2].evidence == ["D10:1", "D2:1", "D1:2"]
    assert qa[3].answer == "" and qa[3].adversarial_answer == "no" and qa[3].evidence == []


def test_normalize_evidence(locomo: ModuleType) -> None:
    assert locomo.normalize_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D"]) == [
        "D8:6", "D9:17", "D11:26", "D30:5",
    ]  # fmt: skip
    assert locomo.normalize_evidence("D1:3") == ["D1:3"]
    assert locomo.normalize_evidence(["D1:3", "D1:03"]) == ["D1:3"]
    assert locomo.normalize_evidence(None) == []


def test_parse_session_date(locomo: ModuleType) -> None:
    midnight = datetime(2023, 9, 13, 0, 9)
    assert locomo.parse_session_date("12:09 am on 13 September, 2023") == midnight
    assert locomo.parse_session_date("7:00  pm on 1 Jan, 2022") == datetime(2022, 1, 1, 19, 0)
    assert locomo.parse_session_date("yesterday") is None
    assert locomo.parse_session_date(None) is None


def test_iter_questions_filters_categories(locomo: ModuleType, data_file: Path) -> None:
    convs = locomo.load_locomo(data_file)
    pairs = list(locomo.iter_questions(convs))
    assert len(pairs) == 6 and {q.category for _, q in pairs} == {1, 2, 4}
    assert [c.sample_id for c, _ in pairs][:3] == ["conv-a"] * 3
    assert len(list(locomo.iter_questions(convs, categories=(5,)))) == 2


def test_single_sample_object_file(locomo: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps(_sample("solo")), encoding="utf-8")
    (conv,) = locomo.load_locomo(path)
    assert conv.sample_id == "solo" and len(conv.turns) == 5
