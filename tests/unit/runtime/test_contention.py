"""Several processes on one holon home (issue 9): a second real process holds the SQLite write lock.

The lock holder is a real Python process running ``BEGIN IMMEDIATE`` on the home's database; the
runtime under test is a real runtime with its real store. Nothing is mocked.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from _support import eventually, ok, read_db

from holon_nb.runtime import Runtime, RuntimeSettings
from holon_nb.runtime.core._loop import THREAD_NAME
from holon_nb.tools._errors import RuntimeStartupError

_HOLDER = textwrap.dedent("""
    import sqlite3, sys, time
    db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
    db.execute("BEGIN IMMEDIATE")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    sys.stdin.readline()
    db.execute("COMMIT")
    print("released", flush=True)
""")


@contextmanager
def lock_held(db_path: Path, seconds: float = 0) -> Iterator[subprocess.Popen[str]]:
    """Another process holds the write lock of ``db_path`` (yields once it holds it) for at least ``seconds``
    and until the block is left: the lock is released by the test, never by a clock running out."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(db_path), str(seconds)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        yield proc
    finally:
        assert proc.stdin is not None
        proc.stdin.close()  # end of file: the holder commits
        proc.wait(timeout=seconds + 60)


@pytest.mark.slow
def test_twelve_second_lock_while_a_task_ends_a_timer_is_due_and_a_call_is_in_flight(
    tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    db_path = home / "holon.sqlite3"
    # a short bound, so the in-flight call and the background writes all run past it and must retry
    rt = Runtime(
        home=home, workspace=workspace, settings=RuntimeSettings(store_busy_timeout_s=3.0, memory_index_interval_s=0.5)
    )
    try:
        timer_id = ok(rt.call("CreateTimer", {"duration_ms": 200, "interval_ms": 1000}))["timer"]["id"]
        fires = lambda: read_db(db_path, "SELECT fire_count FROM timers WHERE id=?", (timer_id,))[0][0]  # noqa: E731
        eventually(lambda: fires() >= 1)
        handle = ok(rt.call("ExecCommand", {"cmd": "sleep 1; echo finished", "yield_time_ms": 0}))["task_handle"]
        task_id = handle["task_id"]
        with lock_held(db_path, 12) as holder:
            fired_while_locked = fires()
            # a call in flight while the lock is held: it answers (success or runtime_db_busy), never raises
            result = rt.call("CreateWorkItem", {"objective": "written while another kernel holds the lock"})
            env = result.envelope
            assert env["status"] == "success" or env["error"]["kind"] == "runtime_db_busy", env
            if env["status"] == "error":
                assert env["error"]["retryable"] is True and env["error"]["details"]["waited_s"] >= 2
            assert holder.poll() is None, "the lock was released before the call answered"
            status_while_locked = read_db(db_path, "SELECT status FROM tasks WHERE id=?", (task_id,))[0][0]
        assert status_while_locked == "running"  # its end could not be written yet
        # afterwards the runtime answers, the task's end is recorded, the timer fires again
        assert rt.status()["loop_thread_alive"] and rt.status()["loop_error"] is None
        task = eventually(
            lambda: (lambda t: t if t["status"] == "completed" else None)(
                ok(rt.call("TaskStatus", {"task_id": task_id}))["task"]
            )
        )
        assert task["command"]["exit_status"] == 0
        eventually(lambda: fires() >= fired_while_locked + 2)
        assert read_db(db_path, "SELECT status FROM timers WHERE id=?", (timer_id,))[0][0] == "active"
        # the in-flight call's execution record was kept and written once the lock was free
        eventually(
            lambda: (
                read_db(db_path, "SELECT COUNT(*) FROM tool_executions WHERE id=?", (result.execution_id,))[0][0] == 1
            )
        )
        assert ok(rt.call("ExecCommand", {"cmd": "echo after"}))["stdout_preview"] == "after"
        assert rt.status()["background_failures"] == 0  # every failure was caught where it happened
    finally:
        rt.close()


def test_a_call_waits_out_a_short_lock_and_succeeds(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    with Runtime(home=home, workspace=workspace, settings=RuntimeSettings(store_busy_timeout_s=120.0)) as rt:
        answers: list[object] = []
        call = threading.Thread(
            target=lambda: answers.append(rt.call("CreateWorkItem", {"objective": "after the lock"}))
        )
        with lock_held(home / "holon.sqlite3"):
            call.start()
            # it really waits for the other process: it retried, and has no answer while the lock is held
            eventually(lambda: rt.store._busy_retries >= 1, timeout=60)
            assert call.is_alive() and answers == []
        call.join(120)
        assert not call.is_alive()
        (result,) = answers
        assert ok(result)["work_item"]["objective"] == "after the lock"  # type: ignore[arg-type]


@pytest.mark.slow
def test_runtime_under_a_held_lock_raises_runtime_startup_error(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    Runtime(home=home, workspace=workspace).close()  # the database exists
    threads_before = sum(1 for t in threading.enumerate() if t.name == THREAD_NAME)
    with lock_held(home / "holon.sqlite3") as holder:
        with pytest.raises(RuntimeStartupError) as info:
            Runtime(home=home, workspace=workspace, settings=RuntimeSettings(store_busy_timeout_s=1.0))
        assert holder.poll() is None  # gave up at its bound: the holder lets go only when this block ends
    message = str(info.value)
    assert "holon.sqlite3" in message and "locked" in message and "store_busy_timeout_s" in message
    assert isinstance(info.value.__cause__, sqlite3.OperationalError)
    assert sum(1 for t in threading.enumerate() if t.name == THREAD_NAME) == threads_before
    with Runtime(home=home, workspace=workspace) as rt:  # once the lock is free, the home opens
        assert ok(rt.call("ExecCommand", {"cmd": "echo ok"}))["stdout_preview"] == "ok"
