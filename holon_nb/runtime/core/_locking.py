"""How the store waits for the home's SQLite write lock, which another process (a second kernel on the
home) may hold for seconds: :class:`WriteLock`, the part of :class:`~.store.Store` that takes it.

A write on a thread that may block (a worker thread, the kernel's) polls ``BEGIN IMMEDIATE`` and sleeps
between tries without holding the store's own lock, so that thread's wait holds up no other thread. On the
runtime's event loop, :meth:`WriteLock.write` waits asynchronously instead: the loop and every other call
on it go on while the lock is taken (issue 25). Both give up with :class:`StoreBusy` past their bound.
"""

from __future__ import annotations

import contextvars
import sqlite3
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

import anyio

from ...tools._errors import HolonNBError

__all__ = ["WriteLock", "StoreBusy", "is_busy", "DEFAULT_BUSY_TIMEOUT_S"]

_T = TypeVar("_T")

#: How long a write waits for another process's SQLite write lock, in total, before
#: :class:`StoreBusy` (seconds; ``RuntimeSettings.store_busy_timeout_s``).
DEFAULT_BUSY_TIMEOUT_S = 30.0
ATTEMPT_BUSY_MS = 2000  # SQLite's own busy handler per attempt of a statement run by ``_retrying``
_BACKOFF_S = (0.05, 1.0)  # first and longest sleep between attempts of ``_retrying``
#: First and longest sleep between two tries of the write lock (``BEGIN IMMEDIATE`` without SQLite's busy
#: handler): the store's own lock is not held while sleeping, so the other threads' reads and writes go on.
_POLL_S = (0.005, 0.1)
#: A shorter wait for the code running in this context (``Store.patience``): background work waits briefly,
#: then retries asynchronously, so the loop thread is not blocked while another process holds the lock.
_PATIENCE: contextvars.ContextVar[float | None] = contextvars.ContextVar("holon_store_patience", default=None)


def is_busy(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" / "database is busy" (another connection holds the lock)."""
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


class StoreBusy(HolonNBError, sqlite3.OperationalError):
    """The home's database stayed locked by another connection past the retry bound.

    Dispatch turns it into a ``runtime_db_busy`` envelope (commands spec §3.2 rule 4,
    retryable); background work catches it and retries until the runtime closes.

    Attributes:
        waited_s: Seconds spent waiting, over all attempts.
        attempts: How many times the write lock was requested.
    """

    def __init__(self, path: Path, waited_s: float, attempts: int):
        super().__init__(
            f"database is locked: another process held the write lock of {path} for more than "
            f"{waited_s:.1f} s ({attempts} attempts)"
        )
        self.waited_s = waited_s
        self.attempts = attempts


class WriteLock:
    """The store's waits for the write lock (a base of :class:`~.store.Store`, which sets the attributes).

    Attributes:
        path: The database file (named by :class:`StoreBusy`).
        busy_timeout_s: The longest wait of one write, in total (``RuntimeSettings.store_busy_timeout_s``).
        closed: Set when the store closes: waits give up.
        on_loop_thread: Tells whether the calling thread runs the runtime's event loop (given to the store):
            a write there that sleeps waiting for another process's lock is counted (``loop_lock_waits``).
    """

    path: Path
    busy_timeout_s: float
    closed: bool
    on_loop_thread: Callable[[], bool]
    _db: sqlite3.Connection
    _lock: threading.RLock
    _attempt_ms: int
    _tx_thread: int | None
    _reserved: bool
    _busy_retries: int
    _busy_refusals: int
    _loop_waits: int
    _loop_wait_max_s: float
    _loop_wait_where: str

    def _busy_ms(self, ms: int) -> None:
        """Set SQLite's busy handler of the write connection (call with ``self._lock`` held)."""
        if ms != self._attempt_ms:
            self._db.execute(f"PRAGMA busy_timeout={ms}")
            self._attempt_ms = ms

    def _bound(self) -> float:
        """The longest wait for the write lock in this context: the patience in force, at most ``busy_timeout_s``."""
        bound = _PATIENCE.get()
        return self.busy_timeout_s if bound is None else min(bound, self.busy_timeout_s)

    def _retrying(self, op: Any) -> Any:
        """Run ``op()`` (one statement that may need a lock), retrying "database is locked" with backoff.

        SQLite's busy handler waits up to 2 s per attempt; between attempts this sleeps 50 ms,
        doubling to 1 s, until ``busy_timeout_s`` passed in total. Call with ``self._lock`` held.

        Raises:
            StoreBusy: the lock stayed taken past ``busy_timeout_s`` (or the store closed meanwhile).
        """
        started = time.monotonic()
        bound = self._bound()
        delay, attempts = _BACKOFF_S[0], 0
        while True:
            remaining = bound - (time.monotonic() - started)
            self._busy_ms(max(1, min(ATTEMPT_BUSY_MS, int(remaining * 1000))))
            attempts += 1
            try:
                return op()
            except sqlite3.OperationalError as exc:
                if not is_busy(exc) or isinstance(exc, StoreBusy):
                    raise
                waited = time.monotonic() - started
                if self.closed or waited + delay >= bound:
                    self._busy_refusals += 1
                    raise StoreBusy(self.path, waited, attempts) from exc
                self._busy_retries += 1
                time.sleep(delay)
                delay = min(delay * 2, _BACKOFF_S[1])

    def _try_begin(self, blocking: bool) -> bool:
        """Take the store's lock and ``BEGIN IMMEDIATE`` once, without SQLite's busy handler (except at
        close: one attempt of up to 2 s); True with both held, False (neither held) when another
        connection has the write lock or, not ``blocking``, another thread holds the store's lock."""
        if not self._lock.acquire(blocking=blocking):
            return False
        try:
            if self._tx_thread == threading.get_ident():
                raise sqlite3.OperationalError("cannot start a transaction within a transaction")
            self._busy_ms(min(ATTEMPT_BUSY_MS, int(self._bound() * 1000)) if self.closed else 0)
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            self._lock.release()
            if is_busy(exc):
                return False
            raise
        except BaseException:
            self._lock.release()
            raise
        self._tx_thread = threading.get_ident()
        return True

    def _begin(self) -> None:
        """Open a write transaction, waiting for another process's lock up to the patience in force; return
        with it open and ``self._lock`` held. The store's lock is let go between tries, so other threads'
        reads and short writes go on (a caller that already held it keeps it: the sleeps then hold it too).

        Raises:
            StoreBusy: the write lock stayed taken past the bound (or the store closed meanwhile).
        """
        started = time.monotonic()
        bound = self._bound()
        delay, attempts = _POLL_S[0], 0
        while True:
            attempts += 1
            if self._try_begin(blocking=True):
                break
            waited = time.monotonic() - started
            if self.closed or waited + delay > bound:
                self._busy_refusals += 1
                if attempts > 1:  # it slept
                    self._note_loop_wait(waited)
                raise StoreBusy(self.path, waited, attempts)
            self._busy_retries += 1
            time.sleep(delay)
            delay = min(delay * 2, _POLL_S[1])
        if attempts > 1:
            self._note_loop_wait(time.monotonic() - started)

    def _note_loop_wait(self, waited: float) -> None:
        """Count a wait for the write lock that slept on the loop thread (every call on the loop waited too)."""
        if waited <= 0 or not self.on_loop_thread():
            return
        self._loop_waits += 1
        if waited > self._loop_wait_max_s:
            self._loop_wait_max_s = waited
            frames = [f for f in traceback.extract_stack(limit=10)[:-3] if "contextlib" not in f.filename]
            self._loop_wait_where = " < ".join(f"{Path(f.filename).stem}:{f.name}" for f in reversed(frames[-4:]))

    async def write(self, fn: Callable[[], _T], *, timeout_s: float | None = None) -> _T:
        """Run ``fn()`` once this process holds the home's write lock, waiting for it asynchronously.

        For code on an event loop (the runtime's): while another process holds the lock this sleeps
        (``anyio.sleep``, 5 ms doubling to 100 ms between tries) instead of blocking the thread, so
        every other call and background job on the loop goes on. ``fn`` is synchronous code that writes
        with :meth:`tx`: its first transaction uses the lock taken here (nothing can take it in between);
        a later one takes the lock again as usual. Reads ``fn`` makes before its first transaction run in
        that transaction (they see the latest commit). When ``fn`` opens no transaction, the lock is let go.

        Args:
            fn: Synchronous code; it must not await (the lock is held while it runs).
            timeout_s: The longest wait; None means ``busy_timeout_s``.

        Returns:
            What ``fn`` returned.

        Raises:
            StoreBusy: the lock stayed taken past the bound (``fn`` did not run).
            sqlite3.ProgrammingError: after :meth:`close`. Whatever ``fn`` raises.
        """
        bound = self.busy_timeout_s if timeout_s is None else timeout_s
        started = time.monotonic()
        delay, attempts = _POLL_S[0], 0
        while True:
            attempts += 1
            if self._try_begin(blocking=False):
                break
            waited = time.monotonic() - started
            if self.closed or waited + delay > bound:
                self._busy_refusals += 1
                raise StoreBusy(self.path, waited, attempts)
            self._busy_retries += 1
            await anyio.sleep(delay)
            delay = min(delay * 2, _POLL_S[1])
        self._reserved = True
        try:
            return fn()
        finally:
            if self._reserved:  # fn opened no transaction: the lock goes back unused
                self._reserved = False
                self._tx_thread = None
                with suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
            self._lock.release()

    @staticmethod
    @contextmanager
    def patience(seconds: float) -> Iterator[None]:
        """Within this block (this thread or asyncio task), wait at most ``seconds`` for the write lock.

        Background work uses it so that a locked home costs the loop thread a short wait per attempt
        (``0``: one try, no wait); it then retries asynchronously (``anyio.sleep``) instead of blocking
        the loop. :meth:`write` waits asynchronously without it.
        """
        token = _PATIENCE.set(seconds)
        try:
            yield
        finally:
            _PATIENCE.reset(token)
