"""The runtime thread: one anyio event loop with a blocking portal and a task group.

Started by :class:`LoopThread.start`, which returns once the loop is ready or
raises its startup error; :meth:`LoopThread.stop` is idempotent and joins the
thread (style.md §2.8–§2.9).
"""

from __future__ import annotations

import threading
from typing import Any, Awaitable, Callable

import anyio
from anyio.abc import TaskGroup
from anyio.from_thread import BlockingPortal

from ..tools.errors import RuntimeStartupError

__all__ = ["LoopThread", "THREAD_NAME"]

THREAD_NAME = "holon-nb-runtime"


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

    async def _amain(self) -> None:
        self._stop = anyio.Event()
        async with BlockingPortal() as portal, anyio.create_task_group() as tg:
            self.portal, self.task_group = portal, tg
            self._ready.set()
            await self._stop.wait()
            if self._on_stop is not None:
                with anyio.CancelScope(shield=True):
                    await self._on_stop()
            tg.cancel_scope.cancel()

    @property
    def alive(self) -> bool:
        """True while the loop thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def in_loop_thread(self) -> bool:
        """True when called from the loop thread itself."""
        return self._thread is not None and threading.current_thread() is self._thread

    def start_soon(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Start ``fn(*args)`` in the background task group. Call from the loop thread only."""
        assert self.task_group is not None
        self.task_group.start_soon(fn, *args)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the loop (running ``on_stop`` first) and join the thread. Idempotent."""
        if not self.alive or self.portal is None or self._stop is None:
            return
        try:
            self.portal.call(self._stop.set)
        except RuntimeError:
            pass
        assert self._thread is not None
        self._thread.join(timeout)
