"""Each tool call's ``tool_executions`` row, written off the call's path (issue 12).

A call made on the runtime's loop queues its row (:meth:`Store.record_execution` with ``defer=True``);
the loop writes the queue a millisecond later when no call is in flight then. While calls keep
coming (a loop of commands), the queue waits for a gap between them, and is written at the latest
a quarter of a second after its first row, in one transaction: a write landing inside the next
call's window held up its child's exit (~0.1 ms a call on this machine). Every read of the table in
this process, every transaction and the store's close write the queue first (:class:`~.store.Store`),
so nothing in this process reads around it; another kernel on the home sees a row at most
``FLUSH_WITHIN_S`` later. A call made on another thread writes its row at once.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from typing import Any

from ._loop import LoopThread
from ._store import Store, is_busy

__all__ = ["ExecutionRecords", "FLUSH_AFTER_S", "FLUSH_WITHIN_S"]

log = logging.getLogger("holon_nb.runtime")

#: How long after a call its queued row is written when no other call is in flight then (seconds).
FLUSH_AFTER_S = 0.001
#: While calls are in flight, how often the loop looks for a gap between them (seconds).
RECHECK_S = 0.05
#: The longest a queued row waits, calls in flight or not (seconds).
FLUSH_WITHIN_S = 0.25
#: After a write the home's lock refused, the first retry comes this much later, doubling up to RETRY_MAX_S (seconds).
RETRY_FIRST_S = 0.2
RETRY_MAX_S = 2.0


class ExecutionRecords:
    """The runtime's writer of tool-execution rows.

    Args:
        store: The home's store.
        loop: The runtime's loop thread (rows of calls made on it are queued).
    """

    def __init__(self, store: Store, loop: LoopThread):
        self._store = store
        self._loop = loop
        self._timer: asyncio.TimerHandle | None = None
        self._queued_at = 0.0  # time.monotonic() when the timer was armed for the queue's first row
        self._retry_s = RETRY_FIRST_S  # the wait before the next retry of a queue a locked home refused

    def add(self, record: dict[str, Any]) -> None:
        """Record one tool execution (``Store.record_execution``'s ``rec``).

        Raises:
            StoreBusy: on another thread than the loop's, when the home stayed locked (the row stays
                queued for the next write).
        """
        if not self._loop.in_loop_thread():
            self._store.record_execution(record)
            return
        self._store.record_execution(record, defer=True)
        if self._timer is None:
            self._queued_at = time.monotonic()
            self._timer = asyncio.get_running_loop().call_later(FLUSH_AFTER_S, self._flush)

    def _flush(self) -> None:
        """Write the queue (loop thread) unless calls are in flight and it is younger than
        ``FLUSH_WITHIN_S``; a locked home is retried with backoff until the queue is written.

        Runs as a plain asyncio callback (``call_later``), outside any anyio task, so the retry is
        another ``call_later`` of itself, never a task started from here (issue 25 item 4a: starting
        one raised ``NoEventLoopError`` and left the retries off).
        """
        self._timer = None
        if self._store.closed or not self._store.deferred_executions:  # its close, or a read, wrote the queue
            self._retry_s = RETRY_FIRST_S
            return
        loop = asyncio.get_running_loop()
        waited = time.monotonic() - self._queued_at
        if self._loop.calls_in_flight and waited < FLUSH_WITHIN_S and self._retry_s == RETRY_FIRST_S:
            self._timer = loop.call_later(min(RECHECK_S, FLUSH_WITHIN_S - waited), self._flush)
            return
        try:
            with self._store.patience(0):  # one try: while another process holds the lock, the loop goes on
                self._store.flush_executions()
        except sqlite3.Error as exc:  # they stay queued: retried below; the next transaction or close also writes them
            if not is_busy(exc):
                log.warning("tool executions not recorded yet: %s", exc, exc_info=True)
            if not self._store.closed:
                self._timer = loop.call_later(self._retry_s, self._flush)
                self._retry_s = min(self._retry_s * 2, RETRY_MAX_S)
            return
        self._retry_s = RETRY_FIRST_S
