"""The runtime thread: one anyio event loop with a blocking portal and a task group.

Started by :class:`LoopThread.start`, which returns once the loop is ready or
raises its startup error; :meth:`LoopThread.stop` is idempotent and joins the
thread (style.md §2.8–§2.9).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.from_thread import BlockingPortal

from ...tools._errors import RuntimeDied, RuntimeStartupError, WrongThread

__all__ = ["LoopThread", "THREAD_NAME"]

THREAD_NAME = "holon-nb-runtime"

log = logging.getLogger("holon_nb.runtime.loop")


class LoopThread:
    """Owns the runtime's event loop thread.

    Attributes:
        portal: The blocking portal for calls from other threads.
        task_group: The task group for background work (task runners, timers).
    """

    def __init__(self) -> None:
        self.portal: BlockingPortal | None = None
        self.task_group: TaskGroup | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._stop: anyio.Event | None = None
        self._on_stop: Callable[[], Awaitable[None]] | None = None
        self._stopping = False
        self._aio: asyncio.AbstractEventLoop | None = None
        #: calls in flight (:meth:`call`): cancelled at stop, so their handlers clean up
        self._calls: set[asyncio.Task[Any]] = set()
        #: when the last :meth:`call` ended (``time.monotonic()``; 0.0: none yet), for :meth:`quiet_for`
        self._last_call_end = 0.0
        #: why the loop ended without ``stop()`` (None while it runs or after a normal stop)
        self.death: BaseException | None = None
        #: background coroutines that raised (each logged once with its traceback; the loop went on)
        self.background_failures = 0
        #: ``start_soon`` coroutines whose task has not taken its first step: a task the stop cancels
        #: before then never awaits its coroutine (anyio >= 4.14 wraps it), so the loop closes them at the end
        self._unstarted: dict[int, Any] = {}
        self._keys = itertools.count()

    def start(self, on_stop: Callable[[], Awaitable[None]] | None = None) -> None:
        """Start the thread and wait until its loop runs.

        Args:
            on_stop: Coroutine function awaited on the loop before it shuts down.

        Raises:
            RuntimeStartupError: if the loop could not start.
        """
        self._on_stop = on_stop
        self._thread = threading.Thread(target=self._main, name=THREAD_NAME, daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise RuntimeStartupError(f"runtime loop failed to start: {self._error}") from self._error

    def _main(self) -> None:
        try:
            anyio.run(self._amain)
        except BaseException as exc:  # reported to start() when it happens before readiness
            if not self._ready.is_set():
                self._error = exc
                self._ready.set()
            else:  # the loop died: every later call raises RuntimeDied naming this (the group's real cause)
                while isinstance(inner := getattr(exc, "exceptions", None), tuple) and inner:  # an exception group
                    exc = inner[0]
                self.death = exc
                log.critical("the holon runtime's loop thread died", exc_info=exc)
        else:
            if not self._stopping and self._ready.is_set():
                self.death = RuntimeError("the loop returned without being stopped")

    async def _amain(self) -> None:
        self._stop = anyio.Event()
        # the portal sits inside the task group: cancelling the portal's remaining calls at shutdown
        # must not cancel background work (task runners), which on_stop still needs
        try:
            async with anyio.create_task_group() as tg:
                self.task_group = tg
                async with BlockingPortal() as portal:
                    self.portal = portal
                    self._aio = asyncio.get_running_loop()
                    self._ready.set()
                    await self._stop.wait()
                    # calls still running (a blocked TaskOutput, an ExecCommand in its foreground window)
                    # are cancelled, so their handlers clean up
                    calls = list(self._calls)
                    for call in calls:
                        call.cancel()
                    if calls:
                        await asyncio.wait(calls)
                    await portal.stop(cancel_remaining=True)
                if self._on_stop is not None:
                    with anyio.CancelScope(shield=True):
                        await self._on_stop()
                tg.cancel_scope.cancel()
        finally:
            for coro in self._unstarted.values():  # cancelled before their first step: nothing of them ran
                coro.close()
            self._unstarted.clear()

    @property
    def alive(self) -> bool:
        """True while the loop thread runs."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def calls_in_flight(self) -> int:
        """How many :meth:`call` calls are running on the loop now (read on the loop thread)."""
        return len(self._calls)

    def quiet_for(self) -> float:
        """Seconds since the last :meth:`call` ended, 0.0 while one is in flight (read on the loop thread): how long
        the runtime has been idle, for background work that should not compete with calls (the memory indexer)."""
        if self._calls:
            return 0.0
        return time.monotonic() - self._last_call_end if self._last_call_end else float("inf")

    def in_loop_thread(self) -> bool:
        """True when called from the loop thread itself."""
        return self._thread is not None and threading.current_thread() is self._thread

    def start_soon(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Start ``fn(*args)`` in the background task group, supervised. Call from the loop thread only.

        An exception ``fn`` raises is logged once with its traceback and ends only ``fn``, never the
        loop (sites that can fail transiently — a locked store — retry themselves before that).
        """
        assert self.task_group is not None
        key = next(self._keys)
        coro = self._unstarted[key] = self._supervised(fn, args, key)
        try:
            self.task_group.start_soon(lambda: coro, name=getattr(fn, "__qualname__", repr(fn)))
        except BaseException:  # the group no longer takes tasks (the loop is stopping)
            del self._unstarted[key]
            coro.close()
            raise

    async def _supervised(self, fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...], key: int) -> None:
        del self._unstarted[key]
        try:
            await fn(*args)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception:
            # logged before counted: whoever sees the count (status(), a test) finds the log line written
            log.exception("background work %s failed; the runtime goes on", getattr(fn, "__qualname__", repr(fn)))
            self.background_failures += 1

    def check(self) -> None:
        """Raise :class:`RuntimeDied` when the loop ended without :meth:`stop`.

        Raises:
            RuntimeDied: naming the exception that ended the loop.
        """
        if self._thread is not None and self._ready.is_set() and not self._stopping and not self.alive:
            raise RuntimeDied(self.death)

    def call(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """Run ``fn(*args)`` on the loop and wait for its result; an interrupted caller cancels it.

        Raises:
            WrongThread: when called from the loop thread itself (it would deadlock; also a ``RuntimeError``).
            KeyboardInterrupt: re-raised after cancelling the call (Ctrl-C in a kernel).
        """
        if self.in_loop_thread():
            raise WrongThread(
                "this blocks until the runtime thread answers, so it cannot run on the runtime "
                "thread itself (a subscriber callback or a tool handler): use the async API there"
            )
        self.check()
        assert self._aio is not None
        loop, calls = self._aio, self._calls
        answer = _Answer()
        started: list[asyncio.Task[Any]] = []

        def unstarted(_: object) -> None:  # the task ended before its first step: the loop stopping
            answer.cancel()

        async def tracked() -> None:
            task = asyncio.current_task()
            assert task is not None
            # running: from here on this coroutine settles the answer itself, so the callback goes (issue 27
            # item 7: a done callback costs the loop one more turn, with the GIL held, after the caller's result)
            task.remove_done_callback(unstarted)
            calls.add(task)
            try:
                result = await fn(*args)
            except asyncio.CancelledError:
                answer.cancel()
                raise
            except BaseException as exc:
                answer.set_exception(exc)
            else:
                answer.set_result(result)  # the caller wakes now, not after the task's done callbacks ran
            finally:
                calls.discard(task)
                self._last_call_end = time.monotonic()

        def start() -> None:
            task = loop.create_task(tracked())
            # cancelled before it ran (the loop stopping): the caller still hears of it
            task.add_done_callback(unstarted)
            started.append(task)

        # asyncio's own hop, not the portal's: one task and one answer (issue 12: ~35 us here against the
        # portal's ~130 us, on every tool call); stop() cancels the calls still in flight itself
        try:
            loop.call_soon_threadsafe(start)
        except RuntimeError:  # "Event loop is closed": the loop ended between check() and here
            self._thread.join(1.0) if self._thread is not None else None
            self.check()
            raise
        try:
            return answer.result()
        except BaseException:
            # Ctrl-C in the kernel: cancelling the task on the loop lets the coroutine's handlers clean
            # up (a command in its foreground window is stopped)
            if not answer.done():
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                    loop.call_soon_threadsafe(lambda: [task.cancel() for task in started])
            raise

    def submit(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> concurrent.futures.Future[Any]:
        """Start ``fn(*args)`` on the loop from another thread; the future's ``cancel()`` cancels the task there.

        Raises:
            WrongThread: when called from the loop thread itself.
        """
        if self.in_loop_thread():
            raise WrongThread("submit() is for other threads: on the runtime thread, await the call")
        self.check()
        assert self._aio is not None

        async def run() -> Any:
            return await fn(*args)

        return asyncio.run_coroutine_threadsafe(run(), self._aio)

    def portal_call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` through the blocking portal, from another thread, once the loop has started."""
        assert self.portal is not None, "the runtime loop has not started"
        return self.portal.call(fn, *args)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the loop (running ``on_stop`` first) and join the thread. Idempotent.

        Raises:
            WrongThread: when called from the loop thread itself (also a ``RuntimeError``).
        """
        if self.in_loop_thread():
            raise WrongThread(
                "the runtime cannot be closed from its own thread (a subscriber callback); "
                "close it from the kernel or another thread"
            )
        self._stopping = True
        if not self.alive or self.portal is None or self._stop is None:
            return
        try:
            self.portal.call(self._stop.set)
        except RuntimeError:
            pass
        assert self._thread is not None
        self._thread.join(timeout)


class _Answer:
    """The outcome of one :meth:`LoopThread.call`, settled once on the loop thread and awaited by its caller.

    What a ``concurrent.futures.Future`` does for the call, with less between the loop's answer and the
    caller running again (issue 27 item 7): the caller sleeps on one lock taken in advance, which the loop
    releases, and reads the outcome from two slots; no condition variable, so the caller, once woken, does
    not wait for the loop thread to leave a lock it still holds, and goes to sleep sooner after the hop.
    """

    __slots__ = ("_lock", "_outcome", "_value")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()  # released once, when the answer is settled
        self._outcome: str | None = None  # "result", "exception" or "cancelled"
        self._value: Any = None

    def done(self) -> bool:
        return self._outcome is not None

    def _settle(self, outcome: str, value: Any) -> None:
        if self._outcome is None:  # the first outcome stands (a cancellation after a result is none)
            self._outcome, self._value = outcome, value
            self._lock.release()

    def set_result(self, value: Any) -> None:
        self._settle("result", value)

    def set_exception(self, exc: BaseException) -> None:
        self._settle("exception", exc)

    def cancel(self) -> None:
        self._settle("cancelled", None)

    def result(self) -> Any:
        """Wait for the outcome (Ctrl-C interrupts the wait); return the result or raise.

        Raises:
            concurrent.futures.CancelledError: the call was cancelled (the loop stopping).
            BaseException: whatever the call raised.
        """
        if self._outcome is None:
            self._lock.acquire()  # interruptible: a KeyboardInterrupt propagates from here
        if self._outcome == "result":
            return self._value
        if self._outcome == "cancelled":
            raise concurrent.futures.CancelledError()
        try:
            raise self._value
        finally:
            self = None  # type: ignore[assignment]  # as concurrent.futures does: no cycle through the traceback
