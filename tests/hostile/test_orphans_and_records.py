"""Durability and orphans (issue 25 item 4): what a locked home or a SIGKILL must not lose or leave running.

(a) A call that returns while another process holds the home's write lock queues its execution record; the
record is retried until it is written, with no later call needed (it used to wait for the next write, so a
SIGKILL lost it). (b) A command still inside its foreground yield window when its runtime is SIGKILLed has no
task record; the runtime records its process group before the first wait, and the next runtime on the home
ends what the dead one left. Real SQLite locks held by a real second process, a real runtime in a real child
process killed with SIGKILL, real ``sleep`` commands; nothing is mocked.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

from _support import eventually, ok, read_db

from holon_nb.runtime import Runtime, RuntimeSettings

_LOCKER = textwrap.dedent("""
    import sqlite3, sys
    db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
    db.execute("BEGIN IMMEDIATE")
    print("locked", flush=True)
    sys.stdin.readline()
    db.execute("ROLLBACK")
    db.close()
""")


@contextlib.contextmanager
def _foreign_write_lock(db_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the home's write lock (``BEGIN IMMEDIATE``) until the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _LOCKER, str(db_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        yield proc
    finally:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write("\n")
            proc.stdin.flush()
        proc.wait(timeout=60)


def _recorded(home: Path, execution_id: str) -> bool:
    return bool(
        read_db(home / "holon.sqlite3", "SELECT COUNT(*) FROM tool_executions WHERE id=?", (execution_id,))[0][0]
    )


def test_a_record_deferred_by_a_foreign_write_lock_is_written_once_the_lock_goes(
    tmp_path: Path, workspace: Path
) -> None:
    """Item 4(a): no later call, no close: the retry alone writes it (the memory indexer, which would also
    write the queue, is off)."""
    settings = RuntimeSettings(memory_index_interval_s=0, store_busy_timeout_s=2)
    with Runtime(home=tmp_path / "home", workspace=workspace, settings=settings) as rt:
        ok(rt.call("ExecCommand", {"cmd": "true"}))  # the first command records the workspace state
        rt.store.flush_executions()
        with _foreign_write_lock(rt.home / "holon.sqlite3"):
            before = rt.store.stats()["busy_refusals"]
            result = rt.call("ExecCommand", {"cmd": "echo under-a-foreign-lock"})
            ok(result)
            assert not _recorded(rt.home, result.execution_id)
            # held until the loop's first attempt to write the row gave up, and a later one did too
            eventually(lambda: rt.store.stats()["busy_refusals"] >= before + 2, timeout=30)
        eventually(lambda: _recorded(rt.home, result.execution_id), timeout=30)
        assert rt._loop.background_failures == 0
        # and a second lock later is retried the same way (retries did not stay off after the first)
        with _foreign_write_lock(rt.home / "holon.sqlite3"):
            before = rt.store.stats()["busy_refusals"]
            again = rt.call("ExecCommand", {"cmd": "echo again"})
            eventually(lambda: rt.store.stats()["busy_refusals"] >= before + 2, timeout=30)
        eventually(lambda: _recorded(rt.home, again.execution_id), timeout=30)
        assert rt._loop.background_failures == 0


_KILLED_RUNTIME = textwrap.dedent("""
    import sys, threading
    from holon_nb.runtime import Runtime
    rt = Runtime(home=sys.argv[1], workspace=sys.argv[2])
    threading.Thread(target=rt.call, args=("ExecCommand", {"cmd": sys.argv[3], "yield_time_ms": 600_000})).start()
    print("calling", flush=True)
    threading.Event().wait()
""")


def _pids_running(argv: list[str]) -> list[int]:
    """Pids whose command line is exactly ``argv``."""
    want = ("\0".join(argv) + "\0").encode()
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if Path(f"/proc/{name}/cmdline").read_bytes() == want:
                    found.append(int(name))
            except OSError:
                pass
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_command_in_its_yield_window_is_ended_by_the_next_runtime_after_a_sigkill(
    tmp_path: Path, workspace: Path
) -> None:
    """Item 4(b): ``sleep`` runs in its own session, so it survives its runtime's SIGKILL; the next runtime
    on the home ends it (its group was recorded before the runtime's first wait for it)."""
    home = tmp_path / "home"
    seconds = f"600.{secrets.randbelow(10**6):06d}"  # a command line no other process has
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_RUNTIME, str(home), str(workspace), f"sleep {seconds}"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "SHELL": "/bin/sh"},
    )
    sleeps: list[int] = []
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "calling"
        sleeps = eventually(lambda: _pids_running(["sleep", seconds]), timeout=60)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        assert all(_alive(pid) for pid in sleeps)  # the kill alone leaves the command running
        with Runtime(home=home, workspace=workspace):
            eventually(lambda: not any(_alive(pid) for pid in sleeps), timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=60)
        for pid in sleeps:  # a failing run must not leave the sleep behind
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(os.getpgid(pid), signal.SIGKILL)
