"""Task tools acceptance cases AC-22…AC-31 and AC-58 (restart, D7)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from _support import err, eventually, ok

from holon_nb.runtime import Runtime

UNKNOWN = "task_000000000000000"


def _promote(rt: Runtime, cmd: str, **kw) -> str:
    return ok(rt.call("ExecCommand", {"cmd": cmd, "yield_time_ms": 300, **kw}))["task_handle"]["task_id"]


def _wait_status(rt: Runtime, tid: str, want: str, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        task = ok(rt.call("TaskStatus", {"task_id": tid}))["task"]
        if task["status"] == want or time.monotonic() > deadline:
            return task
        time.sleep(0.02)


def _ended(pid: int) -> bool:
    """``pid`` has ended: no such process, or a zombie waiting for its parent."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_ac22_input_refused_for_non_interactive(rt: Runtime) -> None:
    tid = _promote(rt, "sleep 1000")
    r = rt.call("TaskInput", {"task_id": tid, "input": "x"})
    res = ok(r)
    assert res["accepted_input"] is False and "bytes_written" not in res
    assert r.envelope["summary_text"] == "task is not currently accepting input"


@pytest.mark.parametrize(
    "tool,extra", [("TaskInput", {"input": "x"}), ("TaskStatus", {}), ("TaskOutput", {}), ("TaskStop", {})]
)
def test_ac23_ac29_unknown_task(rt: Runtime, tool: str, extra: dict) -> None:
    e = err(rt.call(tool, {"task_id": UNKNOWN, **extra}), "task_not_found")
    assert e["domain"] == "not_found" and e["details"]["task_id"] == UNKNOWN


def test_ac24_output_wait_times_out(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """The blocking wait lasts its timeout on the wait's own clock (``tasks.agent.time``), which is the test's
    here: while that clock stands still the call keeps waiting, however often it looks; moved past the
    timeout, the call answers ``timeout``."""
    from holon_nb.runtime.tasks import _agent as agent

    tid = _promote(rt, "sleep 1000")
    now, reads = [1000.0], [0]

    def monotonic() -> float:
        reads[0] += 1
        return now[0]

    monkeypatch.setattr(agent, "time", SimpleNamespace(monotonic=monotonic))
    box: dict = {}
    call = threading.Thread(
        target=lambda: box.update(r=rt.call("TaskOutput", {"task_id": tid, "block": True, "timeout_ms": 300}))
    )
    call.start()
    eventually(lambda: reads[0] >= 10, timeout=60)  # it has looked at its clock several times ...
    assert call.is_alive() and "r" not in box  # ... and waits on: not a moment of its timeout has passed
    now[0] += 0.3
    call.join(60)
    r = box["r"]
    res = ok(r)
    assert res["retrieval_status"] == "timeout" and res["task"]["status"] == "running"
    assert r.receipt.splitlines()[0] == "Task output wait timed out"


def test_ac25_completed_task_output_and_message(rt: Runtime) -> None:
    tid = ok(rt.call("ExecCommand", {"cmd": "sleep 0.5; echo fin", "yield_time_ms": 0}))["task_handle"]["task_id"]
    r = rt.call("TaskOutput", {"task_id": tid})
    res = ok(r)
    t = res["task"]
    assert res["retrieval_status"] == "success" and t["status"] == "completed" and t["exit_status"] == 0
    assert "fin" in t["output_preview"]
    assert t["artifacts"][0]["path"].endswith(f"{tid}.log") and t["output_artifact"] == 0
    assert "summary_text" not in r.envelope
    msgs = [m for m in rt.messages() if m["origin_task_id"] == tid]
    assert len(msgs) == 1 and msgs[0]["kind"] == "TaskResult"
    assert msgs[0]["text"].startswith("command task completed:")


def test_ac26_long_task_output_truncated(rt: Runtime) -> None:
    tid = _promote(rt, "sleep 0.5; head -c 20000 /dev/zero | tr '\\0' z")
    r = rt.call("TaskOutput", {"task_id": tid, "timeout_ms": 5000})
    t = ok(r)["task"]
    assert len(t["output_preview"]) <= 8000 and t["output_truncated"] is True
    assert "[output truncated: " in r.receipt and t["artifacts"][0]["path"] in r.receipt
    assert Path(t["artifacts"][0]["path"]).read_text().count("z") == 20000


def test_ac26_small_budget_first_cut_reported(rt: Runtime) -> None:
    tid = _promote(rt, "sleep 0.5; seq 1 2000", max_output_tokens=100)
    t = ok(rt.call("TaskOutput", {"task_id": tid, "timeout_ms": 5000}))["task"]
    assert len(t["output_preview"]) == 400 and t["output_truncated"] is True


def test_ac27_ac28_stop_with_children(rt: Runtime, workspace: Path) -> None:
    tid = _promote(rt, "sleep 1000 & echo $! > child.pid; sleep 1000")
    r = rt.call("TaskStop", {"task_id": tid})
    res = ok(r)
    assert res["task"]["status"] == "cancelling"
    assert res["stop_requested"] is True and res["force_stop_requested"] is False
    assert r.envelope["summary_text"].startswith("stop requested")
    assert _wait_status(rt, tid, "cancelled")["status"] == "cancelled"
    pid = int((workspace / "child.pid").read_text())
    state = (
        Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] if Path(f"/proc/{pid}").exists() else "gone"
    )
    assert state in ("gone", "Z")
    out = ok(rt.call("TaskOutput", {"task_id": tid}))["task"]
    assert out["status"] == "cancelled" and "failure_artifact" in out
    assert tid not in [t["id"] for t in ok(rt.call("ListTasks", {}))["tasks"]]
    # AC-28: a second stop changes nothing and enqueues nothing
    before = len(rt.messages())
    r2 = rt.call("TaskStop", {"task_id": tid})
    res2 = ok(r2)
    assert res2["task"]["status"] == "cancelled"
    assert res2["stop_requested"] is False and res2["force_stop_requested"] is False
    assert r2.envelope["summary_text"] == f"task {tid} already cancelled; nothing to stop"
    assert len(rt.messages()) == before


def test_ac30_stop_completed_task(rt: Runtime) -> None:
    tid = ok(rt.call("ExecCommand", {"cmd": "echo fin", "yield_time_ms": 0}))["task_handle"]["task_id"]
    ok(rt.call("TaskOutput", {"task_id": tid}))
    before = len(rt.messages())
    r = rt.call("TaskStop", {"task_id": tid})
    res = ok(r)
    assert res["task"]["status"] == "completed"
    assert res["stop_requested"] is False and res["force_stop_requested"] is False
    assert r.envelope["summary_text"] == f"task {tid} already completed; nothing to stop"
    assert ok(rt.call("TaskStatus", {"task_id": tid}))["task"]["status"] == "completed"
    assert len(rt.messages()) == before


def test_second_stop_forces(rt: Runtime) -> None:
    tid = _promote(rt, "trap '' TERM; sleep 1000")
    ok(rt.call("TaskStop", {"task_id": tid}))
    second = ok(rt.call("TaskStop", {"task_id": tid}))
    if second["task"]["status"] == "cancelling":
        assert second["force_stop_requested"] is True and second["stop_requested"] is True
    assert _wait_status(rt, tid, "cancelled")["status"] == "cancelled"


def test_ac31_list_limits(rt: Runtime) -> None:
    ids = [_promote(rt, f"sleep 100{i}") for i in range(3)]
    done = ok(rt.call("ExecCommand", {"cmd": "true", "yield_time_ms": 0}))["task_handle"]["task_id"]
    ok(rt.call("TaskOutput", {"task_id": done}))
    r0 = ok(rt.call("ListTasks", {"limit": 0}))
    assert r0["limit"] == 1 and r0["returned"] == 1 and r0["total_active"] == 3
    assert ok(rt.call("ListTasks", {"limit": 1000}))["limit"] == 100
    err(rt.call("ListTasks", {"limit": -1}), "invalid_tool_input")
    r = rt.call("ListTasks", {})
    res = ok(r)
    assert res["limit"] == 20 and sorted(t["id"] for t in res["tasks"]) == sorted(ids)
    assert done not in [t["id"] for t in res["tasks"]]
    assert "summary_text" not in r.envelope
    assert res["tasks"][0]["id"] == ids[-1]  # most recently updated first


def test_ac58_restart_interrupts_running_task(tmp_path: Path, workspace: Path) -> None:
    """A kernel that dies with a running task: the next runtime marks it interrupted and kills the orphan."""
    home = tmp_path / "home"
    script = textwrap.dedent(f"""
        import os, sys
        from holon_nb import Runtime
        rt = Runtime(home={str(home)!r}, workspace={str(workspace)!r})
        r = rt.call("ExecCommand", {{"cmd": "sleep 1000", "yield_time_ms": 300}})
        print(r.envelope["result"]["task_handle"]["task_id"], flush=True)
        os.kill(os.getpid(), 9)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    tid = proc.stdout.strip()
    assert tid.startswith("task_"), proc.stderr
    with Runtime(home=home, workspace=workspace) as rt:
        task = ok(rt.call("TaskStatus", {"task_id": tid}))["task"]
        assert task["status"] == "interrupted"
        assert task["status_before_restart"] == "running" and task["interrupted_reason"] == "runtime_restarted"
        assert tid not in [t["id"] for t in ok(rt.call("ListTasks", {}))["tasks"]]
        msgs = [m for m in rt.messages() if m["origin_task_id"] == tid]
        assert msgs[-1]["text"] == f"task {tid} was interrupted because the runtime restarted"
        assert msgs[-1]["metadata"]["interrupted_reason"] == "runtime_restarted"
        assert msgs[-1]["metadata"]["status_before_restart"] == "running"
        out = ok(rt.call("TaskOutput", {"task_id": tid}))["task"]
        assert out["failure_artifact"]["kind"] == "command_task_interrupted"
        assert ok(rt.call("TaskStop", {"task_id": tid}))["stop_requested"] is False
        pg = subprocess.run(["pgrep", "-f", "^sleep 1000$"], capture_output=True, text=True)
        rec = rt.store.task(tid)
        assert (
            not Path(f"/proc/{rec['pgid']}").exists()
            or rec["proc_start"] is None
            or Path(f"/proc/{rec['pgid']}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
        ), pg.stdout


def test_terminal_state_never_left(rt: Runtime) -> None:
    tid = ok(rt.call("ExecCommand", {"cmd": "exit 4", "yield_time_ms": 0}))["task_handle"]["task_id"]
    t = ok(rt.call("TaskOutput", {"task_id": tid}))["task"]
    assert t["status"] == "failed" and t["failure_artifact"]["kind"] == "command_task_exit_nonzero"
    rt.tasks._set_status(tid, "running", {})
    rt.tasks._set_status(tid, "completed", {})
    assert ok(rt.call("TaskStatus", {"task_id": tid}))["task"]["status"] == "failed"


def test_second_runtime_on_the_same_home_leaves_live_tasks_alone(tmp_path: Path, workspace: Path) -> None:
    """Two kernels (or a kernel and the CLI) on one home: opening the second interrupts nothing."""
    home = tmp_path / "shared-home"
    with Runtime(home=home, workspace=workspace) as first:
        tid = _promote(first, "sleep 30; echo survived")
        with Runtime(home=home, workspace=workspace) as second:
            assert second.interrupted_at_start == []
            assert ok(first.call("TaskStatus", {"task_id": tid}))["task"]["status"] == "running"
            assert tid in [t["id"] for t in ok(second.call("ListTasks", {}))["tasks"]]
            # the second runtime has no handle, but stopping still kills the recorded process group
            pgid = second.store.task(tid)["pgid"]
            stopped = ok(second.call("TaskStop", {"task_id": tid}))
            assert stopped["task"]["status"] == "cancelled" and stopped["force_stop_requested"] is True
            eventually(lambda: _ended(pgid), timeout=60)  # the group's leader is gone (or a zombie)
        assert _wait_status(first, tid, "cancelled")["status"] == "cancelled"
        assert len([m for m in first.messages() if m["origin_task_id"] == tid]) == 1


def test_closed_runtime_tasks_are_reconciled_in_the_same_process(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "h"
    first = Runtime(home=home, workspace=workspace)
    tid = _promote(first, "sleep 30")
    first.close()  # close stops its tasks: nothing is left to reconcile
    with Runtime(home=home, workspace=workspace) as again:
        assert again.interrupted_at_start == []
        task = ok(again.call("TaskStatus", {"task_id": tid}))["task"]
        assert task["status"] == "interrupted" and task["interrupted_reason"] == "runtime_closed"


def test_surrogate_in_command_is_refused_before_anything_runs(rt: Runtime) -> None:
    """A lone surrogate (here a surrogate-escaped byte) is no valid text: ``invalid_tool_input``, no task."""
    r = rt.call("ExecCommand", {"cmd": "sleep 30 # \udcff", "yield_time_ms": 200})
    e = err(r, "invalid_tool_input")
    assert "\\udcff" in e["details"]["parse_error"] and "`cmd`" in e["details"]["parse_error"]
    assert ok(rt.call("ListTasks", {}))["tasks"] == []


def test_close_cancels_a_call_in_its_foreground_window(tmp_path: Path, workspace: Path) -> None:
    """A command still in its foreground window when the runtime closes is stopped, never orphaned."""
    import threading

    from holon_nb.tools._errors import RuntimeClosed

    rt = Runtime(home=tmp_path / "h", workspace=workspace)
    outcome: list[BaseException | object] = []

    def caller() -> None:
        try:
            outcome.append(rt.call("ExecCommand", {"cmd": "sleep 91.75; echo done", "yield_time_ms": 30000}))
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            outcome.append(exc)

    def running() -> bool:
        return "sleep 91.75" in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout

    thread = threading.Thread(target=caller)
    thread.start()
    eventually(running, timeout=30)  # the call is in its foreground window
    rt.close()
    thread.join(60)  # far less than the command's 91.75 s: close did not wait for it to end
    assert not thread.is_alive() and isinstance(outcome[0], RuntimeClosed)
    eventually(lambda: not running(), timeout=30)


def test_close_interrupts_live_tasks_not_cancels(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "h"
    with Runtime(home=home, workspace=workspace) as rt:
        tid = _promote(rt, "sleep 30")
    with Runtime(home=home, workspace=workspace) as again:
        task = ok(again.call("TaskStatus", {"task_id": tid}))["task"]
        assert task["status"] == "interrupted" and task["interrupted_reason"] == "runtime_closed"
        assert task["status_before_restart"] == "running"
        msgs = [m for m in again.messages() if m["origin_task_id"] == tid]
        assert [m["text"] for m in msgs] == [f"task {tid} was interrupted because the runtime closed"]


def test_blocking_calls_refuse_the_runtime_thread(rt: Runtime) -> None:
    seen: list[str] = []

    def on_event(ev) -> None:
        if ev.kind == "task_ended":
            for fn in (lambda: rt.call("ListTasks", {}), rt.close):
                try:
                    fn()
                except RuntimeError as exc:
                    seen.append(str(exc))

    rt.subscribe(on_event)
    tid = ok(rt.call("ExecCommand", {"cmd": "true", "yield_time_ms": 0}))["task_handle"]["task_id"]
    ok(rt.call("TaskOutput", {"task_id": tid}))
    time.sleep(0.2)
    assert len(seen) == 2 and "runtime thread" in seen[0] and "runtime thread" in seen[1]
    assert not rt.closed and ok(rt.call("ListTasks", {}))["total_active"] == 0


def test_large_log_read_by_head_and_tail(rt: Runtime) -> None:
    """A log over 8 MB is previewed from its head and tail with the count recorded while it was written."""
    tid = _promote(rt, "sleep 0.3; head -c 9000000 /dev/zero | tr '\\0' x; echo; echo end-line", max_output_tokens=1)
    t = ok(rt.call("TaskOutput", {"task_id": tid, "timeout_ms": 20000}))["task"]
    assert t["status"] == "completed" and t["output_truncated"] is True
    assert t["output_preview"] == "xxxx"  # a 4-character budget: no room for the marker
    assert t["output_total_chars"] == 9_000_000 + len("\nend-line\n")
    small = _promote(rt, "sleep 0.3; head -c 9000000 /dev/zero | tr '\\0' y; echo; echo end-line")
    t = ok(rt.call("TaskOutput", {"task_id": small, "timeout_ms": 20000}))["task"]
    assert len(t["output_preview"]) == 8000 and t["output_preview"].endswith("y\nend-line\n")


def test_cut_head_tail_matches_cut() -> None:
    from holon_nb.tools._text import cut, cut_head_tail

    text = "".join(f"{i}\n" for i in range(5000))
    for budget in (0, 4, 66, 67, 100, 8000):
        assert cut_head_tail(text, text, budget) == cut(text, budget)[0]


def test_identical_command_of_a_runtime_that_died_meanwhile_starts_anew(tmp_path: Path, workspace: Path) -> None:
    """A kernel restarted while its command ran: the new kernel's runtime had started before the old one died,
    so its start-up check saw a live owner; running the same command again must not answer ``already_running``
    for a task nobody runs."""
    home = tmp_path / "home"
    script = textwrap.dedent(f"""
        import os, sys
        from holon_nb import Runtime
        rt = Runtime(home={str(home)!r}, workspace={str(workspace)!r})
        r = rt.call("ExecCommand", {{"cmd": "sleep 1000", "yield_time_ms": 300}})
        print(r.envelope["result"]["task_handle"]["task_id"], flush=True)
        sys.stdin.readline()
        os.kill(os.getpid(), 9)
    """)
    old = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        tid = old.stdout.readline().strip()
        assert tid.startswith("task_")
        with Runtime(home=home, workspace=workspace) as rt:
            assert tid in [t["id"] for t in ok(rt.call("ListTasks", {}))["tasks"]]  # its owner still runs
            old.communicate("go\n", timeout=30)
            # its owner is gone: no list shows it as active any more (it is reconciled to interrupted on sight)
            assert tid not in [t["id"] for t in ok(rt.call("ListTasks", {}))["tasks"]]
            fresh = ok(rt.call("ExecCommand", {"cmd": "sleep 1000", "yield_time_ms": 300}))
            assert fresh["disposition"] != "already_running", fresh
            new_id = fresh["task_handle"]["task_id"]
            assert new_id != tid
            assert ok(rt.call("TaskStatus", {"task_id": tid}))["task"]["status"] == "interrupted"
            ok(rt.call("TaskStop", {"task_id": new_id}))
    finally:
        if old.poll() is None:
            old.kill()
        old.wait()
