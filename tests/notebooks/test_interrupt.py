"""Ctrl-C in a real kernel while ``%exec`` waits in its foreground window stops the command.

The kernel is interrupted (SIGINT through the kernel manager) once the command
runs in its 30 s foreground wait: the cell ends with KeyboardInterrupt, the command's
process group is gone, and the runtime still answers.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from _support import eventually, execute, holon_kernel


def _ps() -> str:
    return subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


def test_interrupt_stops_the_foreground_command(tmp_path: Path) -> None:
    with holon_kernel(tmp_path) as (km, kc):
        msg_id = kc.execute("%exec --yield-ms 30000 sleep 93.25; echo fg")
        eventually(lambda: "sleep 93.25" in _ps(), timeout=30)  # the command is in its foreground window
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=10)
        while reply["parent_header"].get("msg_id") != msg_id:  # replies of earlier cells first
            reply = kc.get_shell_msg(timeout=10)
        assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
        # the command is stopped on the runtime thread right after (well before its 93 s are up)
        eventually(lambda: "sleep 93.25" not in _ps(), timeout=30)
        msgs = execute(kc, "import holon_nb; print(holon_nb.get_runtime().call('ListTasks').result['total_active'])")
        out = "".join(m["content"].get("text", "") for m in msgs if m["msg_type"] == "stream")
        assert out.strip() == "0"
