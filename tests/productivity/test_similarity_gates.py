"""Similarity gates per embedding model: calibrated so unrelated scores about 0 with any model.

Paraphrase pairs must pass the strictest gate (the experience-candidate floor, 0.5) and
unrelated pairs fail the loosest (the fact gate, 0.30), in English and in Chinese. None of
these pairs is in the reference sample the anchors are measured on.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hy_memory_langgraph.flows.productivity.experiences import CANDIDATE_MIN_SCORE
from hy_memory_langgraph.flows.productivity.retrieval import EXPERIENCE_GATE, FACT_GATE
from hy_memory_langgraph.models import calibration as calibration_module
from hy_memory_langgraph.models.calibration import (
    KERNEL_TOLERANCE,
    Calibration,
    CalibrationCache,
    LanguageScale,
    bundled,
    cache_key,
    calibrate,
)
from hy_memory_langgraph.models.identity import model_identity
from hy_memory_langgraph.models.reference_sentences import REFERENCE_SENTENCES
from hy_memory_langgraph.testing import HashingEmbeddings

from .support import StageScript, experience, extraction, tool_trace

# Near-paraphrases (character n-gram hashing only sees shared characters) and unrelated pairs.
HASHING_PARAPHRASES = [
    ("reset the password of my email account", "how to reset my email account password"),
    ("the flight to Tokyo was delayed three hours", "our Tokyo flight was delayed by three hours"),
    ("fix the timeout in the search client", "fixing the search client timeout"),
    ("把周会改到下午三点", "周会改到下午三点开"),
    ("接口请求超时怎么处理", "接口超时了怎么处理"),
    ("取消明天的酒店预订", "帮我取消明天的酒店预订"),
]
HASHING_UNRELATED = [
    ("reset the password of my email account", "tomatoes on the balcony are finally red"),
    ("the flight to Tokyo was delayed three hours", "merge the pull request after review"),
    ("fix the timeout in the search client", "my sister plays cello in an orchestra"),
    ("把周会改到下午三点", "这本小说的结局很意外"),
    ("接口请求超时怎么处理", "周末我们去山里露营了"),
    ("取消明天的酒店预订", "冰箱里的牛奶过期了"),
]
# Real paraphrases (different words) for the real model.
E5_PARAPHRASES = [
    ("How can I reset my email password?", "What are the steps to change the password of my mail account?"),
    ("The flight to Tokyo was delayed by three hours.", "Our plane to Tokyo left three hours late."),
    ("Fix the timeout in the search client.", "Resolve the search client timing out."),
    ("Cancel my hotel booking for next weekend.", "I need to call off the hotel reservation I made for next weekend."),
    ("我想把周会改到下午。", "能不能把每周例会挪到下午开？"),
    ("这个接口超时了怎么办？", "接口请求超时应该怎么处理？"),
    ("帮我取消明天的酒店预订。", "明天订的酒店不要了，请帮我退掉。"),
    ("我的猫不爱吃干粮。", "家里的猫咪不喜欢吃猫粮。"),
]
E5_UNRELATED = [
    ("How can I reset my email password?", "The tomatoes on the balcony are finally red."),
    ("The flight to Tokyo was delayed by three hours.", "Please merge the pull request after the review."),
    ("Fix the timeout in the search client.", "My sister plays the cello in an orchestra."),
    ("Cancel my hotel booking for next weekend.", "The vet said the puppy needs more exercise."),
    ("我想把周会改到下午。", "这本小说的结局太让人意外了。"),
    ("这个接口超时了怎么办？", "周末我们去山里露营了。"),
    ("帮我取消明天的酒店预订。", "冰箱里的牛奶已经过期了。"),
    ("我的猫不爱吃干粮。", "季度报表需要财务总监签字。"),
]


def _calibrated(emb, calibration: Calibration, pairs) -> list[float]:
    out = []
    for query, document in pairs:
        cosine = float(np.dot(emb.embed_query(query), emb.embed_documents([document])[0]))
        out.append(calibration.for_text(query).similarity(cosine))
    return out


def test_test_pairs_are_not_reference_sentences() -> None:
    reference = {s for group in REFERENCE_SENTENCES.values() for s in group}
    for pairs in (HASHING_PARAPHRASES, HASHING_UNRELATED, E5_PARAPHRASES, E5_UNRELATED):
        assert not {s for pair in pairs for s in pair} & reference


def test_hashing_paraphrases_pass_and_unrelated_pairs_fail_every_gate() -> None:
    emb = HashingEmbeddings(dims=64)
    calibration = calibrate(emb)
    assert all(s >= CANDIDATE_MIN_SCORE for s in _calibrated(emb, calibration, HASHING_PARAPHRASES))
    assert all(s < FACT_GATE for s in _calibrated(emb, calibration, HASHING_UNRELATED))
    raw = [float(np.dot(emb.embed_query(a), emb.embed_documents([b])[0])) for a, b in HASHING_UNRELATED]
    assert max(raw) > EXPERIENCE_GATE  # the raw cosine gates let unrelated English through


def test_anchors_per_language() -> None:
    calibration = calibrate(HashingEmbeddings(dims=64))
    en, zh = calibration.scale("en"), calibration.scale("zh")
    assert en.floor > zh.floor  # shared Latin letters make unrelated English look alike
    assert en.similarity(en.floor) == pytest.approx(0.0)
    assert en.similarity(en.ceiling) == pytest.approx(1.0)
    assert en.cosine(en.similarity(0.8)) == pytest.approx(0.8)
    assert calibration.for_text("我想把周会改到下午") == zh
    assert calibration.scale("fr") == en
    assert en.pairs == len(REFERENCE_SENTENCES["en"]) * (len(REFERENCE_SENTENCES["en"]) - 1)


def test_a_squeezed_model_is_mapped_with_a_ceiling_of_one() -> None:
    flat = LanguageScale(floor=0.9, ceiling=0.905, spread=0.001, pairs=2)
    assert flat.similarity(0.9) == 0.0 and flat.similarity(1.0) == pytest.approx(1.0)


class Counting(HashingEmbeddings):
    def __init__(self, dims: int = 64) -> None:
        super().__init__(dims=dims)
        self.calls = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        return super().embed_documents(texts)


@pytest.fixture(autouse=True)
def _fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no calibration known to the process."""
    monkeypatch.setattr(calibration_module, "_PROCESS", {})


def test_calibration_is_measured_once_and_kept_in_the_data_dir(tmp_path: Path) -> None:
    path = tmp_path / "data" / "embedding_calibration.json"
    model = Counting()
    first = CalibrationCache(path).get(model)
    assert model.calls == 1 and path.is_file()
    again = CalibrationCache(path).get(model)  # another process, same data dir
    assert model.calls == 1 and again == first
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert [k.split("|")[0] for k in stored] == [model_identity(model)]
    other = Counting(dims=32)
    CalibrationCache(path).get(other)  # another model: measured, kept beside the first
    assert other.calls == 1 and len(json.loads(path.read_text(encoding="utf-8"))) == 2


def test_an_unreadable_calibration_file_is_measured_again(tmp_path: Path) -> None:
    path = tmp_path / "embedding_calibration.json"
    path.write_text("{not json", encoding="utf-8")
    model = Counting()
    assert CalibrationCache(path).get(model).model == model_identity(model)
    assert model.calls == 1 and json.loads(path.read_text(encoding="utf-8"))


def test_a_calibration_measured_in_the_process_serves_another_data_dir(tmp_path: Path) -> None:
    model = Counting()
    first = CalibrationCache(tmp_path / "a" / "calibration.json").get(model)
    second_path = tmp_path / "b" / "calibration.json"
    assert CalibrationCache(second_path).get(model) == first and model.calls == 1
    assert second_path.is_file()  # kept in the second data dir too, for other processes


def test_the_default_model_calibration_ships_with_the_package(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from hy_memory_langgraph.models import E5Embeddings

    def measuring(_emb: object) -> None:
        raise AssertionError("the bundled calibration should have been used")

    monkeypatch.setattr(calibration_module, "calibrate", measuring)
    emb = E5Embeddings()  # the model itself loads on first use only: not here
    found = CalibrationCache(tmp_path / "calibration.json").get(emb)
    assert found == bundled()[cache_key(emb)] and found.model == model_identity(emb)
    assert 0.6 < found.scale("en").floor < found.scale("en").ceiling < 1.0


class QueryCounting(HashingEmbeddings):
    """Hashing vectors; ``prefix`` is put before every query, as e5 does."""

    def __init__(self, prefix: str = "") -> None:
        super().__init__(dims=64)
        self.prefix = prefix
        self.queries = 0

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return super().embed_query(self.prefix + text)


def test_a_model_embedding_queries_as_documents_is_calibrated_in_two_calls() -> None:
    symmetric = QueryCounting()
    found = calibrate(symmetric)
    assert symmetric.queries == 1  # then the document vectors serve as the queries
    assert found.scale("en").ceiling == pytest.approx(1.0)
    asymmetric = QueryCounting(prefix="query: ")
    measured = calibrate(asymmetric)
    sentences = sum(len(group) for group in REFERENCE_SENTENCES.values())
    assert asymmetric.queries == sentences and measured.scale("en").ceiling < 0.999


def test_identity_names_the_settings_that_change_vectors() -> None:
    assert model_identity(HashingEmbeddings(dims=64)) != model_identity(HashingEmbeddings(dims=32))
    assert model_identity(HashingEmbeddings(dims=64)) == model_identity(HashingEmbeddings(dims=64))


def test_fact_gate_keeps_related_facts_and_drops_unrelated_ones(make_client) -> None:
    script = StageScript({"working_extract": [
        extraction("mail account", "reset the password of my email account"),
        extraction("trip", "the flight to Tokyo was delayed three hours"),
    ]})
    client = make_client("pro", script.model())
    client.add(tool_trace("reset my mail password"), scene="working", user_id="u1")
    client.add(tool_trace("check the Tokyo flight"), scene="working", user_id="u1")
    found = client.search("how to reset my email account password", scene="working", user_ids=["u1"])
    assert [f["subject"] for f in found["facts"]] == ["mail account"]
    hit = found["facts"][0]
    assert hit["calibrated_similarity"] >= FACT_GATE and hit["similarity"] > hit["calibrated_similarity"]
    assert client.search("tomatoes on the balcony are finally red", scene="working",
                         user_ids=["u1"])["facts"] == []
    everything = client.search("tomatoes on the balcony are finally red", scene="working",
                               user_ids=["u1"], min_score=-10.0)
    assert len(everything["facts"]) == 2  # min_score replaces the gate, on the same scale


def test_experience_reconcile_is_called_only_for_related_drafts(make_client) -> None:
    script = StageScript({
        "working_extract": [
            extraction("mail", "reset", [experience("reset the password of my email account")]),
            extraction("garden", "noted", [experience("tomatoes on the balcony are finally red")]),
            extraction("mail", "reset again", [experience("how to reset my email account password")]),
        ],
        "experience_reconcile": {"operations": [{"draft": "d0", "op": "ADD"}]},
    })
    client = make_client("pro", script.model())
    client.add(tool_trace("reset my mail password"), scene="working", user_id="u1")
    client.add(tool_trace("note about the garden"), scene="working", user_id="u1")
    assert script.count("experience_reconcile") == 0  # unrelated: no candidate, no call
    client.add(tool_trace("reset my mail password again"), scene="working", user_id="u1")
    assert script.count("experience_reconcile") == 1
    assert "reset the password of my email account" in script.last("experience_reconcile").user
    assert "tomatoes" not in script.last("experience_reconcile").user


@pytest.mark.real_model
def test_the_bundled_calibration_is_what_the_installed_model_measures() -> None:
    """Within what CPU kernels legitimately differ by (``bench/e5_kernels.py``), and with
    the same gate decisions at every cosine of the measured range."""
    from hy_memory_langgraph.models import E5Embeddings

    emb = E5Embeddings()
    measured = calibrate(emb)
    shipped = bundled().get(cache_key(emb))
    assert shipped is not None, "regenerate: python -m hy_memory_langgraph.models.bundle"
    for language, scale in measured.languages.items():
        assert shipped.scale(language).floor == pytest.approx(scale.floor, abs=KERNEL_TOLERANCE)
        assert shipped.scale(language).ceiling == pytest.approx(scale.ceiling, abs=KERNEL_TOLERANCE)
        cosines = np.linspace(scale.floor, scale.ceiling, 201)
        drift = max(abs(shipped.similarity(float(c), language) - scale.similarity(float(c)))
                    for c in cosines)
        assert drift < 0.01, (language, drift)


def test_the_kernel_tolerance_is_far_inside_the_gates() -> None:
    """A floor and ceiling each off by the tolerance move no calibrated similarity of the
    range by more than a tenth of the gap between the gates."""
    shipped = next(iter(bundled().values()))
    for language in ("en", "zh"):
        scale = shipped.scale(language)
        moved = LanguageScale(scale.floor + KERNEL_TOLERANCE, scale.ceiling - KERNEL_TOLERANCE,
                              scale.spread, scale.pairs)
        worst = max(abs(moved.similarity(c) - scale.similarity(c))
                    for c in (scale.floor, scale.ceiling))
        assert worst < (EXPERIENCE_GATE - FACT_GATE) / 10, (language, worst)


@pytest.mark.real_model
def test_e5_paraphrases_pass_and_unrelated_pairs_fail_the_gates(tmp_path: Path) -> None:
    from hy_memory_langgraph.models import E5Embeddings

    emb = E5Embeddings()
    calibration = CalibrationCache(tmp_path / "calibration.json").get(emb)
    assert 0.6 < calibration.scale("en").floor < calibration.scale("en").ceiling
    assert all(s >= CANDIDATE_MIN_SCORE for s in _calibrated(emb, calibration, E5_PARAPHRASES))
    assert all(s < FACT_GATE for s in _calibrated(emb, calibration, E5_UNRELATED))
