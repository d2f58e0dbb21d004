"""TaskStop on a tree of 10 processes: time until every process of the tree is gone.

Target (issue): p50 < 200 ms. Each run starts a promoted task whose shell
forks 9 ``sleep`` children (10 processes with the shell), calls TaskStop and
polls ``/proc`` until none of the 10 pids is alive (a zombie awaiting its
reaper counts as gone). Run: ``python benchmarks/bench_task_stop.py [RUNS]``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import save

from holon_nb import Runtime

TREE = "for i in 1 2 3 4 5 6 7 8 9; do sleep 1000 & done; echo $$ $(jobs -p | tr '\\n' ' '); wait"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def main(runs: int = 30) -> None:
    samples = []
    with tempfile.TemporaryDirectory() as tmp, Runtime(home=f"{tmp}/home", workspace=tmp) as rt:
        for _ in range(runs):
            r = rt.call("ExecCommand", {"cmd": TREE, "yield_time_ms": 300, "login": False, "shell": "bash"})
            tid = r.result["task_handle"]["task_id"]
            pids = [int(p) for p in r.result.get("initial_output_preview", "").split()]
            assert len(pids) == 10, pids
            t0 = time.perf_counter()
            rt.call("TaskStop", {"task_id": tid})
            while any(_alive(p) for p in pids):
                time.sleep(0.001)
            samples.append((time.perf_counter() - t0) * 1000)
            rt.call("TaskOutput", {"task_id": tid, "timeout_ms": 5000})
    samples.sort()
    save(
        "task_stop",
        {
            "runs": runs,
            "processes_per_tree": 10,
            "p50_ms": round(statistics.median(samples), 1),
            "p90_ms": round(samples[int(0.9 * (len(samples) - 1))], 1),
            "max_ms": round(samples[-1], 1),
        },
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
