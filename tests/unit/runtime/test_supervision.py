"""The supervised loop (issue 9): background failures never end it; a dead loop says why and recovers."""

from __future__ import annotations

import asyncio
import gc
import inspect
import logging
import os
import signal
import warnings
import weakref
from pathlib import Path

import pytest
from _support import eventually, ok

from holon_nb.runtime import Runtime
from holon_nb.runtime.core._loop import LoopThread
from holon_nb.runtime.tasks._process_groups import group_members
from holon_nb.tools._errors import RuntimeDied


def test_a_failing_background_coroutine_is_logged_and_the_loop_goes_on(rt: Runtime, caplog) -> None:
    async def broken() -> None:
        raise ValueError("background bug")

    logger = logging.getLogger("holon_nb.runtime.loop")  # directly: the notebook layer may stop propagation
    # another test in the same worker may have configured logging (a dictConfig disables existing loggers)
    was_disabled, was_level = logger.disabled, logger.level
    logger.disabled = False
    logger.setLevel(logging.ERROR)
    logger.addHandler(caplog.handler)
    try:
        rt._loop.portal.call(rt._loop.start_soon, broken)
        eventually(lambda: rt.status()["background_failures"] == 1)
    finally:
        logger.removeHandler(caplog.handler)
        logger.disabled, logger.level = was_disabled, was_level
    assert "background bug" in caplog.text and "Traceback" in caplog.text
    assert ok(rt.call("ExecCommand", {"cmd": "echo alive"}))["stdout_preview"] == "alive"
    assert rt.status()["loop_error"] is None


def test_background_work_started_as_the_loop_stops_leaves_no_unawaited_coroutine() -> None:
    # seen with the records writer's retry at close: anyio (>= 4.14) runs each task's coroutine inside a
    # wrapper, and a task cancelled before its first step never awaits (or closes) the coroutine it wraps
    ran = []

    async def background() -> None:
        ran.append(True)

    loop = LoopThread()

    async def on_stop() -> None:
        loop.start_soon(background)
        # cancelled before its first step, as asyncio's runner cancels what is left when a loop ends
        for task in asyncio.all_tasks():
            if inspect.getcoroutinestate(task.get_coro()) == inspect.CORO_CREATED:
                task.cancel()

    loop.start(on_stop=on_stop)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loop.stop()
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)], [str(w.message) for w in caught]
    assert ran == [] and loop.background_failures == 0 and loop.death is None


def test_a_dead_loop_raises_runtime_died_naming_the_cause_and_a_new_runtime_recovers(
    tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    rt = Runtime(home=home, workspace=workspace)
    handle = ok(rt.call("ExecCommand", {"cmd": "sleep 300", "yield_time_ms": 0}))["task_handle"]

    async def fatal() -> None:
        raise RuntimeError("injected loop fault")

    # bypass the supervisor on purpose: this is what "the loop dies anyway" looks like
    tg = rt._loop.task_group
    assert tg is not None

    def inject() -> None:
        tg.start_soon(fatal)

    rt._loop.portal.call(inject)
    eventually(lambda: not rt._loop.alive)
    with pytest.raises(RuntimeDied) as info:
        rt.call("ExecCommand", {"cmd": "echo hi"})
    assert "injected loop fault" in str(info.value) and "%reload_ext holon_nb" in str(info.value)
    assert isinstance(info.value.cause, BaseException)
    status = rt.status()  # %holon status shows it
    assert status["loop_thread_alive"] is False and "injected loop fault" in status["loop_error"]
    rt.close()  # a dead runtime still closes, and ends the process groups it started
    with Runtime(home=home, workspace=workspace) as again:
        assert ok(again.call("ExecCommand", {"cmd": "echo recovered"}))["stdout_preview"] == "recovered"
        task = ok(again.call("TaskStatus", {"task_id": handle["task_id"]}))["task"]
        assert task["status"] == "interrupted"  # reconciled as after a restart (D7), not left running


def _pids_running(marker: str) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as fh:
                    if marker.encode() in fh.read().replace(b"\0", b" "):
                        out.append(int(name))
            except OSError:
                pass
    return out


def test_a_closed_runtime_is_freed(tmp_path: Path, workspace: Path) -> None:
    # the exit-time finalizer held the loop, whose on_stop held the runtime: every closed runtime
    # (each %reload_ext) stayed in memory with what it cached
    def run_and_close() -> weakref.ref:
        with Runtime(home=tmp_path / "home", workspace=workspace) as rt:
            assert ok(rt.call("ExecCommand", {"cmd": "echo hi"}))["stdout_preview"] == "hi"
            rt.call("ListWorkItems", {})
            return weakref.ref(rt)

    ref = run_and_close()

    def freed() -> bool:
        gc.collect()
        return ref() is None

    # a thread that outlives close() by a moment (a worker finishing its last read under load) may still hold a
    # frame that refers to the runtime: wait for that, and when it never happens name what holds it
    try:
        eventually(freed, timeout=30, step=0.2)
    except AssertionError:
        rt = ref()
        holders = [type(r).__name__ for r in gc.get_referrers(rt)] if rt is not None else []
        raise AssertionError(f"the closed runtime is still referred to by {holders}") from None


def test_close_ends_a_group_whose_leader_exited_and_the_receipt_says_so(tmp_path: Path, workspace: Path) -> None:
    rt = Runtime(home=tmp_path / "home", workspace=workspace)
    try:
        r = rt.call("ExecCommand", {"cmd": "(sleep 1007 &); echo done"})
        result = ok(r)
        assert result["stdout_preview"] == "done" and result["exit_status"] == 0
        assert result["process_group_alive"] is True and result["process_group_members"] == 1
        assert "still run in its process group" in r.receipt and "still run" in result.get(
            "summary_text", r.envelope["summary_text"]
        )
        pids = _pids_running("sleep 1007")
        assert len(pids) == 1
    finally:
        rt.close()
    eventually(lambda: not _pids_running("sleep 1007"), timeout=5)


def test_a_clean_command_says_nothing_about_its_group(rt: Runtime) -> None:
    result = ok(rt.call("ExecCommand", {"cmd": "echo plain"}))
    assert "process_group_alive" not in result


def test_task_stop_ends_the_group_of_a_task_whose_leader_exited(rt: Runtime) -> None:
    handle = ok(rt.call("ExecCommand", {"cmd": "(sleep 1008 &); echo bg", "yield_time_ms": 0}))["task_handle"]
    eventually(lambda: ok(rt.call("TaskStatus", {"task_id": handle["task_id"]}))["task"]["status"] == "completed")
    assert len(_pids_running("sleep 1008")) == 1
    stopped = rt.call("TaskStop", {"task_id": handle["task_id"]})
    result = ok(stopped)
    assert result["stop_requested"] is False  # AC-28-30: the task itself had already ended
    assert "ended the processes left in its group" in stopped.envelope["summary_text"]
    eventually(lambda: not _pids_running("sleep 1008"), timeout=5)


def test_group_members_sees_only_live_members_of_that_group() -> None:
    if os.getsid(0) != os.getpgrp():  # our group is no session's: it is not a command's group, so no members
        assert group_members(os.getpgrp()) == []
    else:  # run under setsid (nohup setsid, a CI runner): the group is a session's, and we are in it
        assert os.getpid() in group_members(os.getpgrp())
    import subprocess

    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert group_members(child.pid) == [child.pid]
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()  # reaped: no zombie left in the group
    assert group_members(child.pid) == []
