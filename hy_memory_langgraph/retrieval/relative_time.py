"""Relative time phrases ("two weeks ago", "last weekend", "上个月") resolved against a date.

:func:`relative_spans` finds phrases that name a time relative to when something was
said, in English and Chinese, and turns each into a
:class:`~hy_memory_langgraph.retrieval.query.TimeSpan` relative to a reference date:

* days: ``today``, ``this morning``, ``tonight``, ``yesterday``, ``last night``,
  ``the day before yesterday``, ``tomorrow``; ``今天``, ``今晚``, ``昨天``, ``前天``, ``明天`` …
* counts back: ``3 days ago``, ``two weeks ago``, ``a couple of months ago``, ``a year ago``;
  ``三天前``, ``两周前``, ``两个星期以前``, ``三个月前``, ``半年前``, ``两年前``;
* weeks and weekends (weeks run Monday to Sunday): ``last week``, ``this week``,
  ``next week``, ``last weekend``, ``this weekend``, ``over the weekend``; ``上周``,
  ``这周``, ``下周``, ``上上周``, ``上周末``, ``这周末``, ``下周末``;
* weekdays: ``last Friday``, ``this Friday``, ``next Friday``; ``上周五``, ``这周五``, ``下周五``;
* months and years: ``last month``, ``this month``, ``next month``, ``last year``,
  ``this year``, ``next year``, ``last May``; ``上个月``, ``这个月``, ``下个月``, ``去年``,
  ``今年``, ``明年``, ``前年``.

Spans are calendar units (a day, a Monday-Sunday week, a Saturday-Sunday weekend, a
month, a year); counts back become the day, the week around the day, the month or the
year that many units back. Vague phrases (``recently``, ``the other day``) are left out.

Used on both sides of chat search: a query's phrases against the time of the search,
and a memory's phrases against its ``memory_at`` (its *event spans*: "I went camping
two weeks ago" said on 2023-05-20 is about the week around 2023-05-06).

Example:
    >>> [s.label for s in relative_spans("I went camping two weeks ago", date(2023, 5, 20))]
    ['2023-05-03..2023-05-09']
    >>> [s.label for s in relative_spans("我上周末去爬山了", date(2023, 5, 17))]
    ['2023-05-13..2023-05-14']
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import date, timedelta
from functools import lru_cache

from hy_memory_langgraph.retrieval.query import TimeSpan

_EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2,
    "a few": 3, "few": 3,
}
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}
# English names spelled out: ``calendar.day_name`` / ``month_name`` follow the process locale.
_WEEKDAYS = {name: i for i, name in enumerate(
    ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))}
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august",
                "september", "october", "november", "december")
_MONTHS = {name: i for i, name in enumerate(_MONTH_NAMES, 1)}
_MONTHS.update({name[:3]: i for i, name in enumerate(_MONTH_NAMES, 1)})
_MONTHS["sept"] = 9

_EN_COUNT = r"(?P<n>\d{1,3}|" + "|".join(sorted(_EN_NUMBERS, key=len, reverse=True)) + r")"
_ZH_COUNT = r"(?P<n>\d{1,3}|[零一二两俩三四五六七八九十]{1,3}|半|几)"


def _day(d: date) -> TimeSpan:
    return TimeSpan(d, d)


def _week(d: date, offset: int = 0) -> TimeSpan:
    """The Monday-Sunday week of ``d``, moved by ``offset`` weeks."""
    monday = d - timedelta(days=d.weekday()) + timedelta(weeks=offset)
    return TimeSpan(monday, monday + timedelta(days=6))


def _weekend(d: date, offset: int = 0) -> TimeSpan:
    """Saturday and Sunday of the week of ``d``, moved by ``offset`` weeks."""
    week = _week(d, offset)
    return TimeSpan(week.start + timedelta(days=5), week.end)


def _month(d: date, offset: int = 0) -> TimeSpan:
    index = d.year * 12 + d.month - 1 + offset
    year, month = divmod(index, 12)
    month += 1
    return TimeSpan(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def _year(d: date, offset: int = 0) -> TimeSpan:
    return TimeSpan(date(d.year + offset, 1, 1), date(d.year + offset, 12, 31))


def _weekday(d: date, weekday: int, week_offset: int) -> TimeSpan:
    """Weekday ``weekday`` (0 = Monday) of the week ``week_offset`` weeks from ``d``'s."""
    return _day(_week(d, week_offset).start + timedelta(days=weekday))


def _recent_weekend(d: date) -> TimeSpan:
    """The weekend ``d`` is in, or else the last one before it."""
    return _weekend(d) if d.weekday() >= 5 else _weekend(d, -1)


def _units_ago(d: date, unit: str, n: int, vague: bool) -> TimeSpan:
    """``n`` days / weeks / months / years before ``d``; ``vague`` ("a few") widens it."""
    if unit == "day":
        if vague:
            return TimeSpan(d - timedelta(days=n + 3), d - timedelta(days=2))
        return _day(d - timedelta(days=n))
    if unit == "week":
        mid = d - timedelta(weeks=n)
        pad = 3 + (7 if vague else 0)
        return TimeSpan(mid - timedelta(days=pad), mid + timedelta(days=min(pad, 7 * n - 1)))
    if unit == "month":
        if vague:
            return TimeSpan(_month(d, -n - 2).start, _month(d, -2).end)
        return _month(d, -n)
    if vague:
        return TimeSpan(_year(d, -n - 2).start, _year(d, -2).end)
    return _year(d, -n)


def _last_month_named(d: date, month: int) -> TimeSpan:
    """The last ``month`` before the month of ``d`` ("last May" said in June 2023: May 2023)."""
    year = d.year if month < d.month else d.year - 1
    return _month(date(year, month, 1))


def zh_number(text: str) -> int | None:
    """``三`` → 3, ``十二`` → 12, ``二十`` → 20, ``12`` → 12 (None when not a number)."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        if "十" in ones or (tens and tens not in _ZH_DIGITS) or (ones and ones not in _ZH_DIGITS):
            return None
        return (_ZH_DIGITS[tens] if tens else 1) * 10 + (_ZH_DIGITS[ones] if ones else 0)
    if len(text) == 1 and text in _ZH_DIGITS:
        return _ZH_DIGITS[text]
    return None


_Resolver = Callable[[re.Match[str], date], TimeSpan | None]


def _fixed(fn: Callable[[date], TimeSpan]) -> _Resolver:
    return lambda _m, d: fn(d)


def _en_ago(m: re.Match[str], d: date) -> TimeSpan | None:
    raw = m["n"].lower()
    n = int(raw) if raw.isdigit() else _EN_NUMBERS[" ".join(raw.split())]
    if n <= 0:
        return None
    return _units_ago(d, m["unit"].lower(), n, vague=raw.endswith("few"))


def _zh_ago(m: re.Match[str], d: date) -> TimeSpan | None:
    raw, unit = m["n"], m["unit"]
    unit = {"天": "day", "周": "week", "星期": "week", "礼拜": "week", "月": "month", "年": "year"}[unit]
    if raw == "半":
        return {"month": _units_ago(d, "week", 2, False), "year": _month(d, -6)}.get(unit)
    vague = raw == "几"
    n = 3 if vague else zh_number(raw)
    if not n:
        return None
    return _units_ago(d, unit, n, vague)


def _en_weekday(m: re.Match[str], d: date) -> TimeSpan:
    weekday = _WEEKDAYS[m["wd"].lower()]
    which = m["which"].lower()
    if which == "last":  # the last such day before d
        back = (d.weekday() - weekday) % 7 or 7
        return _day(d - timedelta(days=back))
    ahead = (weekday - d.weekday()) % 7 or 7
    first = d + timedelta(days=ahead)
    if which == "next":  # the coming one, or the one a week later
        return TimeSpan(first, first + timedelta(days=7))
    if which == "coming":
        return _day(first)
    return _weekday(d, weekday, 0)  # this Friday: the Friday of this week


def _zh_weekday(m: re.Match[str], d: date) -> TimeSpan:
    offset = {"上上": -2, "上": -1, "这": 0, "本": 0, "这个": 0, "下": 1, "下个": 1, "上个": -1,
              "下下": 2}[m["which"]]
    return _weekday(d, _ZH_WEEKDAYS[m["wd"]], offset)


def _en_last_month_named(m: re.Match[str], d: date) -> TimeSpan:
    return _last_month_named(d, _MONTHS[m["month"].lower().rstrip(".")])


def _zh_year_month(m: re.Match[str], d: date) -> TimeSpan | None:
    offset = {"去": -1, "今": 0, "明": 1, "前": -2}[m["y"]]
    month = zh_number(m["month"])
    if month is None or not 1 <= month <= 12:
        return None
    return _month(date(d.year + offset, month, 1))


_W = r"(?:week|wk)"
_EN: tuple[tuple[re.Pattern[str], _Resolver], ...] = tuple((re.compile(p, re.I), fn) for p, fn in (
    (r"\b(?:the\s+)?day\s+before\s+yesterday\b", _fixed(lambda d: _day(d - timedelta(days=2)))),
    (r"\b(?:the\s+)?day\s+after\s+tomorrow\b", _fixed(lambda d: _day(d + timedelta(days=2)))),
    (r"\b" + _EN_COUNT + r"\s+(?P<unit>day|week|month|year)s?\s+ago\b", _en_ago),
    (r"\b(?:yesterday|last\s+night)\b", _fixed(lambda d: _day(d - timedelta(days=1)))),
    (r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b", _fixed(_day)),
    (r"\btomorrow\b", _fixed(lambda d: _day(d + timedelta(days=1)))),
    (r"\b(?:last|previous|past)\s+weekend\b", _fixed(lambda d: _weekend(d, -1))),
    (r"\b(?:over|during)\s+the\s+weekend\b|\bthis\s+past\s+weekend\b", _fixed(_recent_weekend)),
    (r"\bthis\s+weekend\b", _fixed(_weekend)),
    (r"\bnext\s+weekend\b", _fixed(lambda d: _weekend(d, 1))),
    (r"\b(?:last|previous)\s+" + _W + r"\b|\b(?:the\s+)?week\s+before\s+last\b",
     lambda m, d: _week(d, -2 if "before" in m[0].lower() else -1)),
    (r"\bthis\s+(?:past\s+)?" + _W + r"\b", lambda m, d: _week(d, -1 if "past" in m[0].lower() else 0)),
    (r"\bnext\s+" + _W + r"\b", _fixed(lambda d: _week(d, 1))),
    (r"\b(?:last|previous)\s+month\b", _fixed(lambda d: _month(d, -1))),
    (r"\bthis\s+month\b", _fixed(_month)),
    (r"\bnext\s+month\b", _fixed(lambda d: _month(d, 1))),
    (r"\blast\s+year\b", _fixed(lambda d: _year(d, -1))),
    (r"\bthis\s+year\b", _fixed(_year)),
    (r"\bnext\s+year\b", _fixed(lambda d: _year(d, 1))),
    (r"\b(?P<which>last|this|next|coming)\s+(?P<wd>" + "|".join(_WEEKDAYS) + r")\b", _en_weekday),
    (r"\blast\s+(?P<month>" + "|".join(sorted([*_MONTHS, "may"], key=len, reverse=True))
     + r")\b\.?(?!\s+(?:be|have|not|also|well|never|still|need|want|seem)\b)",
     _en_last_month_named),
))

_ZH_WD = r"(?:周|星期|礼拜)(?P<wd>[一二三四五六日]|(?<=[期拜])天)(?![起样直下次些点个定般切共])"
_ZH: tuple[tuple[re.Pattern[str], _Resolver], ...] = tuple((re.compile(p), fn) for p, fn in (
    (r"大前天", _fixed(lambda d: _day(d - timedelta(days=3)))),
    (r"大后天", _fixed(lambda d: _day(d + timedelta(days=3)))),
    (_ZH_COUNT + r"(?:个)?(?P<unit>天|周|星期|礼拜)(?:以前|之前|前)", _zh_ago),
    (_ZH_COUNT + r"个(?P<unit>月)(?:以前|之前|前)", _zh_ago),
    (_ZH_COUNT + r"(?P<unit>年)(?:以前|之前|前)", _zh_ago),
    (r"(?P<y>[去今明前])年(?P<month>\d{1,2}|[一二三四五六七八九十]{1,3})月", _zh_year_month),
    (r"(?P<which>上上|上个|上|这个|这|本|下下|下个|下)" + _ZH_WD, _zh_weekday),
    (r"上上(?:个)?(?:周|星期|礼拜)末?", _fixed(lambda d: _week(d, -2))),
    (r"上(?:个)?(?:周|星期|礼拜)末", _fixed(lambda d: _weekend(d, -1))),
    (r"(?:这|本)(?:个)?(?:周|星期|礼拜)末", _fixed(_weekend)),
    (r"下(?:个)?(?:周|星期|礼拜)末", _fixed(lambda d: _weekend(d, 1))),
    (r"上(?:个)?(?:周|星期|礼拜)", _fixed(lambda d: _week(d, -1))),
    (r"(?:这|本)(?:个)?(?:周|星期|礼拜)", _fixed(_week)),
    (r"下(?:个)?(?:周|星期|礼拜)", _fixed(lambda d: _week(d, 1))),
    (r"上上个月", _fixed(lambda d: _month(d, -2))),
    (r"上个?月", _fixed(lambda d: _month(d, -1))),
    (r"(?:这个|本)月", _fixed(_month)),
    (r"下个?月", _fixed(lambda d: _month(d, 1))),
    (r"去年", _fixed(lambda d: _year(d, -1))),
    (r"前年", _fixed(lambda d: _year(d, -2))),
    (r"今年", _fixed(_year)),
    (r"明年", _fixed(lambda d: _year(d, 1))),
    (r"昨(?:天|晚|日)", _fixed(lambda d: _day(d - timedelta(days=1)))),
    (r"前天", _fixed(lambda d: _day(d - timedelta(days=2)))),
    (r"后天", _fixed(lambda d: _day(d + timedelta(days=2)))),
    (r"今(?:天|晚|早|日)|今天早上|今天下午", _fixed(_day)),
    (r"明(?:天|晚|早)", _fixed(lambda d: _day(d + timedelta(days=1)))),
))


def relative_spans(text: str, reference: date) -> list[TimeSpan]:
    """The times that relative phrases of ``text`` name, seen from ``reference``.

    Phrases are matched in a fixed order (longer, more specific forms first); a phrase
    overlapping one already matched is skipped (``the day before yesterday`` is not also
    ``yesterday``). Spans come in order of their phrase in the text, duplicates dropped.

    Args:
        text: English or Chinese text (a query or a memory).
        reference: The day the text was said (a search's day, a memory's ``memory_at``).

    Returns:
        The spans, possibly empty.

    Example:
        >>> [s.label for s in relative_spans("What did I do last weekend?", date(2024, 6, 5))]
        ['2024-06-01..2024-06-02']
    """
    return list(_cached(text, reference)) if text else []


@lru_cache(maxsize=16384)
def _cached(text: str, reference: date) -> tuple[TimeSpan, ...]:
    found: list[tuple[int, TimeSpan]] = []
    taken: list[tuple[int, int]] = []
    for patterns in (_EN, _ZH):
        for pattern, resolve in patterns:
            for match in pattern.finditer(text):
                lo, hi = match.span()
                if any(lo < t_hi and t_lo < hi for t_lo, t_hi in taken):
                    continue
                try:
                    span = resolve(match, reference)
                except (ValueError, OverflowError, KeyError):  # out of the calendar's range
                    span = None
                if span is not None:
                    taken.append((lo, hi))
                    found.append((lo, span))
    return tuple(dict.fromkeys(span for _, span in sorted(found, key=lambda p: p[0])))
