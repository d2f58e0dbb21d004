"""``LoopThread.call``: a call from another thread gets the coroutine's result or exception, a call the loop's
stop cancels says so, and Ctrl-C while it waits cancels the coroutine (issue 27 item 7 made the hand-back
leaner; these pin what it hands back)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import signal
import threading
import time

import pytest

from holon_nb.runtime.core._loop import LoopThread


@pytest.fixture
def loop_thread():
    lt = LoopThread()
    lt.start()
    yield lt
    lt.stop()


def test_the_result_and_the_exception_come_back(loop_thread: LoopThread) -> None:
    async def add(a: int, b: int) -> int:
        await asyncio.sleep(0)
        return a + b

    boom = ValueError("boom")

    async def fail() -> None:
        raise boom

    assert loop_thread.call(add, 2, 3) == 5
    with pytest.raises(ValueError) as raised:
        loop_thread.call(fail)
    assert raised.value is boom
    assert loop_thread.calls_in_flight == 0


def test_calls_from_several_threads_each_get_their_own_answer(loop_thread: LoopThread) -> None:
    async def echo(value: int) -> int:
        await asyncio.sleep(0.001)
        return value

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda v: loop_thread.call(echo, v), range(40)))
    assert got == list(range(40))


def test_a_call_the_stop_cancels_raises_cancelled_error() -> None:
    lt = LoopThread()
    lt.start()
    started = threading.Event()

    async def forever() -> None:
        started.set()
        await asyncio.sleep(3600)

    outcome: list[BaseException] = []

    def caller() -> None:
        try:
            lt.call(forever)
        except BaseException as exc:  # noqa: BLE001 - the test records what came back
            outcome.append(exc)

    thread = threading.Thread(target=caller)
    thread.start()
    assert started.wait(5)
    lt.stop()
    thread.join(5)
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], concurrent.futures.CancelledError)


def test_ctrl_c_while_waiting_cancels_the_coroutine(loop_thread: LoopThread) -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    started, cancelled = threading.Event(), threading.Event()

    async def slow() -> None:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupt)
    main = threading.main_thread().ident
    assert main is not None
    # to the main thread itself: its wait is what the signal interrupts
    timer = threading.Thread(
        target=lambda: (started.wait(5), time.sleep(0.05), signal.pthread_kill(main, signal.SIGINT))
    )
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            loop_thread.call(slow)
    finally:
        timer.join(5)
        signal.signal(signal.SIGINT, previous)
    assert cancelled.wait(5)
