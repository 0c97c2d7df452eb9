"""Time values: aware UTC datetimes, parsed from what callers pass, rendered as ISO-8601.

Example:
    >>> coerce_datetime("2024-05-08T13:56:00Z", "memory_at").isoformat()
    '2024-05-08T13:56:00+00:00'
"""

from __future__ import annotations

import time
from datetime import date, datetime, timezone

from hy_memory_langgraph.errors import InvalidInputError


def utcnow() -> datetime:
    """The current time, aware, in UTC."""
    return datetime.now(timezone.utc)


def coerce_datetime(value: object, field: str) -> datetime | None:
    """Parse ``value`` (datetime, date, ISO string, epoch seconds) into aware UTC.

    Naive datetimes are taken as UTC. ``None`` stays ``None``.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(float(value), tz=timezone.utc)
        except (ValueError, OverflowError, OSError):
            pass
    if isinstance(value, str) and value.strip():
        text = value.strip().replace("Z", "+00:00")
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            pass
        else:
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
    raise InvalidInputError(
        f"{field}={value!r} is not a date/time; pass a datetime, a date, epoch seconds "
        f"or an ISO-8601 string such as '2024-05-08T13:56:00Z'"
    )


def iso(value: datetime) -> str:
    """``value`` in UTC as an ISO-8601 string."""
    return value.astimezone(timezone.utc).isoformat()


def prompt_time(value: datetime) -> str:
    """``value`` in UTC to the minute, as a prompt shows the time of a write (seconds and
    microseconds only cost tokens there).

    Example:
        >>> prompt_time(datetime(2024, 5, 2, 9, 30, 12, 345, tzinfo=timezone.utc))
        '2024-05-02T09:30+00:00'
    """
    return value.astimezone(timezone.utc).isoformat(timespec="minutes")


def elapsed_ms(started: float) -> float:
    """Milliseconds since ``started`` (a ``time.perf_counter()`` value), to the microsecond."""
    return round((time.perf_counter() - started) * 1000.0, 3)
