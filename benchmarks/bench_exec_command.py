"""``Runtime.call("ExecCommand", {"cmd": "true"})`` vs ``subprocess.run(["sh", "-c", "true"])``.

Targets (issue 12): the default call (a login shell, through the shell snapshot) ≤ 3×
``sh -c true``; ``{"shell": "sh", "login": false}`` ≤ 1.5×. Also reports:

- ``sh -lc true`` and ``bash -c true``: what the shells themselves cost;
- ``floor_loop_thread_sh_c_true_ms``: the same ``sh -c true`` started by ``subprocess.Popen`` on an
  event-loop thread reached through an anyio blocking portal, and awaited through a pidfd and its
  two pipes, with nothing of holon_nb in it: the floor of any design that runs commands on a loop
  thread (two thread hops and three loop wake-ups per command), to show how much of the ratio is ours.

Run: ``python benchmarks/bench_exec_command.py [RUNS]``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile

import anyio.from_thread
from _common import interleaved_ms, median_ms, save

from holon_nb import Runtime


def _completed(rt: Runtime, args: dict) -> None:
    """One call; refuse to time anything but a command that ran to completion in the foreground."""
    disposition = rt.call("ExecCommand", args).envelope["result"]["disposition"]
    if disposition != "completed":  # e.g. a stalled login shell was promoted, and later calls reuse it
        raise SystemExit(f"ExecCommand {args} gave {disposition!r}, not 'completed': the timing would be wrong")


async def _bare_command() -> int:
    """``sh -c true`` with stdout/stderr pipes and a pidfd, awaited on the running loop."""
    loop = asyncio.get_running_loop()
    (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe()
    proc = subprocess.Popen(
        ["sh", "-c", "true"], stdin=subprocess.DEVNULL, stdout=out_w, stderr=err_w, start_new_session=True
    )
    os.close(out_w)
    os.close(err_w)
    pidfd = os.pidfd_open(proc.pid)
    pending, done = {out_r, err_r, pidfd}, loop.create_future()

    def ready(fd: int) -> None:
        if fd != pidfd and os.read(fd, 65536):
            return
        loop.remove_reader(fd)
        os.close(fd)
        pending.discard(fd)
        if fd == pidfd:
            proc.poll()
        if not pending and not done.done():
            done.set_result(proc.returncode)

    for fd in (out_r, err_r, pidfd):
        loop.add_reader(fd, ready, fd)
    return await done


def main(runs: int = 200) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        Runtime(home=f"{tmp}/home", workspace=tmp) as rt,
        anyio.from_thread.start_blocking_portal() as portal,
    ):
        # the ratios' terms are timed in turn, round by round (interleaved_ms): the machine's drift is in each
        timed = interleaved_ms(
            {
                "base": lambda: subprocess.run(["sh", "-c", "true"]),
                "ours": lambda: _completed(rt, {"cmd": "true"}),
                "ours_sh": lambda: _completed(rt, {"cmd": "true", "shell": "sh", "login": False}),
                "floor": lambda: portal.call(_bare_command),
            },
            runs,
        )
        base, ours, ours_sh, floor = timed["base"], timed["ours"], timed["ours_sh"], timed["floor"]
        login_sh = median_ms(lambda: subprocess.run(["sh", "-lc", "true"]), runs)
        bash_c = median_ms(lambda: subprocess.run(["bash", "-c", "true"]), runs)
    save(
        "exec_command",
        {
            "runs": runs,
            "subprocess_sh_c_true_ms": round(base, 3),
            "subprocess_sh_lc_true_ms": round(login_sh, 3),
            "subprocess_bash_c_true_ms": round(bash_c, 3),
            "floor_loop_thread_sh_c_true_ms": round(floor, 3),
            "ratio_floor": round(floor / base, 2),
            "exec_command_true_ms": round(ours, 3),
            "exec_command_true_sh_nologin_ms": round(ours_sh, 3),
            "ratio_default": round(ours / base, 2),
            "ratio_same_shell_invocation": round(ours_sh / base, 2),
        },
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
