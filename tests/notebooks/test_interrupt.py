"""Ctrl-C in a real kernel while ``%exec`` waits in its foreground window stops the command.

The kernel is interrupted (SIGINT through the kernel manager) 1.5 s into a
30 s foreground wait: the cell ends with KeyboardInterrupt, the command's
process group is gone, and the runtime still answers.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from _support import execute, holon_kernel


def test_interrupt_stops_the_foreground_command(tmp_path: Path) -> None:
    with holon_kernel(tmp_path) as (km, kc):
        msg_id = kc.execute("%exec --yield-ms 30000 sleep 93.25; echo fg")
        time.sleep(1.5)
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=10)
        while reply["parent_header"].get("msg_id") != msg_id:  # replies of earlier cells first
            reply = kc.get_shell_msg(timeout=10)
        assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
        deadline = time.monotonic() + 3  # the command is stopped on the runtime thread right after
        while time.monotonic() < deadline:
            ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
            if "sleep 93.25" not in ps:
                break
            time.sleep(0.05)
        assert "sleep 93.25" not in ps
        msgs = execute(kc, "import holon_nb; print(holon_nb.get_runtime().call('ListTasks').result['total_active'])")
        out = "".join(m["content"].get("text", "") for m in msgs if m["msg_type"] == "stream")
        assert out.strip() == "0"
