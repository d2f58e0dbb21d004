"""Each tool call's ``tool_executions`` row, written off the call's path (issue 12).

A call made on the runtime's loop queues its row (:meth:`Store.record_execution` with ``defer=True``);
the loop writes the queue a millisecond later, while it is idle or waiting for the next command's
child. Every read of the table in this process, every transaction and the store's close write the
queue first (:class:`~.store.Store`), so nothing in this process reads around it; another kernel on
the home sees the row that millisecond later. A call made on another thread writes its row at once.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from typing import Any

import anyio

from .loop import LoopThread
from .store import Store, is_busy

__all__ = ["ExecutionRecords", "FLUSH_AFTER_S"]

log = logging.getLogger("holon_nb.runtime")

#: How long after a call its queued row is written (seconds).
FLUSH_AFTER_S = 0.001


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
        self._retrying = False

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
            self._timer = asyncio.get_running_loop().call_later(FLUSH_AFTER_S, self._flush)

    def _flush(self) -> None:
        """Write the queue (loop thread); a locked home is retried in the background."""
        self._timer = None
        if self._store.closed:  # its close wrote the queue
            return
        try:
            with self._store.patience(0.25):
                self._store.flush_executions()
        except sqlite3.Error as exc:  # they stay queued: the next transaction, or close, writes them
            if not is_busy(exc):
                log.warning("tool executions not recorded yet: %s", exc, exc_info=True)
            elif not self._retrying and not self._store.closed:
                self._retrying = True
                self._loop.start_soon(self._flush_later)

    async def _flush_later(self) -> None:
        """Retry the queue with backoff until it is written or the store closes (a queued row's
        ``output_ref`` resolves once it is written; the store's close tries once more)."""
        delay = 0.2
        try:
            while not self._store.closed and self._store.deferred_executions:
                await anyio.sleep(delay)
                try:
                    with self._store.patience(0.25):
                        self._store.flush_executions()
                except sqlite3.OperationalError as exc:
                    if not is_busy(exc):
                        raise
                    delay = min(delay * 2, 2.0)
        finally:
            self._retrying = False
