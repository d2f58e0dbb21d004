"""The home's size cap while output is written (issue 25 item 3a).

Pruning after the fact let a burst of output grow the home far past ``max_home_bytes``. A :class:`DiskBudget`
is asked before each write that grows the home (a command's output spools and task logs, the execution records
a call stores): it grants what fits under the cap by its running estimate of the home's size; when a write would
not fit it first reclaims (the runtime prunes the oldest finished artifacts, then old execution records, down to
a low-water mark below the cap, and measures the home again), then grants what fits then. What it cannot grant
is not written: the output is cut, and the receipt says so.

The estimate is the size measured at the last prune plus what was granted since; writes it does not see (another
kernel on the home, a generated image) are found by the next measure.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["DiskBudget", "HIGH_WATER", "LOW_WATER"]

#: A reclaim prunes down to this share of the cap, so that a burst reclaims once per eighth of it, not per write.
LOW_WATER = 7 / 8
#: Grants stop at this share of the cap: the rest is headroom for writes the estimate does not see as they
#: happen (SQLite's WAL and page overhead, a vacuum step, files of other planes).
HIGH_WATER = 7 / 8


class DiskBudget:
    """Bytes the home may still grow by before its cap.

    Args:
        cap: Returns the cap in bytes (``settings.max_home_bytes``, read at each ask); 0 or less: no cap.
        reclaim: ``reclaim(target)`` frees what it can to bring the home to at most ``target`` bytes and returns
            the home's size after, in bytes (None when it could not measure).
    """

    def __init__(self, cap: Callable[[], int], reclaim: Callable[[int], int | None]):
        self._cap = cap
        self._reclaim = reclaim
        self._used: int | None = None  # the home's estimated size in bytes; None: not measured yet
        self._lock = threading.Lock()
        self._reclaiming = False
        #: bytes asked for and not granted since the runtime started (the cap cut them)
        self.refused_bytes = 0

    def measured(self, home_bytes: int) -> None:
        """Set the estimate to a fresh measure of the home (every prune calls it), bytes."""
        with self._lock:
            self._used = home_bytes

    def grant(self, n: int) -> int:
        """Ask to grow the home by ``n`` bytes; return how many of them may be written (0 to ``n``).

        May reclaim first (a prune, blocking: call it where a short pause is fine, never inside a store
        transaction). A reclaim asked for while one runs grants from the estimate only.
        """
        cap = self._cap()
        if cap <= 0 or n <= 0:
            return max(n, 0)
        cap = max(1, int(cap * HIGH_WATER))
        with self._lock:
            fits = self._used is not None and self._used + n <= cap
            if fits or self._reclaiming:
                return self._take(n, cap)
            self._reclaiming = True
        try:
            after = self._reclaim(max(1, min(int(cap * LOW_WATER), cap - n)))
        finally:
            with self._lock:
                self._reclaiming = False
        with self._lock:
            if after is not None:
                self._used = after
            return self._take(n, cap)

    def _take(self, n: int, cap: int) -> int:
        """Grant from the estimate (lock held)."""
        got = max(0, min(n, cap - (self._used or 0)))
        self._used = (self._used or 0) + got
        self.refused_bytes += n - got
        return got
