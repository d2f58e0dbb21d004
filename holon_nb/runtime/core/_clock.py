"""Timestamps of the work plane: RFC 3339 text in the store, ``datetime`` arithmetic here, and the
clock that schedules timers and waits' rechecks.

Stored timestamps use :func:`holon_nb.runtime.core._store.now_rfc3339`'s form
(``2026-11-30T03:17:44.123456Z``, UTC, microseconds), so they sort as text.

A runtime reads "now" for scheduling from its :class:`Clock` (``RuntimeSettings.clock``). The default
reads the system's clock; :class:`ManualClock` stands still until told to move, so a test of an
hour-long timer advances the clock an hour instead of sleeping (as anyio's and trio's mock clocks do).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

__all__ = [
    "MAX_TIME",
    "Clock",
    "ManualClock",
    "add_ms",
    "add_ms_saturating",
    "fmt",
    "parse",
    "utcnow",
    "wall_to_monotonic",
]

#: The latest representable instant; saturating additions stop here.
MAX_TIME = datetime.max.replace(tzinfo=timezone.utc)


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(timezone.utc)


class Clock:
    """The system's wall clock, as the work plane's scheduler reads it.

    :meth:`now` is timezone-aware UTC. :meth:`subscribe` registers a callback run whenever the clock
    jumps on request; the system clock never does, so its callbacks never run.
    """

    def now(self) -> datetime:
        """The current instant (aware, UTC)."""
        return utcnow()

    def subscribe(self, callback: Callable[[], None]) -> None:
        """Run ``callback()`` after each jump of this clock (never, for the system clock)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class ManualClock(Clock):
    """A clock that stands still until :meth:`advance` moves it (for tests and replays).

    Args:
        start: The initial instant (aware; default: the system's now).

    Thread-safe. Each move runs every subscriber (a runtime's timer scheduler subscribes, so a timer
    whose due time the clock passes fires at once, without waiting for real time).
    """

    def __init__(self, start: datetime | None = None) -> None:
        if start is not None and start.tzinfo is None:
            raise ValueError("ManualClock needs an aware datetime")
        self._now = (start or utcnow()).astimezone(timezone.utc)
        self._lock = threading.Lock()
        self._subscribers: list[Callable[[], None]] = []

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def subscribe(self, callback: Callable[[], None]) -> None:
        with self._lock:
            self._subscribers.append(callback)

    def advance(self, ms: float = 0, *, seconds: float = 0) -> datetime:
        """Move the clock forward by ``ms`` milliseconds plus ``seconds``; return the new instant.

        Raises:
            ValueError: when the step is negative (a clock never goes back).
        """
        step = timedelta(milliseconds=ms, seconds=seconds)
        if step < timedelta(0):
            raise ValueError("a clock never goes back")
        with self._lock:
            self._now += step
            now, subscribers = self._now, list(self._subscribers)
        for callback in subscribers:
            callback()
        return now

    def __repr__(self) -> str:
        return f"ManualClock({fmt(self.now())})"


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
