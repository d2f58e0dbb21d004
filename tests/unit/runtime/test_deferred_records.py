"""Issue 12: a call's execution record is written off its path, and reads every command makes are cached.

A tool call made on the runtime's loop queues its ``tool_executions`` row (``Store.record_execution(defer=True)``);
the loop writes it a millisecond later when no other call is in flight (else when a look every 50 ms finds
none, a quarter second later at most), and any read of the table in this process, any transaction and
``close`` write it first. ``Store.version()`` leaves those rows and the memory index out, so the reads
cached under it (the workspace projection, the agent's active tasks) outlive a call, and still see a change
made by another process on the home. Real runtimes, real SQLite connections and real second processes;
nothing is mocked.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from _support import eventually, ok, read_db

from holon_nb.render import Scrubber
from holon_nb.runtime import Runtime, RuntimeSettings
from holon_nb.runtime.core import _records as records


def _record(execution_id: str) -> dict:
    return {
        "id": execution_id,
        "agent_id": "default",
        "tool_name": "ExecCommand",
        "status": "success",
        "args": "{}",
        "envelope": "{}",
        "receipt": "done",
        "duration_ms": 1,
    }


def test_a_deferred_record_is_read_back_at_once_and_reaches_other_connections(rt: Runtime) -> None:
    result = rt.call("ExecCommand", {"cmd": "echo recorded"})
    # this process reads it at once: a query that names the table writes the queue first
    row = rt.store.execution(result.execution_id)
    assert row is not None and row["tool_name"] == "ExecCommand" and "recorded" in row["envelope"]
    assert rt.store.deferred_executions == 0
    # another connection sees it without any further call from this one: the loop wrote it
    second = rt.call("ExecCommand", {"cmd": "true"})
    eventually(
        lambda: (
            read_db(
                rt.home / "holon.sqlite3", "SELECT COUNT(*) FROM tool_executions WHERE id=?", (second.execution_id,)
            )[0][0]
            == 1
        ),
        timeout=5,
    )
    assert rt.store.deferred_executions == 0


def test_records_keep_their_order_and_time_of_call(rt: Runtime) -> None:
    ids = [rt.call("ExecCommand", {"cmd": f"echo {i}"}).execution_id for i in range(5)]
    rows = rt.store.query("SELECT id, created_at FROM tool_executions ORDER BY rowid")
    assert [r["id"] for r in rows][-5:] == ids
    stamps = [r["created_at"] for r in rows][-5:]
    assert stamps == sorted(stamps) and all(s.endswith("Z") for s in stamps)


def test_close_writes_what_is_still_queued(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    rt = Runtime(home=home, workspace=workspace)
    rt.store.record_execution(_record("tool_0000000000000a1"), defer=True)
    assert rt.store.deferred_executions == 1
    rt.close()
    assert read_db(home / "holon.sqlite3", "SELECT receipt FROM tool_executions WHERE id='tool_0000000000000a1'") == [
        ("done",)
    ]


def test_a_rolled_back_transaction_keeps_the_queue(rt: Runtime) -> None:
    rt.store.record_execution(_record("tool_0000000000000b1"), defer=True)
    with pytest.raises(RuntimeError):
        with rt.store.tx():
            raise RuntimeError("the caller's transaction fails")
    assert rt.store.deferred_executions == 1  # written in that transaction, rolled back with it, still queued
    rt.store.flush_executions()
    assert rt.store.execution("tool_0000000000000b1")["receipt"] == "done"


def test_an_id_recorded_twice_is_dropped_not_left_to_fail_every_transaction(
    rt: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    rt.store.record_execution(_record("tool_0000000000000c1"))
    rt.store.record_execution({**_record("tool_0000000000000c1"), "receipt": "again"}, defer=True)
    rt.store.record_execution(_record("tool_0000000000000c2"), defer=True)
    with caplog.at_level(logging.WARNING, logger="holon_nb.runtime.core._store"):
        rt.store.flush_executions()
    assert "tool_0000000000000c1 is recorded already" in caplog.text
    assert rt.store.deferred_executions == 0
    assert rt.store.execution("tool_0000000000000c1")["receipt"] == "done"  # the first one stays
    assert rt.store.execution("tool_0000000000000c2") is not None  # the one after it went in
    assert ok(rt.call("CreateWorkItem", {"objective": "the store still writes"}))


def test_the_version_does_not_move_with_execution_records_but_does_with_other_writes(rt: Runtime) -> None:
    ok(rt.call("ExecCommand", {"cmd": "true"}))
    rt.store.flush_executions()
    before = rt.store.version()
    for _ in range(3):
        ok(rt.call("ExecCommand", {"cmd": "true"}))
    rt.store.flush_executions()
    assert rt.store.version() == before  # foreground commands wrote nothing but their records
    ok(rt.call("CreateWorkItem", {"objective": "a real change"}))
    assert rt.store.version() != before


def test_the_memory_indexer_does_not_move_the_version(rt: Runtime) -> None:
    for i in range(3):
        ok(rt.call("ExecCommand", {"cmd": f"echo indexed-{i}"}))
    rt.store.flush_executions()
    before = rt.store.version()
    status = rt.memory.catch_up()  # the background indexer's pass, run here
    assert status is not None and status["lag"] == 0
    assert rt.store.query("SELECT COUNT(*) FROM memory_cursors")[0][0] > 0  # it did write the index
    assert rt.store.version() == before  # and the cached reads (projection, active tasks) outlive it
    hits = rt.call("MemorySearch", {"query": "indexed-1"})
    ok(hits)
    assert "indexed-1" in hits.receipt


_SWITCH = textwrap.dedent("""
    import sys
    from holon_nb.runtime import Runtime
    with Runtime(home=sys.argv[1], workspace=sys.argv[2]) as rt:
        result = rt.call("SwitchWorkspace", {"path": sys.argv[3]})
        assert result.ok, result.envelope
""")


def test_the_cached_projection_follows_a_switch_made_by_another_process(rt: Runtime, workspace: Path) -> None:
    sub = workspace / "elsewhere"
    sub.mkdir()
    assert ok(rt.call("ExecCommand", {"cmd": "pwd"}))["stdout_preview"] == os.path.realpath(workspace)
    assert ok(rt.call("ExecCommand", {"cmd": "pwd"}))["stdout_preview"] == os.path.realpath(workspace)  # cached
    subprocess.run(
        [sys.executable, "-c", _SWITCH, str(rt.home), str(workspace), str(sub)],
        check=True,
        env={**os.environ, "SHELL": "/bin/sh"},
        timeout=120,
    )
    assert ok(rt.call("ExecCommand", {"cmd": "pwd"}))["stdout_preview"] == os.path.realpath(sub)


def test_the_cached_projection_is_repaired_when_its_directory_vanishes(rt: Runtime, workspace: Path) -> None:
    sub = workspace / "gone"
    sub.mkdir()
    ok(rt.call("SwitchWorkspace", {"path": str(sub)}))
    assert ok(rt.call("ExecCommand", {"cmd": "pwd"}))["stdout_preview"] == os.path.realpath(sub)
    sub.rmdir()  # no write to the store: the cached entry is still current, its directory is not
    assert ok(rt.call("ExecCommand", {"cmd": "pwd"}))["stdout_preview"] == os.path.realpath(workspace)
    state = ok(rt.call("GetWorkspaceState", {}))
    assert state["projection_repair"]["reason"] == "cwd_missing"


_DUPLICATE = textwrap.dedent("""
    import sys, time
    from holon_nb.runtime import Runtime
    with Runtime(home=sys.argv[1], workspace=sys.argv[2]) as rt:
        result = rt.call("ExecCommand", {"cmd": "sleep 30", "yield_time_ms": 0})
        print(result.envelope["result"]["task_handle"]["task_id"], flush=True)
        sys.stdin.readline()
""")


def test_a_command_another_kernel_runs_is_listed_but_not_reused(rt: Runtime, workspace: Path) -> None:
    # the cached active tasks see the other process's task (ListTasks), and an identical ExecCommand
    # here still runs its own: two notebook tests running one command on one home both run it
    args = {"cmd": "sleep 30", "duplicate_policy": "reuse_running", "yield_time_ms": 0}
    assert ok(rt.call("ListTasks", {}))["tasks"] == []
    other = subprocess.Popen(
        [sys.executable, "-c", _DUPLICATE, str(rt.home), str(workspace)],
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "SHELL": "/bin/sh"},
    )
    try:
        assert other.stdout is not None
        theirs = other.stdout.readline().strip()
        assert theirs.startswith("task_")
        assert [t["id"] for t in ok(rt.call("ListTasks", {}))["tasks"]] == [theirs]
        first = ok(rt.call("ExecCommand", args))
        assert first["disposition"] == "promoted_to_task" and first["task_handle"]["task_id"] != theirs
        again = ok(rt.call("ExecCommand", args))  # this runtime's own task is reused, as before
        assert again["disposition"] == "already_running"
        assert again["task_handle"]["task_id"] == first["task_handle"]["task_id"]
        ok(rt.call("TaskStop", {"task_id": first["task_handle"]["task_id"]}))
    finally:
        assert other.stdin is not None
        other.stdin.write("\n")
        other.stdin.flush()
        other.wait(timeout=60)


def test_a_deferred_row_is_scrubbed_as_it_is_written(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """D6 at rest: the store scrubs every text it writes, the deferred rows included (defence in depth:
    the runtime hands it scrubbed text already)."""
    monkeypatch.setenv("DEFERRED_TEST_API_KEY", "sk-deferred-secret-0123456789")
    with Runtime(home=tmp_path / "home", workspace=workspace) as rt:
        rt.store.record_execution(
            {**_record("tool_0000000000000d1"), "receipt": "key sk-deferred-secret-0123456789 leaked"}, defer=True
        )
        rt.store.flush_executions()
        assert rt.store.execution("tool_0000000000000d1")["receipt"] == "key [redacted] leaked"


def test_a_row_the_call_scrubbed_is_scrubbed_again_only_when_the_scrubber_changed(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call's record says which scrubber its texts went through (``scrubbed_by``); the write does not scrub
    those a second time with the same one (issue 27 item 7), but scrubs every text again when the scrubber
    changed before the row was written (a secret variable set meanwhile)."""
    leaked = {"receipt": "key sk-later-secret-0123456789 leaked", "args": '{"cmd":"echo sk-later-secret-0123456789"}'}
    with Runtime(home=tmp_path / "home", workspace=workspace) as rt:
        before = rt.scrubber()  # knows no such secret
        rt.store.record_execution(
            {**_record("tool_0000000000000d2"), **leaked, "scrubbed_by": (before, ("args", "receipt"))}, defer=True
        )
        monkeypatch.setenv("LATER_TEST_API_KEY", "sk-later-secret-0123456789")
        now = rt.scrubber()
        assert now is not before
        seen: list[str] = []
        monkeypatch.setattr(now, "text", lambda text: seen.append(text) or Scrubber.text(now, text))
        record = {**_record("tool_0000000000000d3"), "scrubbed_by": (now, ("args", "envelope", "receipt"))}
        rt.store.record_execution(record, defer=True)
        rt.store.flush_executions()
        row = rt.store.execution("tool_0000000000000d2")
        assert (row["receipt"], row["args"]) == ("key [redacted] leaked", '{"cmd":"echo [redacted]"}')
        assert rt.store.execution("tool_0000000000000d3")["receipt"] == "done"
        # the first row: every text, scrubbed anew; the second: its id, agent, tool, status and time only
        assert leaked["receipt"] in seen and seen.count("{}") == 1 and "done" not in seen, seen
        assert seen[-5:-1] == ["tool_0000000000000d3", "default", "ExecCommand", "success"], seen


def test_a_read_inside_a_transaction_does_not_start_another(rt: Runtime) -> None:
    rt.store.record_execution(_record("tool_0000000000000e1"), defer=True)
    with rt.store.tx():  # its start writes the queue
        rt.store.record_execution(_record("tool_0000000000000e2"), defer=True)  # queued inside it
        rows = rt.store.query("SELECT id FROM tool_executions WHERE id LIKE 'tool_0000000000000e%'")
        rt.store.flush_executions()  # nothing to do inside a transaction: no nested BEGIN
    assert [r[0] for r in rows] == ["tool_0000000000000e1"]
    assert rt.store.execution("tool_0000000000000e2") is not None  # the next read wrote it


@pytest.fixture
def quiet_rt(tmp_path: Path, workspace: Path):
    """A runtime without the background memory indexer, whose once-a-second look at the log writes the queue."""
    with Runtime(
        home=tmp_path / "quiet-home", workspace=workspace, settings=RuntimeSettings(memory_index_interval_s=0)
    ) as rt:
        yield rt


def _seen_elsewhere(rt: Runtime, execution_id: str) -> bool:
    return (
        read_db(rt.home / "holon.sqlite3", "SELECT COUNT(*) FROM tool_executions WHERE id=?", (execution_id,))[0][0]
        == 1
    )


def test_while_a_call_is_in_flight_the_queue_waits_for_the_gap_after_it(
    quiet_rt: Runtime, tmp_path: Path, monkeypatch
) -> None:
    rt = quiet_rt

    monkeypatch.setattr(records, "FLUSH_WITHIN_S", 600.0)  # only the gap writes it here
    go = tmp_path / "go"
    long_cmd = f"while [ ! -e {go} ]; do sleep 0.02; done"  # in flight until the test says so
    long = threading.Thread(target=lambda: ok(rt.call("ExecCommand", {"cmd": long_cmd, "yield_time_ms": 600_000})))
    long.start()
    try:
        eventually(lambda: rt._loop.calls_in_flight == 1, timeout=30)
        quick = rt.call("ExecCommand", {"cmd": "true"})
        time.sleep(0.3)  # far past the 1 ms a call waits when none other is in flight
        assert rt._loop.calls_in_flight == 1 and rt.store.deferred_executions >= 1
        assert not _seen_elsewhere(rt, quick.execution_id)
    finally:
        go.touch()
        long.join(60)
    eventually(lambda: _seen_elsewhere(rt, quick.execution_id), timeout=30)  # the first gap wrote it


def test_calls_that_keep_coming_delay_a_row_a_quarter_second_at_most(
    quiet_rt: Runtime, tmp_path: Path, monkeypatch
) -> None:
    """The writer's own clock (``records.time.monotonic``) is the test's: the row waits for a gap until that
    clock says ``FLUSH_WITHIN_S`` passed, then is written with the other call still in flight."""
    rt = quiet_rt
    now = [time.monotonic()]
    monkeypatch.setattr(records, "time", SimpleNamespace(monotonic=lambda: now[0]))
    go = tmp_path / "go"
    long_cmd = f"while [ ! -e {go} ]; do sleep 0.02; done"  # in flight until the test says so
    long = threading.Thread(target=lambda: ok(rt.call("ExecCommand", {"cmd": long_cmd, "yield_time_ms": 600_000})))
    long.start()
    try:
        eventually(lambda: rt._loop.calls_in_flight == 1, timeout=30)
        quick = rt.call("ExecCommand", {"cmd": "true"})
        time.sleep(5 * records.RECHECK_S)  # several looks for a gap: none, and the clock has not moved
        assert rt._loop.calls_in_flight == 1 and not _seen_elsewhere(rt, quick.execution_id)
        now[0] += records.FLUSH_WITHIN_S
        eventually(lambda: _seen_elsewhere(rt, quick.execution_id), timeout=30)
        assert long.is_alive() and rt._loop.calls_in_flight == 1  # written while the other call still ran
    finally:
        go.touch()
        long.join(60)
