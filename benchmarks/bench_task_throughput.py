"""512 MiB of output through a promoted task vs ``cat`` of the same bytes into a pipe.

Reports throughput (MB/s) of both, their ratio, and this process's peak RSS
growth while the task streams (target: < 64 MiB). The task log cap is raised
to 1 GiB so every byte is written (with the default 256 MiB cap the log stops
growing and the run is faster). Run: ``python benchmarks/bench_task_throughput.py [MIB]``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from _common import hwm_kib, rss_kib, save

from holon_nb import Runtime, RuntimeSettings


def main(mib: int = 512, rounds: int = 5) -> None:
    """``rounds`` alternations of ``cat`` and the task; medians of each (a single pair varied 0.3-2x here:
    the task writes its 512 MiB log to disk, and the page cache's writeback lands on either side)."""
    nbytes = mib * 1024 * 1024
    producer = f"head -c {nbytes} /dev/zero | tr '\\0' x"
    settings = RuntimeSettings(max_task_log_bytes=1024 * 1024 * 1024)
    cat_times, ours_times, growth = [], [], 0
    with tempfile.TemporaryDirectory() as tmp, Runtime(home=f"{tmp}/home", workspace=tmp, settings=settings) as rt:
        rt.call("ExecCommand", {"cmd": "true"})
        rss0 = rss_kib()
        for _ in range(rounds):
            t0 = time.perf_counter()
            subprocess.run(["sh", "-c", f"{producer} | cat > /dev/null"], check=True)
            cat_times.append(time.perf_counter() - t0)
            hwm0 = hwm_kib()
            t0 = time.perf_counter()
            r = rt.call("ExecCommand", {"cmd": producer, "yield_time_ms": 0, "login": False})
            tid = r.result["task_handle"]["task_id"]
            out = rt.call("TaskOutput", {"task_id": tid, "timeout_ms": 600_000})
            ours_times.append(time.perf_counter() - t0)
            status = out.result["task"]["status"]
            log = out.result["task"]["artifacts"][0]["path"]
            log_bytes = os.path.getsize(log)
            os.unlink(log)  # the next round starts with the same free page cache
            growth = max(growth, hwm_kib() - max(hwm0, rss0))
    cat_s, ours_s = statistics.median(cat_times), statistics.median(ours_times)
    save(
        "task_throughput",
        {
            "mib": mib,
            "rounds": rounds,
            "cat_pipe_mb_s": round(nbytes / cat_s / 1e6, 1),
            "promoted_task_mb_s": round(nbytes / ours_s / 1e6, 1),
            "ratio_task_to_cat": round(cat_s / ours_s, 3),
            "ratio_per_round": [round(c / o, 2) for c, o in zip(cat_times, ours_times, strict=False)],
            "task_status": status,
            "log_bytes": log_bytes,
            "rss_before_mib": round(rss0 / 1024, 1),
            "peak_rss_growth_mib": round(max(0, growth) / 1024, 1),
        },
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 512)
