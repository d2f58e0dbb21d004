"""How soon calls that must not wait for a command come back: the speed goals the tests no longer time (issue 23).

The tests check what these calls do with events (the command still runs when the call has returned, the
window ended before the command did); how fast they return is measured here, on a quiet machine, against
the bounds the tests used to assert:

- ``process_true_ms``: ``CommandProcess.spawn`` of ``bash -c true`` until ``wait`` returns (goal < 200 ms);
- ``process_stop_tree_ms``: ``CommandProcess.stop`` of a shell with a child loop (goal < 2000 ms);
- ``process_background_child_ms`` / ``exec_background_child_ms``: ``sleep 30 & echo done`` returns with
  the shell, not with the child holding its stdout (goal < 1000 ms / < 2000 ms);
- ``process_cat_without_input_ms`` / ``exec_cat_without_input_ms``: ``cat; echo after-cat`` (stdin is
  ``/dev/null``; goal < 1000 ms);
- ``exec_promotion_300_ms``: ``ExecCommand`` of ``sleep 1000`` with a 300 ms window (goal < 2000 ms);
- ``batch_item_timeout_200_ms``: ``ExecCommandBatch`` item ``sleep 600`` with a 200 ms window (goal < 2000 ms);
- ``task_output_timeout_300_ms``: ``TaskOutput`` blocking 300 ms on a running task (goal 300-1000 ms);
- ``close_in_foreground_window_ms``: ``Runtime.close`` while a call waits in its window (goal < 5000 ms);
- ``folder_too_large_ms``: ``check_notebook`` refusing a folder too large to copy (no kernel; goal < 5000 ms);
- ``follower_timeout_300_ms``: a ``TurnFollower(timeout_s=0.3)`` whose wake never comes (goal < 10000 ms).

Run: ``python benchmarks/bench_prompt_returns.py [RUNS]``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import anyio
from _common import save

from holon_nb import Runtime
from holon_nb.runtime.tasks._processes import CommandProcess, LaunchSpec


def _ms(fn: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(samples), 1)


def _process(spool: Path, cmd: str, then: str = "wait") -> None:
    async def go() -> None:
        spec = LaunchSpec(argv=("bash", "-c", cmd), cwd=str(spool.parent), env=dict(os.environ), spool_dir=spool)
        proc = await CommandProcess.spawn(spec)
        if then == "stop":
            while "child-tick" not in proc.combined.tail():
                await anyio.sleep(0.005)
            t0 = time.perf_counter()
            await proc.stop()
            _process.stop_ms.append((time.perf_counter() - t0) * 1000)
        else:
            assert await proc.wait(30)
        proc.signal_group(signal.SIGKILL)  # a background child the command left
        proc.discard_spools()

    anyio.run(go)


_process.stop_ms = []  # type: ignore[attr-defined]


def _close_in_window(tmp: str) -> float:
    from holon_nb.tools._errors import RuntimeClosed

    rt = Runtime(home=f"{tmp}/close-home", workspace=tmp)

    def call() -> None:
        with contextlib.suppress(RuntimeClosed):  # what the call answers when the runtime closes under it
            rt.call("ExecCommand", {"cmd": "sleep 91.5", "yield_time_ms": 30000})

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    while not any("sleep 91.5" in p.read_text(errors="replace") for p in Path("/proc").glob("[0-9]*/cmdline")):
        time.sleep(0.01)
    t0 = time.perf_counter()
    try:
        rt.close()
    finally:
        thread.join(30)
    return (time.perf_counter() - t0) * 1000


def _folder_too_large(tmp: str) -> None:
    import nbformat

    from holon_nb.testing import _workdir as workdir
    from holon_nb.testing._workdir import FolderTooLarge
    from holon_nb.testing.check import check_notebook

    folder = Path(tmp) / "big"
    folder.mkdir(exist_ok=True)
    for i in range(6):
        (folder / f"f{i}.txt").write_text("x")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]), folder / "nb.ipynb")
    limit, workdir.MAX_FILES = workdir.MAX_FILES, 3
    try:
        check_notebook(folder / "nb.ipynb")
    except FolderTooLarge:
        pass
    finally:
        workdir.MAX_FILES = limit


def _follower_timeout(rt: Runtime) -> None:
    from holon_nb.providers.scripted import ScriptedProvider, Step
    from holon_nb.runtime.turns._follow import TurnFollower

    wait = {"reason": "need the go-ahead", "wake": "operator_input", "delivery": "silent"}
    ref = "scripted@default/scripted"
    rt.providers.register(ref, ScriptedProvider([Step.tool_use("w1", "WaitFor", wait)]))
    TurnFollower(rt, timeout_s=0.3).run("ask me first", model=ref)


def main(runs: int = 10) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        spool = Path(tmp) / "spool"
        spool.mkdir()
        data: dict[str, object] = {"runs": runs}
        data["process_true_ms"] = _ms(lambda: _process(spool, "true"), runs)
        data["process_background_child_ms"] = _ms(lambda: _process(spool, "sleep 30 & echo done"), runs)
        data["process_cat_without_input_ms"] = _ms(lambda: _process(spool, "cat; echo after-cat"), runs)
        for _ in range(runs):
            _process(spool, "(while true; do echo child-tick; sleep 1; done) & sleep 600", then="stop")
        data["process_stop_tree_ms"] = round(statistics.median(_process.stop_ms), 1)  # type: ignore[attr-defined]
        with Runtime(home=f"{tmp}/home", workspace=tmp) as rt:

            def background_child() -> None:
                pid = int(rt.call("ExecCommand", {"cmd": "sleep 30 & echo $!"}).result["stdout_preview"])
                os.kill(pid, signal.SIGKILL)

            data["exec_background_child_ms"] = _ms(background_child, runs)
            data["exec_cat_without_input_ms"] = _ms(lambda: rt.call("ExecCommand", {"cmd": "cat; echo x"}), runs)

            def promotion() -> None:
                r = rt.call("ExecCommand", {"cmd": "sleep 1000", "yield_time_ms": 300, "duplicate_policy": "start_new"})
                promotion.tasks.append(r.result["task_handle"]["task_id"])

            promotion.tasks = []  # type: ignore[attr-defined]
            data["exec_promotion_300_ms"] = _ms(promotion, runs)
            tid = promotion.tasks[0]  # type: ignore[attr-defined]
            data["task_output_timeout_300_ms"] = _ms(
                lambda: rt.call("TaskOutput", {"task_id": tid, "block": True, "timeout_ms": 300}), runs
            )
            for task in promotion.tasks:  # type: ignore[attr-defined]
                rt.call("TaskStop", {"task_id": task})
            batch = {"items": [{"cmd": "sleep 600", "yield_time_ms": 200}]}
            data["batch_item_timeout_200_ms"] = _ms(lambda: rt.call("ExecCommandBatch", batch), runs)
            data["follower_timeout_300_ms"] = _ms(lambda: _follower_timeout(rt), min(runs, 3))
        data["close_in_foreground_window_ms"] = round(_close_in_window(tmp), 1)
        data["folder_too_large_ms"] = _ms(lambda: _folder_too_large(tmp), runs)
    save("prompt_returns", data)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
