"""Ctrl-C in a real kernel while a magic blocks: the cell ends with one line naming what was stopped.

The kernel is interrupted (SIGINT through the kernel manager) once the magic blocks: ``%exec`` in its
foreground window (the command is stopped: its process group is gone, and the runtime still answers),
``%holon wait`` and ``%task_output`` on a background task (only the waiting stops: the task keeps
running). Each cell ends with ``KeyboardInterrupt`` and a one-line traceback, no holon_nb frame.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from _support import eventually, execute, holon_kernel


def _ps() -> str:
    return subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


def _interrupt(km: Any, kc: Any, code: str, blocking: Any) -> dict[str, Any]:
    """Run ``code``, interrupt the kernel once ``blocking()`` holds, return the cell's error content."""
    msg_id = kc.execute(code)
    eventually(blocking, timeout=30)
    km.interrupt_kernel()
    reply = kc.get_shell_msg(timeout=30)
    while reply["parent_header"].get("msg_id") != msg_id:  # replies of earlier cells first
        reply = kc.get_shell_msg(timeout=30)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
    while True:
        msg = kc.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "error":
            return msg["content"]


# Started in the kernel before a blocking cell: a thread that creates FLAG once the kernel's main thread
# is inside FUNCTION of a file ending in SUFFIX (where the magic blocks), so the test interrupts the
# magic itself, not the lines before it
_WATCH = """
import sys as _s, threading as _t, pathlib as _p
def _holon_watch(suffix, function, flag, main=_t.main_thread().ident):
    while True:
        f = _s._current_frames().get(main)
        while f is not None:
            if f.f_code.co_filename.endswith(suffix) and f.f_code.co_name == function:
                _p.Path(flag).touch()
                return
            f = f.f_back
        _t.Event().wait(0.01)
_t.Thread(target=_holon_watch, args=({suffix!r}, {function!r}, {flag!r}), daemon=True).start()
"""


def _when_blocked(kc: Any, tmp_path: Path, suffix: str, function: str) -> Any:
    """Start the watcher in the kernel; return a check that is true once the main thread blocks there."""
    flag = tmp_path / f"blocked-{function}-{len(list(tmp_path.glob('blocked-*')))}"
    execute(kc, _WATCH.format(suffix=suffix, function=function, flag=str(flag)))
    return flag.exists


def _one_line(error: dict[str, Any]) -> str:
    (line,) = error["traceback"]  # one line, no frames (of holon_nb or anything else)
    assert "holon_nb" not in line and "File " not in line, line
    assert line == f"KeyboardInterrupt: {error['evalue']}"
    return error["evalue"]


def test_interrupt_stops_the_foreground_command(tmp_path: Path) -> None:
    with holon_kernel(tmp_path) as (km, kc):
        error = _interrupt(
            km, kc, "%exec --yield-ms 30000 sleep 93.25; echo fg", lambda: "sleep 93.25" in _ps()
        )  # the command is in its foreground window
        text = _one_line(error)
        assert text.startswith("Interrupted: stopped the command 'sleep 93.25; echo fg'"), text
        # the command is stopped on the runtime thread right after (well before its 93 s are up)
        eventually(lambda: "sleep 93.25" not in _ps(), timeout=30)
        msgs = execute(kc, "import holon_nb; print(holon_nb.get_runtime().call('ListTasks').result['total_active'])")
        out = "".join(m["content"].get("text", "") for m in msgs if m["msg_type"] == "stream")
        assert out.strip() == "0"


def test_interrupting_a_wait_stops_the_waiting_not_the_task(tmp_path: Path) -> None:
    with holon_kernel(tmp_path) as (km, kc):
        msgs = execute(kc, "%exec --yield-ms 0 --no-login sleep 93.5")
        shown = "".join(str(m["content"].get("data", {}).get("text/plain", "")) for m in msgs)
        task_id = re.search(r"task_[0-9a-f]{15}", shown).group(0)  # type: ignore[union-attr]
        blocked = _when_blocked(kc, tmp_path, "holon_nb/notebook/_live.py", "wait")
        text = _one_line(_interrupt(km, kc, "%holon wait", blocked))
        assert text == f"Interrupted: stopped %holon wait; still running: {task_id} — %task_stop ID ends a task"
        blocked = _when_blocked(kc, tmp_path, "holon_nb/runtime/core/_loop.py", "result")
        text = _one_line(_interrupt(km, kc, f"%task_output {task_id} --timeout-ms 60000", blocked))
        assert (
            text == f"Interrupted: stopped waiting for {task_id}; the task keeps running — %task_stop {task_id} ends it"
        )
        assert "sleep 93.5" in _ps()  # neither interrupt stopped the task
        execute(kc, f"%task_stop {task_id}")
        eventually(lambda: "sleep 93.5" not in _ps(), timeout=30)
