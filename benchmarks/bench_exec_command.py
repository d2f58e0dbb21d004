"""``Runtime.call("ExecCommand", {"cmd": "true"})`` vs ``subprocess.run(["sh", "-c", "true"])``.

Targets (issue 12): the default call (a login shell, through the shell snapshot) ≤ 3×
``sh -c true``; ``{"shell": "sh", "login": false}`` ≤ 1.5×. Two ways of measuring them:

- the steady state: one runtime, its calls interleaved one by one with ``sh -c true`` (``RUNS`` rounds),
  the median of single calls;
- ``fresh_<shell>_*`` (issue 27 item 7): as a user meets it, in a new Python process with ``SHELL``
  set to the shell, a fresh ``Runtime`` on a fresh home, 5 warm-up calls of each term, then 9
  interleaved rounds of 20 calls each; a term's figure is the median over the rounds of a round's
  mean call, so the work a call leaves behind (store flushes, collection of its garbage) is in
  it; the memory indexer waits until no call has run for 0.2 s (``runtime/memory/_service.py: QUIET_S``,
  at most ``MAX_DEFER_S`` = 5 s later), so the indexing of a burst of calls follows the burst, outside
  these rounds. Run for the user's shell (``HOLON_BENCH_SHELL``, else ``$SHELL``, e.g.
  ``/bin/bash``, whose login profile the default call's snapshot records) and for ``/bin/sh``.
  Each term also reports, per call, the CPU of this process (``*_cpu_us``, all its threads: the runtime's
  loop and its background work included), of the commands (``*_child_cpu_us``), and how many times one of
  this process's threads slept and woke (``*_sleeps``, voluntary context switches): figures the machine's
  load changes less than the wall time.

Also reports:

- ``sh -lc true`` and ``bash -c true``: what the shells themselves cost;
- ``floor_loop_thread_sh_c_true_ms``: the same ``sh -c true`` started by ``subprocess.Popen`` on an
  event-loop thread reached through an anyio blocking portal, and awaited through a pidfd and its
  two pipes, with nothing of holon_nb in it: what starting and awaiting commands on a loop thread
  costs (two thread hops and three loop wake-ups per command). A direct ExecCommand starts its command
  on the calling thread (``runtime/tasks/_early.py``), so its first hop overlaps the command and it can
  come in under this figure.

Run: ``python benchmarks/bench_exec_command.py [RUNS]``; ``--fresh-only`` runs only the fresh cases
(``python benchmarks/bench_exec_command.py --fresh-only``).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

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


FRESH_WARMUP, FRESH_ROUNDS, FRESH_CALLS = 5, 9, 20


def fresh_case() -> dict[str, float]:
    """The issue 27 item 7 measurement, in this process (its ``SHELL`` chooses the default call's shell)."""
    with tempfile.TemporaryDirectory() as tmp, Runtime(home=f"{tmp}/home", workspace=tmp) as rt:
        terms = {
            "base": lambda: subprocess.run(["sh", "-c", "true"]),
            "default": lambda: _completed(rt, {"cmd": "true"}),
            "sh_nologin": lambda: _completed(rt, {"cmd": "true", "shell": "sh", "login": False}),
        }
        for _ in range(FRESH_WARMUP):
            for fn in terms.values():
                fn()
        rounds: dict[str, list[float]] = {name: [] for name in terms}
        used = {name: [0.0, 0.0, 0] for name in terms}  # parent CPU s, children's CPU s, voluntary switches
        names = list(terms)
        for i in range(FRESH_ROUNDS):  # the order rotates each round, as in interleaved_ms
            for name in names[i % len(names) :] + names[: i % len(names)]:
                fn = terms[name]
                before = _usage()
                t0 = time.perf_counter()
                for _ in range(FRESH_CALLS):
                    fn()
                rounds[name].append((time.perf_counter() - t0) * 1000 / FRESH_CALLS)
                used[name] = [u + a - b for u, a, b in zip(used[name], _usage(), before, strict=True)]
    calls = FRESH_ROUNDS * FRESH_CALLS
    figures = {name: statistics.median(values) for name, values in rounds.items()}
    for name, (cpu, children, switches) in used.items():
        figures[f"{name}_cpu_us"] = cpu / calls * 1e6
        figures[f"{name}_child_cpu_us"] = children / calls * 1e6
        figures[f"{name}_sleeps"] = switches / calls
    return figures


def _usage() -> tuple[float, float, int]:
    """CPU seconds of this process (all its threads) and of its reaped children, and its voluntary context
    switches (each a sleep and a wake-up of one of its threads): a call's costs apart from the machine's load."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime, own.ru_nvcsw


def _fresh(shell: str) -> dict[str, float]:
    """:func:`fresh_case` in a new interpreter whose ``SHELL`` is ``shell``; its figures keyed ``fresh_<shell>_*``."""
    out = subprocess.run(
        [sys.executable, __file__, "--fresh-case"],
        env={**os.environ, "SHELL": shell},
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    key = f"fresh_{os.path.basename(shell)}"
    return {
        f"{key}_sh_c_true_ms": round(got["base"], 3),
        f"{key}_exec_command_true_ms": round(got["default"], 3),
        f"{key}_exec_command_true_sh_nologin_ms": round(got["sh_nologin"], 3),
        f"{key}_ratio_default": round(got["default"] / got["base"], 2),
        f"{key}_ratio_same_shell_invocation": round(got["sh_nologin"] / got["base"], 2),
        **{
            f"{key}_{term}_{what}": round(got[f"{name}_{what}"], 1)
            for term, name in (("sh_c_true", "base"), ("default", "default"), ("sh_nologin", "sh_nologin"))
            for what in ("cpu_us", "child_cpu_us", "sleeps")
        },
    }


def fresh_figures() -> dict[str, float | str]:
    """The fresh case for the user's shell (``HOLON_BENCH_SHELL``, else ``$SHELL``) and for ``/bin/sh``."""
    user = os.environ.get("HOLON_BENCH_SHELL") or os.environ.get("SHELL") or "/bin/sh"
    figures: dict[str, float | str] = {"fresh_user_shell": user}
    for shell in dict.fromkeys([user, "/bin/sh"]):
        figures.update(_fresh(shell))
    figures["load_average_1min"] = round(os.getloadavg()[0], 2)
    return figures


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
            **fresh_figures(),
        },
    )


if __name__ == "__main__":
    if sys.argv[1:] == ["--fresh-case"]:
        print(json.dumps(fresh_case()))
    elif sys.argv[1:] == ["--fresh-only"]:
        save("exec_command_fresh", fresh_figures())
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
