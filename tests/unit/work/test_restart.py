"""Durability (D7): a SIGKILLed writer leaves no half-applied transition; a reopened home keeps everything."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from _support import eventually, ok
from work_helpers import open_runtime

CHILD = textwrap.dedent("""
    import json, sys
    from holon_nb.runtime import Runtime
    from holon_nb.tools.builtin._messages import MESSAGE_SPECS
    from holon_nb.tools._registry import REGISTRY

    reg = REGISTRY if "Enqueue" in REGISTRY else REGISTRY.with_specs(*MESSAGE_SPECS)
    rt = Runtime(home=sys.argv[1], workspace=sys.argv[2], registry=reg)

    def say(**fields):
        print(json.dumps(fields), flush=True)

    def call(name, args):
        r = rt.call(name, args)
        assert r.ok, r.receipt
        return r.result

    w = call("CreateWorkItem", {"objective": "burst"})["work_item"]["id"]
    say(op="create", work_item_id=w)
    w2 = call("CreateWorkItem", {"objective": "waiter"})["work_item"]["id"]
    say(op="create", work_item_id=w2)
    task = call("ExecCommand", {"cmd": "sleep 60", "yield_time_ms": 0})["task_handle"]["task_id"]
    say(op="task", task_id=task)
    i = 0
    while True:
        i += 1
        if i % 4 == 0:
            call("UpdateWorkItem", {"work_item_id": w, "todo_list": [{"text": f"step {i}", "state": "pending"}]})
            say(op="update", step=i, revision=rt.work.record(w)["revision"])
        elif i % 4 == 1:
            say(op="timer", timer_id=call("CreateTimer", {"duration_ms": 3600000})["timer"]["id"])
        elif i % 4 == 2:
            res = call("WaitFor", {"reason": f"r{i}", "wake": "external", "delivery": "silent", "work_item_id": w2})
            say(op="wait", wait_id=res["wait_condition"]["id"], revision=rt.work.record(w2)["revision"])
        else:
            call("Enqueue", {"text": f"m{i}"})
            say(op="message", text=f"m{i}")
""")


def _run_and_kill(home: Path, workspace: Path, tmp_path: Path, lines_before_kill: int) -> list[dict]:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "SHELL": "/bin/sh"}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(home), str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    reported: list[dict] = []
    enough = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            reported.append(json.loads(line))
            if len(reported) >= lines_before_kill:
                enough.set()
        enough.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    enough.wait(120)
    os.kill(proc.pid, signal.SIGKILL)  # mid-burst: the child is still writing
    proc.wait(30)
    reader.join(10)
    assert len(reported) >= lines_before_kill, proc.stderr.read() if proc.stderr else ""
    return reported


def test_sigkill_mid_burst_leaves_only_whole_transitions(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    reported = _run_and_kill(home, workspace, tmp_path, 80)
    w, w2 = [r["work_item_id"] for r in reported if r["op"] == "create"]
    rt = open_runtime(home, workspace)
    try:
        assert rt.store.query("PRAGMA integrity_check")[0][0] == "ok"
        for wid in (w, w2):  # revisions contiguous, the record at the last one
            rec = rt.work.record(wid)
            revs = [
                r[0]
                for r in rt.store.query(
                    "SELECT revision FROM work_item_revisions WHERE work_item_id=? ORDER BY revision", (wid,)
                )
            ]
            assert revs == list(range(1, rec["revision"] + 1))
        updates = [r for r in reported if r["op"] == "update"]
        rec = rt.work.record(w)
        assert rec["revision"] >= updates[-1]["revision"]
        step = int(rec["todo_list"][0]["text"].split()[1])
        assert updates[-1]["step"] <= step <= updates[-1]["step"] + 4
        for r in reported:
            if r["op"] == "timer":
                t = rt.work.timer(r["timer_id"])
                assert t is not None and t["status"] == "active" and t["next_fire_at"]
        waits = {x["id"]: x for x in (dict(r) for r in rt.store.query("SELECT * FROM waits"))}
        assert all(r["wait_id"] in waits for r in reported if r["op"] == "wait")
        for x in waits.values():  # every wait's owner exists
            assert x["work_item_id"] is None or rt.work.record(x["work_item_id"]) is not None
        live = [x for x in waits.values() if x["status"] in ("active", "triggered")]
        assert len(live) == 1  # replaced waits were cancelled in the same transaction
        assert rt.work.record(w2)["blocked_by"] == live[0]["waiting_for"]
        texts = {m["text"] for m in rt.messages()}
        assert {r["text"] for r in reported if r["op"] == "message"} <= texts
        task_id = next(r["task_id"] for r in reported if r["op"] == "task")
        task = ok(rt.call("TaskStatus", {"task_id": task_id}))["task"]
        assert task["status"] == "interrupted" and task["interrupted_reason"] == "runtime_restarted"
        assert any(m["origin_task_id"] == task_id for m in rt.messages(kind="TaskResult"))
    finally:
        rt.close()


def test_reopened_home_keeps_the_work_plane(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    first = open_runtime(home, workspace)
    w = ok(first.call("CreateWorkItem", {"objective": "keep me", "todo_list": [{"text": "a", "state": "pending"}]}))
    wid = w["work_item"]["id"]
    timer = ok(first.call("CreateTimer", {"duration_ms": 3600000, "summary": "later"}))["timer"]["id"]
    wait = ok(first.call("WaitFor", {"reason": "approval", "wake": "operator_input", "delivery": "silent"}))
    ok(first.call("Enqueue", {"text": "follow up"}))
    tid = ok(first.call("ExecCommand", {"cmd": "echo done", "yield_time_ms": 0}))["task_handle"]["task_id"]
    first.wait_for_tasks(10)
    eventually(lambda: first.messages(kind="TaskResult"))
    first.close()
    second = open_runtime(home, workspace)
    try:
        item = ok(second.call("GetWorkItem", {"work_item_id": wid, "include_todo_list": True}))["work_item"]
        assert item["blocked_by"] == "approval" and item["todo_list"] == [{"text": "a", "state": "pending"}]
        assert item["active_wait_conditions"][0]["id"] == wait["wait_condition"]["id"]
        assert ok(second.call("GetTimer", {"timer_id": timer}))["timer"]["status"] == "active"
        assert [m["text"] for m in second.work.queued("default") if m["kind"] == "internal_followup"] == ["follow up"]
        assert second.store.task(tid)["status"] == "completed"
        assert second.store.task(tid)["work_item_id"] is None  # the operator wait had released the focus
    finally:
        second.close()


CRASHER = textwrap.dedent("""
    import json, sys
    from holon_nb.runtime import Runtime
    rt = Runtime(home=sys.argv[1], workspace=sys.argv[2])
    rt.call("CreateWorkItem", {"objective": "w"})
    tid = rt.call("ExecCommand", {"cmd": "sleep 60", "yield_time_ms": 0}).result["task_handle"]["task_id"]
    r = rt.call("WaitFor", {"reason": "long build", "wake": "task_result", "resource": tid, "delivery": "silent"})
    assert r.ok, r.receipt
    print(json.dumps({"task_id": tid, "wait_id": r.result["wait_condition"]["id"]}), flush=True)
    import time
    time.sleep(120)
""")


def test_wait_on_a_task_of_a_crashed_runtime_wakes_on_restart(tmp_path: Path, workspace: Path) -> None:
    """The restart TaskResult (D7) is written before the work service starts; the wait still triggers."""
    home = tmp_path / "home"
    script = tmp_path / "crasher.py"
    script.write_text(CRASHER)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(home), str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "SHELL": "/bin/sh"},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    info = json.loads(line)
    rt = open_runtime(home, workspace)
    try:
        wait = eventually(lambda: rt.work.waits_of("default", ("triggered",)))[0]
        msg = next(m for m in rt.messages(kind="TaskResult") if m["origin_task_id"] == info["task_id"])
        assert wait["id"] == info["wait_id"] and wait["trigger_message_id"] == msg["id"]
        queued = next(m for m in rt.work.queued("default") if m["id"] == msg["id"])
        assert queued["origin"] == {"kind": "task", "task_id": info["task_id"]}
        assert queued["work_item_id"] == wait["work_item_id"] and queued["authority"] == "runtime_instruction"
        assert rt.store.task(info["task_id"])["status"] == "interrupted"
    finally:
        rt.close()
