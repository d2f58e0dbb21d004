"""A direct ExecCommand starts its command on the calling thread, and its call on the loop adopts it (issue 27
item 7: the loop thread's wake-up was on every command's path). Nothing runs that the call does not run:
a command its call did not adopt is killed and reaped, and a call that may give back a running task, or
whose arguments, directory or shell snapshot are not ready, starts nothing early."""

from __future__ import annotations

import concurrent.futures
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from _support import ok

from holon_nb import Runtime

SH = {"shell": "sh", "login": False}


class BlockedLoop:
    """The runtime's loop thread held in a callback until :meth:`release` (at the test's end in any case)."""

    def __init__(self, rt: Runtime) -> None:
        self._release, holding = threading.Event(), threading.Event()

        async def hold() -> None:
            holding.set()
            self._release.wait(30)  # blocks the loop thread itself: no call reaches a handler meanwhile

        self._held = rt._loop.submit(hold)
        assert holding.wait(30)

    @property
    def held(self) -> bool:
        return not self._held.done()

    def release(self) -> None:
        self._release.set()
        self._held.result(30)


@pytest.fixture
def blocked_loop(rt: Runtime) -> Iterator[BlockedLoop]:
    rt.call("ExecCommand", {"cmd": "true", **SH})  # the default agent is known: its calls may start early
    blocked = BlockedLoop(rt)
    try:
        yield blocked
    finally:
        blocked.release()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_the_command_starts_before_the_loop_runs_its_call(
    rt: Runtime, workspace: Path, blocked_loop: BlockedLoop
) -> None:
    marker = workspace / "started"
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        call = pool.submit(rt.call, "ExecCommand", {"cmd": f"touch {marker}; echo out", **SH})
        while not marker.exists() and blocked_loop.held:
            threading.Event().wait(0.005)
        # the command ran while the loop thread was held: only the calling thread can have started it
        assert marker.exists() and blocked_loop.held and not call.done()
        blocked_loop.release()
        result = ok(call.result(30))
    assert (result["disposition"], result["exit_status"], result["stdout_preview"]) == ("completed", 0, "out")


@pytest.mark.parametrize(
    ("args", "agent", "context"),
    [
        ({"cmd": "touch never", "workdir": "no/such/dir", **SH}, None, None),  # the call fails: workdir_not_found
        ({"cmd": "touch never", "bogus": 1, **SH}, None, None),  # invalid_tool_input
        ({"cmd": "touch never", **SH}, "someone_new", None),  # an agent this runtime does not know yet
        ({"cmd": "touch never", **SH}, None, {"brief": "x"}),  # an execution context: the loop's path
        ('{"cmd": "touch never"}', None, None),  # JSON text: parsed on the loop
    ],
)
def test_calls_that_start_nothing_early(
    rt: Runtime, workspace: Path, args: object, agent: str | None, context: dict | None, blocked_loop: BlockedLoop
) -> None:
    assert rt._start_early("ExecCommand", args, agent, context) is None
    assert not (workspace / "never").exists()


def test_a_running_task_keeps_reusable_calls_on_the_loop(rt: Runtime, workspace: Path) -> None:
    rt.call("ExecCommand", {"cmd": "true", **SH})
    task = ok(rt.call("ExecCommand", {"cmd": "sleep 30", "yield_time_ms": 50, **SH}))["task_handle"]["task_id"]
    try:
        # an identical call may be given this task back, which only the handler can tell
        assert rt._start_early("ExecCommand", {"cmd": "touch never", **SH}, None, None) is None
        early = rt._start_early("ExecCommand", {"cmd": "true", "duplicate_policy": "start_new", **SH}, None, None)
        assert early is not None and early.handle.abandon()
    finally:
        rt.call("TaskStop", {"task_id": task})
    assert not (workspace / "never").exists()


def test_a_login_command_waits_on_the_loop_while_its_snapshot_is_captured(
    rt: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # an empty profile: never the machine's own login shell
    rt.call("ExecCommand", {"cmd": "true", **SH})
    gate = threading.Event()
    snapshots = rt.tasks.snapshots
    capture = snapshots._capture
    snapshots._capture = lambda entry, cwd, env: (gate.wait(30), capture(entry, cwd, env))
    snapshots._entries.clear()  # the next login command finds no capture, and starts one
    try:
        assert rt._start_early("ExecCommand", {"cmd": "true", "shell": "bash"}, None, None) is None
    finally:
        gate.set()


def test_a_command_its_call_did_not_adopt_is_killed_and_reaped(rt: Runtime) -> None:
    rt.call("ExecCommand", {"cmd": "true", **SH})
    args = {"cmd": "sleep 30", "yield_time_ms": 50, **SH}
    early = rt._start_early("ExecCommand", args, None, None)
    assert early is not None
    pid = early.handle._popen.pid
    # between the two threads, another call started the same command as a task: this call is given it back
    task = ok(rt.call("ExecCommand", args))["task_handle"]["task_id"]
    try:
        again = ok(rt._loop.call(rt._call, "ExecCommand", args, None, None, early))
        assert again["task_handle"]["task_id"] == task  # the handler reused the task and started nothing
        assert early.handle.abandon() and _gone(pid)
        assert not early.handle.abandon()  # once
    finally:
        rt.call("TaskStop", {"task_id": task})


def test_an_adopted_command_is_not_abandoned(rt: Runtime) -> None:
    rt.call("ExecCommand", {"cmd": "true", **SH})
    early = rt._start_early("ExecCommand", {"cmd": "echo mine", **SH}, None, None)
    assert early is not None
    result = ok(rt._loop.call(rt._call, "ExecCommand", {"cmd": "echo mine", **SH}, None, None, early))
    assert result["stdout_preview"] == "mine"
    assert not early.handle.abandon()


def test_calls_from_several_threads_each_run_their_own_command(rt: Runtime) -> None:
    rt.call("ExecCommand", {"cmd": "true", **SH})

    def run(i: int) -> tuple[str, int]:
        r = ok(rt.call("ExecCommand", {"cmd": f"echo {i}; exit {i % 3}", **SH}))
        return r["stdout_preview"], r["exit_status"]

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(run, range(40)))
    assert got == [(str(i), i % 3) for i in range(40)]
    assert _zombies() == []  # every command was reaped


def _zombies() -> list[str]:
    """This process's children that exited and were not reaped."""
    found = []
    for thread in os.listdir(f"/proc/{os.getpid()}/task"):
        for pid in Path(f"/proc/{os.getpid()}/task/{thread}/children").read_text().split():
            try:
                if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                    found.append(pid)
            except OSError:
                continue
    return found
