"""A read answers while another process holds the home's write lock (issue 25: ``GetWorkItem`` p99 418 ms).

Another real process holds ``BEGIN IMMEDIATE`` on the home's database until the test lets it go. Meanwhile a
foreground write (``CreateWorkItem``) and a trigger wake wait for the lock, a command task ends, a repeating
timer comes due and every call queues its execution record: writes that used to wait on the runtime's loop
thread, holding up every call there. ``GetWorkItem`` must answer while the lock is still held, and once it is
released every one of those writes must be in the database. Nothing is mocked; no wall-clock threshold: the
lock is held until the test ends it, and waits are events with generous timeouts.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def _in_thread(fn: Any) -> tuple[threading.Thread, list[Any], threading.Event]:
    """Run ``fn()`` in a thread; its result (or exception) lands in the list, then the event is set."""
    out: list[Any] = []
    done = threading.Event()

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            out.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out, done


def _wake(url: str) -> int:
    req = urllib.request.Request(url, data=b'{"n": 1}', method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as answer:
        return int(answer.status)


def test_get_work_item_answers_while_another_process_holds_the_write_lock_and_nothing_written_meanwhile_is_lost(
    tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    db = home / "holon.sqlite3"
    settings = RuntimeSettings(store_busy_timeout_s=120.0)  # the waiting writes outlast the lock, never give up
    with Runtime(home=home, workspace=workspace, settings=settings) as rt:
        probe = ok(rt.call("CreateWorkItem", {"objective": "the probe"}))["work_item"]["id"]
        timer = ok(rt.call("CreateTimer", {"duration_ms": 1000, "interval_ms": 1000, "summary": "tick"}))["timer"]["id"]
        fires = lambda: read_db(db, "SELECT fire_count FROM timers WHERE id=?", (timer,))[0][0]  # noqa: E731
        eventually(lambda: fires() >= 1, timeout=60)
        url = ok(rt.call("CreateExternalTrigger", {"delivery_mode": "wake_hint"}))["trigger_url"]
        marker = workspace / "task-ran"
        task = ok(
            rt.call("ExecCommand", {"cmd": f"read x; touch {marker}", "yield_time_ms": 0, "accepts_input": True})
        )["task_handle"]["task_id"]
        rt.store.flush_executions()
        with _foreign_write_lock(db) as holder:
            fired_before = fires()
            retries = rt.store.stats()["busy_retries"]
            # the task ends and the timer comes due; a foreground write and a wake wait for the lock
            ok(rt.call("TaskInput", {"task_id": task, "input": "go\n"}))
            eventually(marker.exists, timeout=60)
            create, created, create_done = _in_thread(
                lambda: rt.call("CreateWorkItem", {"objective": "written once the lock is free"})
            )
            waker, woke, wake_done = _in_thread(lambda: _wake(url))
            eventually(lambda: rt.store.stats()["busy_retries"] >= retries + 3, timeout=60)

            reader, got, got_done = _in_thread(lambda: rt.call("GetWorkItem", {"work_item_id": probe}))
            assert got_done.wait(60), "GetWorkItem did not answer while another process held the write lock"
            assert ok(got[0])["work_item"]["id"] == probe
            # by construction still held (the holder lets go only when this block ends), and the writes still wait
            assert holder.poll() is None
            assert not create_done.is_set() and not wake_done.is_set()
            status_while_locked = read_db(db, "SELECT status FROM tasks WHERE id=?", (task,))[0][0]
            read_id = got[0].execution_id

        # released: every write made meanwhile lands
        assert create_done.wait(120) and wake_done.wait(120)
        created_item = ok(created[0])["work_item"]
        assert read_db(db, "SELECT objective FROM work_items WHERE id=?", (created_item["id"],)) == [
            ("written once the lock is free",)
        ]
        assert woke == [202]
        assert read_db(db, "SELECT SUM(delivery_count) FROM external_triggers")[0][0] == 1
        assert status_while_locked == "running"  # its end could not be written while locked ...
        eventually(lambda: read_db(db, "SELECT status FROM tasks WHERE id=?", (task,))[0][0] == "completed", 60)
        assert read_db(db, "SELECT COUNT(*) FROM messages WHERE origin_task_id=? AND kind='TaskResult'", (task,)) == [
            (1,)
        ]  # ... and is written after, with its result message
        eventually(lambda: fires() >= fired_before + 1, timeout=60)
        for execution_id in (read_id, created[0].execution_id):
            eventually(
                lambda eid=execution_id: (
                    read_db(db, "SELECT COUNT(*) FROM tool_executions WHERE id=?", (eid,))[0][0] == 1
                ),
                timeout=60,
            )
        stats = rt.store.stats()
        assert stats["loop_lock_waits"] == 0, stats[
            "loop_lock_wait_where"
        ]  # nothing slept on the loop thread waiting for the lock
        assert rt.status()["background_failures"] == 0
        for thread in (create, waker, reader):
            thread.join(10)
