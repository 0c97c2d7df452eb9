"""Generic reader for LoCoMo-format conversation files (no benchmark logic).

Data: LoCoMo, Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents"
(2024), https://github.com/snap-research/LoCoMo, licensed CC BY-NC 4.0 (non-commercial use,
attribution required). The data is read from where it lives (e.g.
``bench.common.paths.LOCOMO_PATH``) and never copied into this repository.

Format: a JSON list of samples ``{"sample_id", "conversation": {"speaker_a", "speaker_b",
"session_N": [turns], "session_N_date_time": "1:56 pm on 8 May, 2023", ...}, "qa": [...]}``.
Turns carry ``dia_id``, ``speaker``, ``text`` and optionally ``blip_caption`` (a caption of a
shared image). QA items carry ``question``, ``answer`` (missing for the adversarial category 5,
which has ``adversarial_answer``), ``category`` and ``evidence`` (supporting ``dia_id``s, which
are normalised here: ``"D8:6; D9:17"`` -> two ids, ``D:11:26`` -> ``D11:26``, ``D30:05`` ->
``D30:5``; unusable ids are dropped).

Example:
    >>> convs = load_locomo("../shared/data/locomo/locomo_dev5.json")  # doctest: +SKIP
    >>> sum(1 for _ in iter_questions(convs))  # doctest: +SKIP
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = [
    "QA",
    "Conversation",
    "Turn",
    "iter_questions",
    "load_locomo",
    "locomo_doc_text",
    "normalize_evidence",
    "parse_session_date",
]

_SESSION_KEY = re.compile(r"session_(\d+)")
_EVIDENCE_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.I)
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y")


@dataclass(frozen=True)
class Turn:
    """One utterance. ``session`` is the session number (1-based)."""

    dia_id: str
    speaker: str
    text: str
    session: int
    session_date: datetime | None
    img_caption: str | None = None

    def message(self, *, captions: bool = True) -> str:
        """The one text a benchmark writes for this turn: ``"{speaker}: {text}"``, plus
        ``" [shared an image: {caption}]"`` when it has a caption and ``captions`` is on."""
        return locomo_doc_text(self.speaker, self.text, self.img_caption if captions else None)


def locomo_doc_text(speaker: str, text: str, caption: str | None) -> str:
    """The message the LoCoMo benchmark writes for one turn (see :meth:`Turn.message`)."""
    out = f"{speaker}: {text}"
    if caption:
        out += f" [shared an image: {caption}]"
    return out


@dataclass(frozen=True)
class QA:
    """One question with its gold answer and normalised evidence ``dia_id``s.

    ``answer`` is ``""`` when the item has none (category 5); ``adversarial_answer`` keeps the
    distractor given for that category.
    """

    question: str
    answer: str
    category: int
    evidence: list[str] = field(default_factory=list)
    adversarial_answer: str | None = None


@dataclass(frozen=True)
class Conversation:
    """One two-person conversation: turns in session order, then QA items."""

    sample_id: str
    speaker_a: str
    speaker_b: str
    turns: list[Turn]
    qa: list[QA]


def parse_session_date(value: Any) -> datetime | None:
    """Parse ``"1:56 pm on 8 May, 2023"``; ``None`` when missing or in another format."""
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def normalize_evidence(raw: Any) -> list[str]:
    """Normalise evidence ids: split lists joined by ``;``/``,``, fix ``D:11:26``, ``D30:05``.

    Example:
        >>> normalize_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D"])
        ['D8:6', 'D9:17', 'D11:26', 'D30:5']
    """
    items = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            continue
        for match in _EVIDENCE_ID.finditer(item):
            dia_id = f"D{int(match.group(1))}:{int(match.group(2))}"
            if dia_id not in out:
                out.append(dia_id)
    return out


def _answer(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _turns(conversation: dict[str, Any]) -> list[Turn]:
    sessions = sorted(
        (int(m.group(1)), key)
        for key in conversation
        if (m := _SESSION_KEY.fullmatch(key)) and isinstance(conversation[key], list)
    )
    turns: list[Turn] = []
    for number, key in sessions:
        date = parse_session_date(conversation.get(f"{key}_date_time"))
        for raw in conversation[key]:
            if not isinstance(raw, dict):
                continue
            ids = normalize_evidence(raw.get("dia_id"))
            caption = raw.get("blip_caption")
            turns.append(
                Turn(
                    dia_id=ids[0] if ids else str(raw.get("dia_id", "")),
                    speaker=str(raw.get("speaker", "")),
                    text=str(raw.get("text", "")),
                    session=number,
                    session_date=date,
                    img_caption=caption if isinstance(caption, str) and caption.strip() else None,
                )
            )
    return turns


def _qa(items: Iterable[Any]) -> list[QA]:
    out: list[QA] = []
    for item in items:
        if not isinstance(item, dict) or "question" not in item:
            continue
        try:
            category = int(item.get("category", 0))
        except (TypeError, ValueError):
            category = 0
        adversarial = item.get("adversarial_answer")
        out.append(
            QA(
                question=str(item["question"]),
                answer=_answer(item.get("answer")),
                category=category,
                evidence=normalize_evidence(item.get("evidence", [])),
                adversarial_answer=None if adversarial is None else _answer(adversarial),
            )
        )
    return out


def load_locomo(path: str | Path) -> list[Conversation]:
    """Load every conversation of a LoCoMo-format JSON file (a list, or one sample object)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    samples = data if isinstance(data, list) else [data]
    convs: list[Conversation] = []
    for index, sample in enumerate(samples):
        conversation = sample.get("conversation", {})
        convs.append(
            Conversation(
                sample_id=str(sample.get("sample_id", f"sample-{index}")),
                speaker_a=str(conversation.get("speaker_a", "")),
                speaker_b=str(conversation.get("speaker_b", "")),
                turns=_turns(conversation),
                qa=_qa(sample.get("qa", [])),
            )
        )
    return convs


def iter_questions(
    convs: Iterable[Conversation], categories: Iterable[int] = (1, 2, 3, 4)
) -> Iterator[tuple[Conversation, QA]]:
    """Yield ``(conversation, qa)`` for every QA item whose category is in ``categories``."""
    wanted = set(categories)
    for conv in convs:
        for qa in conv.qa:
            if qa.category in wanted:
                yield conv, qa
