"""ExecCommand acceptance cases AC-10…AC-21 and cases C03–C06."""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

from _support import err, eventually, ok

from holon_nb.runtime import Runtime
from holon_nb.tools._text import TRUNCATION_MARKER


def test_ac10_exit_code_and_streams(rt: Runtime) -> None:
    r = rt.call("ExecCommand", {"cmd": "printf 'a\\n'; printf 'e\\n' >&2; exit 3"})
    res = ok(r)
    assert res["disposition"] == "completed" and res["exit_status"] == 3
    assert res["stdout_preview"] == "a" and res["stderr_preview"] == "e"
    assert res["truncated"] is False and "artifacts" not in res
    assert r.receipt == "Process exited with code 3\n\nstdout:\na\n\nstderr:\ne"
    assert r.envelope["summary_text"] == "command exited with status 3"
    assert res["command_diagnostics"]["output_char_budget"] == 32000


def test_ac11_huge_output_truncated_with_artifact(rt: Runtime) -> None:
    r = rt.call("ExecCommand", {"cmd": "yes x | head -n 200000", "max_output_tokens": 1000})
    res = ok(r)
    assert res["exit_status"] == 0 and res["truncated"] is True
    assert len(res["stdout_preview"]) == 4000 and TRUNCATION_MARKER in res["stdout_preview"]
    assert res["stdout_artifact"] == 0
    art = Path(res["artifacts"][0]["path"])
    assert art.is_absolute() and art.stat().st_size > 0
    assert "Artifacts:" in r.full_receipt


def test_ac11_head_survives_beyond_memory_tail(rt: Runtime) -> None:
    r = rt.call("ExecCommand", {"cmd": "seq 1 100000", "max_output_tokens": 1000})
    res = ok(r)
    assert res["stdout_preview"].startswith("1\n2\n3\n")
    assert res["stdout_preview"].endswith("99999\n100000")
    art = Path(res["artifacts"][0]["path"])
    assert len(art.read_text()) == 588895
    assert f"[stdout truncated: 584960 of 588894 characters not shown; full output: {art}]" in r.full_receipt


def test_ac11_large_budget_not_truncated(rt: Runtime) -> None:
    res = ok(rt.call("ExecCommand", {"cmd": "seq 1 40000", "max_output_tokens": 64000}))
    assert res["truncated"] is False and "artifacts" not in res
    assert len(res["stdout_preview"]) == 228894 - 1


def test_ac12_projection_guard(rt: Runtime) -> None:
    r = rt.call("ExecCommand", {"cmd": "yes x | head -n 200000"})
    model = json.loads(r.receipt)
    assert model["provider_projection_truncated"] is True
    assert re.fullmatch(r"tool_execution:[^:]+:output", model["output_ref"])
    assert len(r.envelope["result"]["stdout_preview"]) == 32000
    assert r.projected
    assert rt.store.execution(r.execution_id) is not None  # output_ref resolves to a stored execution
    shown = r._repr_mimebundle_()["text/plain"]  # a notebook keeps the readable receipt, and says so
    assert shown.startswith("ExecCommand · success · ")  # the human receipt: headline, then the output
    assert "\n  exit status  0\n  stdout:\n    x\n    x" in shown
    assert shown.endswith(f"output_ref tool_execution:{r.execution_id}:output]")


def test_ac13_lossy_and_split_utf8(rt: Runtime) -> None:
    r = rt.call("ExecCommand", {"cmd": "printf '\\377\\376ok'"})
    res = ok(r)
    assert res["stdout_preview"] == "\ufffd\ufffdok"
    json.loads(json.dumps(r.envelope))
    assert "[stdout decoded lossily: invalid UTF-8 bytes were replaced by U+FFFD]" in r.receipt
    r2 = rt.call("ExecCommand", {"cmd": "printf '\\344\\270'; sleep 0.3; printf '\\255'"})
    assert ok(r2)["stdout_preview"] == "中"
    assert "lossily" not in r2.receipt


def test_ac14_promotion_and_listing(rt: Runtime) -> None:
    r = rt.call("ExecCommand", {"cmd": "sleep 1000", "yield_time_ms": 300})
    res = ok(r)
    assert res["disposition"] == "promoted_to_task"  # the call returned while the command runs on
    h = res["task_handle"]
    assert h["task_kind"] == "command_task" and h["status"] in ("queued", "running")
    assert re.fullmatch(r"task_[0-9a-f]{15}", h["task_id"])
    assert "initial_output_preview" not in res
    assert "(none captured before promotion)" in r.receipt
    listed = ok(rt.call("ListTasks", {}))["tasks"]
    assert [t["command"]["cmd"] for t in listed if t["id"] == h["task_id"]] == ["sleep 1000"]


def test_ac15_zero_yield_promotes(rt: Runtime) -> None:
    assert ok(rt.call("ExecCommand", {"cmd": "echo hi", "yield_time_ms": 0}))["disposition"] == "promoted_to_task"


def test_ac16_duplicate_policy(rt: Runtime) -> None:
    first = ok(rt.call("ExecCommand", {"cmd": "sleep 1000", "yield_time_ms": 300}))["task_handle"]["task_id"]
    again = rt.call("ExecCommand", {"cmd": "sleep 1000", "yield_time_ms": 300})
    res = ok(again)
    assert res["disposition"] == "already_running" and res["task_handle"]["task_id"] == first
    assert "start_new" in res["instructions"]
    assert again.receipt.startswith("Command is already running")
    assert re.search(r"Status: (Running|Queued)", again.receipt)
    # the cell's receipt: one aligned block, the instructions whole
    rows = again.display_text.splitlines()[1:]
    assert [r.split()[0] for r in rows if not r.startswith("   ")] == ["task", "command", "summary", "instructions"]
    assert len({r.index(r.split()[1]) for r in rows if not r.startswith("   ")}) == 1, again.display_text
    assert "start another instance." in again.display_text
    dot = ok(rt.call("ExecCommand", {"cmd": "sleep 1000", "yield_time_ms": 300, "workdir": "."}))
    assert dot["disposition"] == "already_running"
    new = ok(rt.call("ExecCommand", {"cmd": "sleep 1000", "yield_time_ms": 300, "duplicate_policy": "start_new"}))
    assert new["task_handle"]["task_id"] != first
    sub = ok(rt.call("ExecCommand", {"cmd": "sleep 1000", "yield_time_ms": 300, "workdir": "sub"}))
    assert sub["disposition"] == "promoted_to_task" and sub["task_handle"]["task_id"] != first


def test_ac17_workdir_not_found(rt: Runtime, workspace: Path) -> None:
    e = err(rt.call("ExecCommand", {"cmd": "ls", "workdir": "does/not/exist"}), "workdir_not_found")
    assert e["retryable"] is False
    assert e["details"]["workdir"] == str(workspace / "does/not/exist")


def test_ac18_spawn_failures(rt: Runtime) -> None:
    err(rt.call("ExecCommand", {"cmd": "ls", "shell": "/nonexistent/sh"}), "command_spawn_failed")
    e = err(rt.call("ExecCommand", {"cmd": "ls", "workdir": "a.txt"}), "command_spawn_failed")
    assert set(e["details"]) >= {"cmd", "shell", "workdir", "error"}


def test_ac19_background_child_holding_stdout(rt: Runtime) -> None:
    # had the call waited for the child holding stdout, the 60 s window would have ended first (a task)
    res = ok(rt.call("ExecCommand", {"cmd": "sleep 30 & echo $!", "yield_time_ms": 60_000}))
    child = int(res["stdout_preview"])
    try:
        assert res["disposition"] == "completed" and res["exit_status"] == 0
        assert Path(f"/proc/{child}").exists()  # the child is still running: the call did not wait for it
    finally:
        os.kill(child, signal.SIGKILL)  # the runtime never kills a finished command's children


def test_ac20_stdin_task_input(rt: Runtime) -> None:
    tid = ok(rt.call("ExecCommand", {"cmd": "cat", "accepts_input": True, "yield_time_ms": 300}))["task_handle"][
        "task_id"
    ]
    snap = ok(rt.call("TaskStatus", {"task_id": tid}))["task"]
    assert snap["command"]["accepts_input"] is True and snap["command"]["input_target"] == "stdin"
    res = ok(rt.call("TaskInput", {"task_id": tid, "input": "hello\n"}))
    assert res["accepted_input"] is True and res["bytes_written"] == 6 and res["input_target"] == "stdin"
    out = eventually(
        lambda: (lambda o: o if "hello" in (o["task"]["output_preview"] or "") else None)(
            ok(rt.call("TaskOutput", {"task_id": tid, "block": False}))
        )
    )
    assert out["retrieval_status"] == "not_ready"  # cat still runs


def test_ac21_tty_task_input(rt: Runtime) -> None:
    tid = ok(rt.call("ExecCommand", {"cmd": "cat", "tty": True, "yield_time_ms": 300}))["task_handle"]["task_id"]
    assert ok(rt.call("TaskStatus", {"task_id": tid}))["task"]["command"]["input_target"] == "tty"
    res = ok(rt.call("TaskInput", {"task_id": tid, "input": "hi\n"}))
    assert res["accepted_input"] is True and res["input_target"] == "tty"


def test_c04_stdin_is_eof_without_accepts_input(rt: Runtime) -> None:
    # with stdin open, cat would read until the window ends and the command becomes a task
    res = ok(rt.call("ExecCommand", {"cmd": "cat; echo after-cat", "yield_time_ms": 60_000}))
    assert res["disposition"] == "completed" and res["stdout_preview"] == "after-cat" and res["exit_status"] == 0
    tid = ok(
        rt.call("ExecCommand", {"cmd": "read -r line; echo got:$line", "accepts_input": True, "yield_time_ms": 500})
    )["task_handle"]["task_id"]
    assert ok(rt.call("TaskStatus", {"task_id": tid}))["task"]["command"]["accepts_input"] is True
    ok(rt.call("TaskInput", {"task_id": tid, "input": "hello\n"}))
    out = ok(rt.call("TaskOutput", {"task_id": tid, "timeout_ms": 5000}))
    assert out["task"]["status"] == "completed" and "got:hello" in out["task"]["output_preview"]


def test_c05_multibyte_across_reads(rt: Runtime) -> None:
    cmd = (
        'python3 -c \'import sys,time; sys.stdout.buffer.write(b"a"*4095 + "\\U0001F389".encode() + '
        '"é".encode()*3000); sys.stdout.flush(); time.sleep(2)\''
    )
    tid = ok(rt.call("ExecCommand", {"yield_time_ms": 300, "cmd": cmd}))["task_handle"]["task_id"]
    r = rt.call("TaskOutput", {"task_id": tid, "timeout_ms": 10000})
    task = ok(r)["task"]
    log = Path(task["artifacts"][0]["path"]).read_text()
    assert "\U0001f389" in log and log.count("é") == 3000 and "\ufffd" not in log
    assert "\ufffd" not in task["output_preview"] and "\U0001f389" in task["output_preview"]
    assert "lossily" not in r.receipt


def test_c05_lossy_task_output(rt: Runtime) -> None:
    tid = ok(
        rt.call("ExecCommand", {"cmd": "sleep 0.3; printf '\\377\\376'; echo still-reading", "yield_time_ms": 100})
    )["task_handle"]["task_id"]
    r = rt.call("TaskOutput", {"task_id": tid, "timeout_ms": 5000})
    task = ok(r)["task"]
    assert "\ufffd" in task["output_preview"] and "still-reading" in task["output_preview"]
    assert "[output decoded lossily: invalid UTF-8 bytes were replaced by U+FFFD]" in r.receipt


def test_c06_truncated_task_output_says_so(rt: Runtime) -> None:
    tid = ok(rt.call("ExecCommand", {"cmd": "sleep 1; seq -f 'line-%g' 1 20000", "yield_time_ms": 300}))["task_handle"][
        "task_id"
    ]
    during = ok(rt.call("TaskOutput", {"task_id": tid, "block": False}))
    assert during["retrieval_status"] == "not_ready"
    r = rt.call("TaskOutput", {"task_id": tid, "timeout_ms": 10000})
    task = ok(r)["task"]
    assert task["output_truncated"] is True and len(task["output_preview"]) <= 8000
    log = Path(task["artifacts"][0]["path"])
    assert f"full output: {log}]" in r.receipt and "[output truncated: " in r.receipt
    assert log.read_text().startswith("line-1\n")
    again = ok(rt.call("TaskOutput", {"task_id": tid, "block": False}))["task"]
    assert again["output_preview"] == task["output_preview"]


def test_c03_stop_kills_whole_tree(rt: Runtime) -> None:
    res = ok(
        rt.call(
            "ExecCommand", {"cmd": "(while true; do echo child-tick; sleep 1; done) & sleep 600", "yield_time_ms": 1000}
        )
    )
    tid = res["task_handle"]["task_id"]
    ok(rt.call("TaskStop", {"task_id": tid}))
    ended = ("cancelled", "failed", "completed")
    eventually(lambda: ok(rt.call("TaskStatus", {"task_id": tid}))["task"]["status"] in ended, timeout=30)
    assert ok(rt.call("TaskStatus", {"task_id": tid}))["task"]["status"] == "cancelled"
    check = ok(rt.call("ExecCommand", {"cmd": "pgrep -f 'child-[t]ick' || echo none-left"}))
    assert check["stdout_preview"] == "none-left"


def test_environment_of_commands(rt: Runtime) -> None:
    res = ok(rt.call("ExecCommand", {"cmd": "echo $HOLON_RUNTIME:$HOLON_AGENT_ID:$HOLON_AGENT_HOME"}))
    one, agent, home = res["stdout_preview"].split(":")
    assert one == "1" and agent == "default" and home == str(rt.home / "agents" / "default")


def test_empty_cmd_is_a_noop(rt: Runtime) -> None:
    res = ok(rt.call("ExecCommand", {"cmd": ""}))
    assert res["exit_status"] == 0 and res["stdout_preview"] is None
    assert rt.call("ExecCommand", {"cmd": ""}).receipt == "Process exited with code 0"


def test_signal_death_has_no_exit_code(rt: Runtime) -> None:
    r = rt.call("ExecCommand", {"cmd": "kill -9 $$"})
    res = ok(r)
    assert res["exit_status"] is None and r.receipt.startswith("Process exited")
    assert "SIGKILL" in r.envelope["summary_text"]


def _fix_patch(name: str, old: str, new: str) -> str:
    return f"--- a/{name}\n+++ b/{name}\n@@ -1 +1 @@\n-{old}\n+{new}\n"


def test_running_command_not_reused_after_apply_patch_changed_its_files(rt: Runtime, workspace: Path) -> None:
    """Issue 26 item 1: a slow test run promoted before a fix must not answer the identical run after it.

    The command waits for ``go``, so the first run still runs when the identical call comes after the
    patch: that call starts a run of its own (it reads the patched file) and names the one it did not reuse."""
    (workspace / "value.txt").write_text("old\n")
    cmd = "while [ ! -e go ]; do sleep 0.05; done; cat value.txt"
    first = ok(rt.call("ExecCommand", {"cmd": cmd, "yield_time_ms": 0}))["task_handle"]["task_id"]
    assert ok(rt.call("ExecCommand", {"cmd": cmd, "yield_time_ms": 0}))["disposition"] == "already_running"
    ok(rt.call("ApplyPatch", {"patch": _fix_patch("value.txt", "old", "new")}))
    (workspace / "go").write_text("")
    again = rt.call("ExecCommand", {"cmd": cmd, "yield_time_ms": 60_000})
    res = ok(again)
    assert res["disposition"] == "completed" and res["stdout_preview"] == "new", res
    assert res["not_reused_task"]["task_id"] == first
    assert res["not_reused_task"]["changed_files"] == [str(workspace / "value.txt")]
    assert f"still running as {first} was not reused" in again.envelope["summary_text"]
    assert f"an identical command still runs as {first}" in again.receipt


def test_running_command_still_reused_when_the_edit_is_elsewhere(rt: Runtime, workspace: Path) -> None:
    """An edit outside the command's folder and execution root leaves the identical command reusable."""
    (workspace / "other").mkdir()
    (workspace / "other" / "v.txt").write_text("a\n")
    first = ok(rt.call("ExecCommand", {"cmd": "sleep 1000", "yield_time_ms": 0, "workdir": "sub"}))
    assert rt.tasks.edits.changed_since(0, str(workspace / "sub")) == []
    rt.tasks.edits.record(str(workspace / "other"), [str(workspace / "other" / "v.txt")])  # another root's edit
    again = ok(rt.call("ExecCommand", {"cmd": "sleep 1000", "yield_time_ms": 0, "workdir": "sub"}))
    assert again["disposition"] == "already_running"
    assert again["task_handle"]["task_id"] == first["task_handle"]["task_id"]
