"""``Runtime.call("ExecCommand", {"cmd": "true"})`` vs ``subprocess.run(["sh", "-c", "true"])``.

Target (issue): median ratio ≤ 1.5. Also reports ``login=false`` (``sh -c``,
no profile sourcing) to separate the shell's login cost from ours.
Run: ``python benchmarks/bench_exec_command.py [RUNS]``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile

from _common import median_ms, save

from holon_nb import Runtime


def _completed(rt: Runtime, args: dict) -> None:
    """One call; refuse to time anything but a command that ran to completion in the foreground."""
    disposition = rt.call("ExecCommand", args).envelope["result"]["disposition"]
    if disposition != "completed":  # e.g. a stalled login shell was promoted, and later calls reuse it
        raise SystemExit(f"ExecCommand {args} gave {disposition!r}, not 'completed': the timing would be wrong")


def main(runs: int = 200) -> None:
    with tempfile.TemporaryDirectory() as tmp, Runtime(home=f"{tmp}/home", workspace=tmp) as rt:
        base = median_ms(lambda: subprocess.run(["sh", "-c", "true"]), runs)
        ours = median_ms(lambda: _completed(rt, {"cmd": "true"}), runs)
        ours_sh = median_ms(lambda: _completed(rt, {"cmd": "true", "shell": "sh", "login": False}), runs)
        login_sh = median_ms(lambda: subprocess.run(["sh", "-lc", "true"]), runs)
    save("exec_command", {
        "runs": runs,
        "subprocess_sh_c_true_ms": round(base, 3),
        "subprocess_sh_lc_true_ms": round(login_sh, 3),
        "exec_command_true_ms": round(ours, 3),
        "exec_command_true_sh_nologin_ms": round(ours_sh, 3),
        "ratio_default": round(ours / base, 2),
        "ratio_same_shell_invocation": round(ours_sh / base, 2),
    })


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
