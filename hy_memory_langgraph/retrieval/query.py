"""Query-side helpers for chat search: query terms, feedback expansion, dates in a query.

Terms (over a :class:`~hy_memory_langgraph.retrieval.lexical.BM25Index`):

* :func:`drop_common_terms` drops query terms found in more than a share of the memories
  (names of the two speakers of a conversation, words every message shares).
* :func:`expand_with_feedback` adds the most telling terms of the first-pass top memories
  to the query (pseudo-relevance feedback, RM3 style).

Dates:

:func:`time_mentions` finds explicit calendar references in English queries:

* a day: ``7 July, 2023``, ``8th December 2023``, ``October 13, 2023``, ``2023-05-08``;
* a month of a year: ``July 2023``, ``in May, 2022``;
* a year: ``in 2022``, ``during 2023`` (only after such a preposition, so "2023" alone,
  or a count like "2023 people", is not a date);
* a month of any year: ``in June``, ``during August``, ``last May`` (the month name after a
  preposition or ``last``/``early``/``late``; so the modal "may" is never a month).

Each mention becomes a :class:`TimeSpan`; :func:`boost_by_time` then multiplies the fused
score of every candidate whose memory date falls in a span (widened by a tolerance) by
``1 + boost``. A soft boost, not a filter: a query's date often names when something was
said, but sometimes when it happened.

Example:
    >>> [s.label for s in time_mentions("What did Maria donate on 7 July, 2023?")]
    ['2023-07-07']
"""

from __future__ import annotations

import calendar
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hy_memory_langgraph.retrieval.lexical import BM25Index

__all__ = ["TimeSpan", "boost_by_time", "drop_common_terms", "expand_with_feedback", "hop_terms", "time_mentions"]


def drop_common_terms(terms: Mapping[str, float], index: BM25Index, max_df: float) -> Counter[str]:
    """The query terms found in at most ``max_df`` (a share) of the indexed memories.

    When every term is that common, the terms are kept as they are (so a query never
    becomes empty).

    Args:
        terms: ``{term: weight}`` of the query.
        index: The index whose document frequencies count.
        max_df: Share in (0, 1]; 1.0 keeps everything.
    """
    kept = Counter(dict(terms))
    n_docs = len(index)
    if max_df >= 1.0 or not n_docs:
        return kept
    rare = Counter({t: w for t, w in kept.items() if index.document_frequency(t) <= max_df * n_docs})
    return rare or kept


def expand_with_feedback(
    terms: Mapping[str, float],
    index: BM25Index,
    feedback: Mapping[str, float],
    *,
    n_terms: int,
    weight: float,
) -> Counter[str]:
    """Query terms plus the ``n_terms`` best terms of the feedback memories (RM3 style).

    A term's feedback value is ``sum over feedback memories of p(memory) * tf / length``
    (``p`` proportional to the first-pass score), times its idf so words common to the
    whole history do not dominate. Expansion terms (not already in the query) get
    ``weight * value / best value``; the query's own terms keep their weights.

    Args:
        terms: ``{term: weight}`` of the query.
        index: The index the memories are in.
        feedback: ``{memory_id: first-pass score}`` of the top memories (scores >= 0).
        n_terms: Expansion terms to add.
        weight: Weight of the best expansion term (an original term has weight 1 per occurrence).
    """
    out = Counter(dict(terms))
    total = math.fsum(max(s, 0.0) for s in feedback.values())
    if n_terms <= 0 or weight <= 0 or total <= 0 or not len(index):
        return out
    n_docs = len(index)
    value: dict[str, float] = {}
    for doc_id, score in feedback.items():
        counts = index.term_counts(doc_id)
        length = sum(counts.values())
        for term, tf in counts.items():
            if term not in out:
                value[term] = value.get(term, 0.0) + max(score, 0.0) / total * tf / length
    for term in value:
        df = index.document_frequency(term)
        value[term] *= math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
    best = sorted(value.items(), key=lambda kv: (-kv[1], kv[0]))[:n_terms]
    if best and best[0][1] > 0:
        top = best[0][1]
        out.update({term: weight * v / top for term, v in best if v > 0})
    return out


def hop_terms(
    terms: Mapping[str, float],
    index: BM25Index,
    seeds: Mapping[str, float],
    *,
    n_terms: int,
) -> Counter[str]:
    """The lexical second hop's query: the ``n_terms`` most telling terms of the seed
    memories that the query does not have (weights as :func:`expand_with_feedback` gives
    them, the best at 1.0).

    ``index`` needs ``len``, ``term_counts(doc_id)`` and ``document_frequency(term)``.
    """
    expanded = expand_with_feedback(terms, index, seeds, n_terms=n_terms, weight=1.0)
    return Counter({t: w for t, w in expanded.items() if t not in terms})

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = r"(?P<{g}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{g}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{g}>(?:19|20)\d\d)"
_SEP = r"\s*,?\s*"

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", re.compile(r"\b(?P<y>(?:19|20)\d\d)-(?P<m>[01]?\d)-(?P<d>[0-3]?\d)\b")),
    ("dmy", re.compile(r"\b" + _DAY.format(g="d") + r"\s+(?:of\s+)?" + _MONTH.format(g="m") + _SEP
                       + _YEAR.format(g="y") + r"\b", re.I)),
    ("mdy", re.compile(r"\b" + _MONTH.format(g="m") + r"\s+" + _DAY.format(g="d") + _SEP
                       + _YEAR.format(g="y") + r"\b", re.I)),
    ("my", re.compile(r"\b" + _MONTH.format(g="m") + _SEP + _YEAR.format(g="y") + r"\b", re.I)),
    ("y", re.compile(r"\b(?:in|during|of|since|throughout)\s+(?:early\s+|late\s+|mid-?\s*)?"
                     + _YEAR.format(g="y") + r"\b", re.I)),
    ("m", re.compile(r"\b(?:in|during|of|last|early|late|mid-?|since|this|next)\s+"
                     + _MONTH.format(g="m") + r"\b", re.I)),
)


@dataclass(frozen=True)
class TimeSpan:
    """Dates from ``start`` to ``end`` (inclusive); ``year`` is None for "a month of any year".

    Attributes:
        start: First day (for a month of any year, the year is a placeholder).
        end: Last day.
        any_year: True when only the month is known (``in June``).
    """

    start: date
    end: date
    any_year: bool = False

    @property
    def label(self) -> str:
        """A short readable form: ``2023-07-07``, ``2023-07``, ``2023``, ``*-06``."""
        if self.any_year:
            return f"*-{self.start.month:02d}"
        if self.start == self.end:
            return self.start.isoformat()
        if (self.start.month, self.start.day, self.end.month, self.end.day) == (1, 1, 12, 31) \
                and self.start.year == self.end.year:
            return str(self.start.year)
        if self.start.day == 1 and self.end == _month_end(self.start.year, self.start.month):
            return self.start.isoformat()[:7]
        return f"{self.start.isoformat()}..{self.end.isoformat()}"

    def contains(self, when: date, tolerance_days: int = 0) -> bool:
        """Whether ``when`` falls in the span widened by ``tolerance_days`` on each side."""
        pad = timedelta(days=tolerance_days)
        if not self.any_year:
            return self.start - pad <= when <= self.end + pad
        for year in (when.year - 1, when.year, when.year + 1):
            start = self.start.replace(year=year)
            end = _month_end(year, self.start.month)
            if start - pad <= when <= end + pad:
                return True
        return False


    def overlaps(self, other: TimeSpan, tolerance_days: int = 0) -> bool:
        """Whether ``other`` (a span with known years) meets this span widened by ``tolerance_days``."""
        pad = timedelta(days=tolerance_days)
        if not self.any_year:
            return self.start - pad <= other.end and other.start <= self.end + pad
        for year in range(other.start.year - 1, other.end.year + 2):
            start = self.start.replace(year=year)
            if start - pad <= other.end and other.start <= _month_end(year, self.start.month) + pad:
                return True
        return False


def _month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def _span(kind: str, match: re.Match[str]) -> TimeSpan | None:
    groups = match.groupdict()
    raw_month = groups.get("m") or ""
    month = int(raw_month) if raw_month.isdigit() else _MONTHS.get(raw_month.lower().rstrip("."))
    year = int(groups["y"]) if groups.get("y") else None
    try:
        if kind in ("iso", "dmy", "mdy"):
            day = date(year or 0, month or 0, int(groups["d"]))
            return TimeSpan(day, day)
        if kind == "my" and year and month:
            return TimeSpan(date(year, month, 1), _month_end(year, month))
        if kind == "y" and year:
            return TimeSpan(date(year, 1, 1), date(year, 12, 31))
        if kind == "m" and month:
            return TimeSpan(date(2000, month, 1), _month_end(2000, month), any_year=True)
    except ValueError:  # 31 February and the like
        return None
    return None


def time_mentions(query: str) -> list[TimeSpan]:
    """Explicit dates, months and years named in ``query`` (see the module doc).

    A more specific mention hides the less specific ones inside it (``7 July, 2023`` is
    not also read as ``July 2023`` or ``2023``).

    Example:
        >>> [s.label for s in time_mentions("Where did Joanna travel to in July 2022 and in May?")]
        ['2022-07', '*-05']
    """
    taken: list[tuple[int, int]] = []
    spans: list[TimeSpan] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(query):
            lo, hi = match.span()
            if any(lo < t_hi and t_lo < hi for t_lo, t_hi in taken):
                continue
            span = _span(kind, match)
            if span is not None:
                taken.append((lo, hi))
                spans.append(span)
    return spans


def boost_by_time(
    ranked: Sequence[tuple[str, float]],
    dates: Mapping[str, datetime | date | None],
    spans: Sequence[TimeSpan],
    *,
    boost: float,
    tolerance_days: int = 0,
    events: Mapping[str, Sequence[TimeSpan]] | None = None,
) -> list[tuple[str, float]]:
    """Re-rank: candidates dated within any span gain ``boost`` times the score range.

    The gain is ``boost * (best score - worst score)`` over ``ranked``, so it works the same
    on any fusion scale (reciprocal ranks, z-scores that can be negative, ...): with
    ``boost`` 1.0 the worst dated candidate ties with the best undated one.

    Args:
        ranked: ``(doc_id, score)``, best first.
        dates: Memory date of each candidate (missing or None: never boosted).
        spans: From :func:`time_mentions`; no spans (or ``boost == 0``) returns the input.
        boost: Share of the score range added, >= 0.
        tolerance_days: Widen each span by this many days on both sides.
        events: Optional event spans of candidates (what their text says happened when,
            e.g. from :func:`~hy_memory_langgraph.retrieval.relative_time.relative_spans`);
            a candidate whose event span meets a named span is boosted as if dated there.

    Returns:
        ``(doc_id, score)`` best first (ties by id).

    Example:
        >>> spans = time_mentions("in May 2023")
        >>> boost_by_time([("a", 1.0), ("b", 0.5), ("c", 0.0)], {"b": date(2023, 5, 2)}, spans, boost=1.0)
        [('b', 1.5), ('a', 1.0), ('c', 0.0)]
    """
    if boost < 0:
        raise ValueError("boost must be >= 0")
    if not spans or boost == 0 or not ranked:
        return list(ranked)
    scores = [score for _, score in ranked]
    gain = boost * (max(scores) - min(scores))
    out = []
    for doc_id, score in ranked:
        when = dates.get(doc_id)
        if isinstance(when, datetime):
            when = when.date()
        hit = when is not None and any(s.contains(when, tolerance_days) for s in spans)
        if not hit and events:
            hit = any(s.overlaps(e, tolerance_days) for e in events.get(doc_id, ()) for s in spans)
        out.append((doc_id, score + gain if hit else score))
    return sorted(out, key=lambda kv: (-kv[1], kv[0]))
