"""Dates in a chat-search query, and the time boost they give.

:func:`time_mentions` finds explicit calendar references in English queries:

* a day: ``7 July, 2023``, ``8th December 2023``, ``October 13, 2023``, ``2023-05-08``;
* a month of a year: ``July 2023``, ``in May, 2022``;
* a year: ``in 2022``, ``during 2023`` (only after such a preposition, so "2023" alone,
  or a count like "2023 people", is not a date);
* a month of any year: ``in June``, ``during August``, ``last May`` (the month name after a
  preposition or ``last``/``early``/``late``; so the modal "may" is never a month).

Each mention becomes a :class:`TimeSpan`; :func:`boost_by_time` then raises the fused
score of every candidate whose memory date falls in a span by ``boost`` times the score
range. A soft boost, not a filter: a query's date often names when something was
said, but sometimes when it happened.

Example:
    >>> [s.label for s in time_mentions("What did Maria donate on 7 July, 2023?")]
    ['2023-07-07']
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime


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

    def contains(self, when: date) -> bool:
        """Whether ``when`` falls in the span (for a month of any year: in ``when``'s year)."""
        if not self.any_year:
            return self.start <= when <= self.end
        return self.start.replace(year=when.year) <= when <= _month_end(when.year, self.start.month)

    def overlaps(self, other: TimeSpan) -> bool:
        """Whether ``other`` (a span with known years) meets this span."""
        if not self.any_year:
            return self.start <= other.end and other.start <= self.end
        for year in range(other.start.year, other.end.year + 1):
            if self.start.replace(year=year) <= other.end and other.start <= _month_end(year, self.start.month):
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
        hit = when is not None and any(s.contains(when) for s in spans)
        if not hit and events:
            hit = any(s.overlaps(e) for e in events.get(doc_id, ()) for s in spans)
        out.append((doc_id, score + gain if hit else score))
    return sorted(out, key=lambda kv: (-kv[1], kv[0]))
