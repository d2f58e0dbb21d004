"""Virtual clock and seeded id generator for cassettes (turn-loop spec §4.3 "Replay").

While recording, :class:`CassetteClock` is the real clock (its ``sleep`` really sleeps and remembers
how long, so the backoff lands in the interaction's ``timing.backoff_ms``). While replaying it is
frozen to each interaction's recorded start and ``sleep`` only advances it: a replayed retry
with 200/400 ms backoff takes no wall-clock time.

:class:`SeededIds` has the signature of ``runtime.store.new_id`` (``new_id("tool") ->
"tool_<15 hex>"``) but derives ids from the cassette's ``id_seed``, so a recording and its replay
mint the same ids in the same order.

Example::

    clock = CassetteClock(live=False); clock.freeze_at("2026-01-01T00:00:00.000000Z")
    await clock.sleep(0.2)          # returns at once
    clock.now()                     # 2026-01-01 00:00:00.200000+00:00
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

import anyio
import anyio.lowlevel

__all__ = ["CassetteClock", "SeededIds", "format_ts", "parse_ts"]


def format_ts(value: datetime) -> str:
    """RFC 3339 UTC with microseconds (``2026-11-30T03:17:44.123456Z``), the store's form."""
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_ts(text: str) -> datetime:
    """Inverse of :func:`format_ts` (any RFC 3339 offset accepted).

    Raises:
        ValueError: when ``text`` is not an RFC 3339 timestamp with an offset.
    """
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError(f"timestamp without offset: {text!r}")
    return value.astimezone(timezone.utc)


class CassetteClock:
    """Real clock while recording, virtual while replaying.

    Args:
        live: True (record): ``now`` is the system clock and ``sleep`` sleeps; False (replay): ``now`` is
            the frozen instant plus virtual sleeps and ``sleep`` never blocks.

    Attributes:
        slept_ms: Milliseconds passed to :meth:`sleep` since the last :meth:`take_slept` (the backoff
            between two attempts).
    """

    def __init__(self, live: bool):
        self.live = live
        self._lock = threading.Lock()
        self._frozen = datetime(2000, 1, 1, tzinfo=timezone.utc)
        self._mono = 0.0
        self.slept_ms = 0

    def now(self) -> datetime:
        """The current (aware, UTC) instant: the system's, or the virtual one."""
        if self.live:
            return datetime.now(timezone.utc)
        with self._lock:
            return self._frozen

    def now_rfc3339(self) -> str:
        """:meth:`now` as stored text (same form as ``runtime.store.now_rfc3339``)."""
        return format_ts(self.now())

    def monotonic(self) -> float:
        """Seconds on a monotonic scale (``time.monotonic`` while live; virtual seconds on replay)."""
        if self.live:
            return time.monotonic()
        with self._lock:
            return self._mono

    def freeze_at(self, instant: datetime | str) -> None:
        """Replay only: set the virtual clock to a recorded instant (no effect while live)."""
        if self.live:
            return
        value = parse_ts(instant) if isinstance(instant, str) else instant
        with self._lock:
            self._frozen = value

    def advance(self, seconds: float) -> None:
        """Replay only: move the virtual clock forward by ``seconds`` (no effect while live)."""
        if self.live or seconds <= 0:
            return
        with self._lock:
            self._frozen += timedelta(seconds=seconds)
            self._mono += seconds

    async def sleep(self, seconds: float) -> None:
        """The injectable sleep: really sleeps while live, advances the virtual clock on replay; either way
        ``seconds`` is added to :attr:`slept_ms`."""
        with self._lock:
            self.slept_ms += max(0, round(seconds * 1000))
        if self.live:
            await anyio.sleep(seconds)
        else:
            self.advance(seconds)
            await anyio.lowlevel.checkpoint()

    def take_slept(self) -> int:
        """Return :attr:`slept_ms` and reset it to 0."""
        with self._lock:
            ms, self.slept_ms = self.slept_ms, 0
            return ms


class SeededIds:
    """Deterministic runtime ids: ``ids("tool") -> "tool_<15 hex>"``, where the hex is
    ``sha256("<seed>:<prefix>:<n>")`` for the n-th id of that prefix (n from 1).

    Args:
        seed: The cassette's ``id_seed``.
        taken: Optional ``taken(id) -> bool``; an id for which it answers True is skipped (the next n is
            used), so replaying a cassette twice into one store never reuses an id.
    """

    def __init__(self, seed: str, taken: Callable[[str], bool] | None = None):
        self.seed = seed
        self.taken = taken
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, prefix: str) -> str:
        while True:
            with self._lock:
                n = self._counts[prefix] = self._counts.get(prefix, 0) + 1
            digest = hashlib.sha256(f"{self.seed}:{prefix}:{n}".encode()).hexdigest()
            value = f"{prefix}_{digest[:15]}"
            if self.taken is None or not self.taken(value):
                return value
