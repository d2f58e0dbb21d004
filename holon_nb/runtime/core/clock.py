"""Timestamps of the work plane: RFC 3339 text in the store, ``datetime`` arithmetic here.

Stored timestamps use :func:`holon_nb.runtime.core.store.now_rfc3339`'s form
(``2026-11-30T03:17:44.123456Z``, UTC, microseconds), so they sort as text.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

__all__ = ["MAX_TIME", "add_ms", "add_ms_saturating", "fmt", "parse", "utcnow", "wall_to_monotonic"]

#: The latest representable instant; saturating additions stop here.
MAX_TIME = datetime.max.replace(tzinfo=timezone.utc)


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(timezone.utc)


def fmt(value: datetime) -> str:
    """Format an aware datetime as stored text (UTC, microseconds, ``Z``)."""
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse(text: str) -> datetime:
    """Parse an RFC 3339 timestamp (``Z`` or an explicit offset).

    Raises:
        ValueError: when ``text`` is not RFC 3339 or has no UTC offset.
    """
    value = datetime.fromisoformat(text.strip().replace("z", "Z"))
    if value.tzinfo is None:
        raise ValueError("timestamp has no UTC offset")
    return value.astimezone(timezone.utc)


def add_ms(start: datetime, ms: int) -> datetime:
    """``start + ms`` milliseconds.

    Raises:
        OverflowError: when the result is not a representable instant.
    """
    return start + timedelta(milliseconds=ms)


def add_ms_saturating(start: datetime, ms: int) -> datetime:
    """``start + ms`` milliseconds, saturating at :data:`MAX_TIME` (agents spec §4.4 rule 3)."""
    try:
        return add_ms(start, ms)
    except OverflowError:
        return MAX_TIME


def wall_to_monotonic(due: datetime, now_wall: datetime, now_mono: float) -> float:
    """Convert a wall-clock instant to the ``time.monotonic()`` scale."""
    return now_mono + (due - now_wall).total_seconds()
