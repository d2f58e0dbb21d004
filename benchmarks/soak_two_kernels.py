"""Two runtimes (two real processes) on one holon home under mixed load (issue 9).

Each worker process opens its own ``Runtime`` on the shared home and, until the duration
is over, picks one operation at a time (weights in ``_OPS``): a foreground ``ExecCommand``,
a background command task, ``CreateWorkItem``, a one-shot ``CreateTimer``, ``MemorySearch``
for a word it wrote earlier, ``ApplyPatch`` adding a file, ``TaskOutput`` of an earlier task.
Each worker also keeps two repeating timers (every 2 s) for the whole run. Between two
operations a worker pauses ``--pace-ms`` (the machine is shared).

Reported (goals from issue 9):

- ``errors_surfaced``: error envelopes and exceptions the callers saw, by kind (goal 0);
- ``records_lost``: after both processes closed, what is missing from the home: work items,
  tool-execution records, tasks not ``completed``, one-shot timers that never fired,
  patched files (goal 0);
- ``longest_write_tx_ms``: the longest time any write transaction of either runtime held
  the home's write lock, BEGIN IMMEDIATE to COMMIT, measured by the store (goal <= 50 ms),
  with where it came from and how many transactions exceeded 50 ms;
- call latency p50/p99/max over all calls and per tool.

Run: ``python benchmarks/soak_two_kernels.py [--duration-s 600] [--pace-ms 20]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _common import save

_OPS = (("exec", 30), ("task", 10), ("work_item", 15), ("timer", 5), ("search", 10), ("patch", 15), ("task_output", 5))


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def worker(index: int, home: str, workspace: str, duration_s: float, pace_ms: float, out: str) -> None:
    """One "kernel": a Runtime on the shared home, driven until ``duration_s`` passed."""
    from holon_nb import Runtime

    rng = random.Random(index)
    names = [n for n, w in _OPS for _ in range(w)]
    calls: list[tuple[str, float]] = []
    errors: dict[str, int] = {}
    created: dict[str, list] = {
        "work_items": [],
        "executions": [],
        "tasks": [],
        "timers": [],
        "files": [],
        "repeating": [],
    }
    words: list[str] = []
    rt = Runtime(home=home, workspace=workspace)

    def call(tool: str, args: dict) -> dict | None:
        started = time.perf_counter()
        try:
            r = rt.call(tool, args)
        except Exception as exc:  # noqa: BLE001 - an exception reaching a caller is what we count
            errors[f"exception:{type(exc).__name__}"] = errors.get(f"exception:{type(exc).__name__}", 0) + 1
            print(f"worker {index}: {tool} raised {exc!r}", file=sys.stderr)
            return None
        calls.append((tool, (time.perf_counter() - started) * 1000))
        created["executions"].append(r.execution_id)
        if not r.ok:
            kind = r.envelope["error"]["kind"]
            errors[kind] = errors.get(kind, 0) + 1
            print(f"worker {index}: {tool} -> {kind}: {r.envelope['error']['message'][:200]}", file=sys.stderr)
            return None
        return r.envelope["result"]

    for _ in range(2):
        res = call("CreateTimer", {"duration_ms": 2000, "interval_ms": 2000, "summary": f"soak repeat {index}"})
        if res:
            created["repeating"].append(res["timer"]["id"])
    deadline = time.monotonic() + duration_s
    n = 0
    while time.monotonic() < deadline:
        n += 1
        op = rng.choice(names)
        word = f"soak{index}w{n}{uuid.uuid4().hex[:6]}"
        if op == "exec":
            call("ExecCommand", {"cmd": f"echo {word}"})
            words.append(word)
        elif op == "task":
            res = call("ExecCommand", {"cmd": f"sleep 0.{rng.randint(1, 9)}; echo {word}", "yield_time_ms": 0})
            if res and res.get("task_handle"):
                created["tasks"].append(res["task_handle"]["task_id"])
        elif op == "work_item":
            res = call("CreateWorkItem", {"objective": f"soak objective {word}"})
            if res:
                created["work_items"].append(res["work_item"]["id"])
                words.append(word)
        elif op == "timer":
            res = call("CreateTimer", {"duration_ms": rng.randint(100, 1500), "summary": f"soak once {word}"})
            if res:
                created["timers"].append(res["timer"]["id"])
        elif op == "search":
            call("MemorySearch", {"query": rng.choice(words) if words else "soak"})
        elif op == "patch":
            rel = f"soak{index}/{word}.txt"
            res = call("ApplyPatch", {"patch": f"--- /dev/null\n+++ b/{rel}\n@@ -0,0 +1 @@\n+{word}\n"})
            if res is not None:
                created["files"].append([rel, word])
        elif op == "task_output" and created["tasks"]:
            call("TaskOutput", {"task_id": rng.choice(created["tasks"]), "block": False})
        time.sleep(pace_ms / 1000)
    still = rt.wait_for_tasks(60)
    time.sleep(2.0)  # one-shot timers created last get their chance to fire
    status = rt.status()
    rt.close()
    Path(out).write_text(
        json.dumps(
            {
                "worker": index,
                "calls": calls,
                "errors": errors,
                "created": created,
                "still_running": still,
                "store": status["store"],
                "loop_error": status["loop_error"],
                "background_failures": status["background_failures"],
            }
        )
    )


def _lost(home: Path, workspace: Path, results: list[dict], duration_s: float) -> dict[str, int]:
    db = sqlite3.connect(home / "holon.sqlite3")
    try:

        def exists(table: str, ids: list[str]) -> int:
            return sum(1 for i in ids if db.execute(f"SELECT 1 FROM {table} WHERE id=?", (i,)).fetchone())

        lost = {
            "work_items": 0,
            "executions": 0,
            "tasks_not_completed": 0,
            "timers_not_fired": 0,
            "repeating_timers_stalled": 0,
            "files": 0,
        }
        for res in results:
            c = res["created"]
            lost["work_items"] += len(c["work_items"]) - exists("work_items", c["work_items"])
            lost["executions"] += len(c["executions"]) - exists("tool_executions", c["executions"])
            for tid in c["tasks"]:
                row = db.execute("SELECT status FROM tasks WHERE id=?", (tid,)).fetchone()
                lost["tasks_not_completed"] += row is None or row[0] != "completed"
            for tid in c["timers"]:
                row = db.execute("SELECT fire_count FROM timers WHERE id=?", (tid,)).fetchone()
                lost["timers_not_fired"] += row is None or row[0] < 1
            for tid in c["repeating"]:  # every 2 s for the whole run: at least a third of its ticks
                row = db.execute("SELECT fire_count FROM timers WHERE id=?", (tid,)).fetchone()
                lost["repeating_timers_stalled"] += row is None or row[0] < max(1, int(duration_s / 2 / 3))
            for rel, word in c["files"]:
                path = workspace / rel
                lost["files"] += not path.is_file() or path.read_text() != word + "\n"
        return lost
    finally:
        db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration-s", type=float, default=600.0)
    parser.add_argument("--pace-ms", type=float, default=20.0)
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--home", help=argparse.SUPPRESS)
    parser.add_argument("--workspace", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.worker is not None:
        worker(a.worker, a.home, a.workspace, a.duration_s, a.pace_ms, a.out)
        return
    os.environ["SHELL"] = "/bin/sh"  # as tests/conftest.py: commands never start a login bash (pyenv lock)
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "W"
        workspace.mkdir()
        outs = [Path(tmp) / f"worker{i}.json" for i in range(2)]
        started = time.monotonic()
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--worker",
                    str(i),
                    "--home",
                    str(home),
                    "--workspace",
                    str(workspace),
                    "--duration-s",
                    str(a.duration_s),
                    "--pace-ms",
                    str(a.pace_ms),
                    "--out",
                    str(outs[i]),
                ]
            )
            for i in range(2)
        ]
        codes = [p.wait() for p in procs]
        wall_s = time.monotonic() - started
        results = [json.loads(o.read_text()) for o in outs if o.exists()]
        lost = _lost(home, workspace, results, a.duration_s)
    latencies = [ms for r in results for _, ms in r["calls"]]
    per_tool: dict[str, list[float]] = {}
    for r in results:
        for tool, ms in r["calls"]:
            per_tool.setdefault(tool, []).append(ms)
    errors: dict[str, int] = {}
    for r in results:
        for kind, count in r["errors"].items():
            errors[kind] = errors.get(kind, 0) + count
    longest = max(results, key=lambda r: r["store"]["tx_max_ms"]) if results else None
    save(
        "soak_two_kernels",
        {
            "duration_s": a.duration_s,
            "wall_s": round(wall_s, 1),
            "pace_ms": a.pace_ms,
            "exit_codes": codes,
            "calls": len(latencies),
            "errors_surfaced": sum(errors.values()),
            "errors_by_kind": errors,
            "records_lost": sum(lost.values()),
            "lost_by_kind": lost,
            "longest_write_tx_ms": longest["store"]["tx_max_ms"] if longest else None,
            "longest_write_tx_where": longest["store"]["tx_max_where"] if longest else None,
            # CPU time the longest transaction's thread spent in it: the rest was waiting for a CPU (or the GIL)
            "longest_write_tx_cpu_ms": longest["store"].get("tx_max_cpu_ms_of_longest") if longest else None,
            "most_cpu_in_one_write_tx_ms": max(r["store"].get("tx_max_cpu_ms", 0) for r in results)
            if results
            else None,
            "write_tx_over_50ms": sum(r["store"]["tx_over_50ms"] for r in results),
            "write_tx_count": sum(r["store"]["tx_count"] for r in results),
            "write_tx_mean_ms": round(statistics.mean(r["store"]["tx_mean_ms"] for r in results), 3)
            if results
            else None,
            "busy_retries": sum(r["store"]["busy_retries"] for r in results),
            "loop_errors": [r["loop_error"] for r in results if r["loop_error"]],
            "background_failures": sum(r["background_failures"] for r in results),
            "load_average_at_end": os.getloadavg(),
            "latency_ms": {"p50": _pct(latencies, 0.5), "p99": _pct(latencies, 0.99), "max": _pct(latencies, 1.0)},
            "latency_by_tool_ms": {
                t: {"n": len(v), "p50": _pct(v, 0.5), "p99": _pct(v, 0.99), "max": _pct(v, 1.0)}
                for t, v in sorted(per_tool.items())
            },
            "created": {
                k: sum(len(r["created"][k]) for r in results)
                for k in ("work_items", "executions", "tasks", "timers", "files", "repeating")
            },
        },
    )


if __name__ == "__main__":
    main()
