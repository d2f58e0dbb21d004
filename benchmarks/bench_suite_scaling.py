"""Notebook suites on one machine and beyond (issue 30; docs/large-suites.md).

A suite of 24 notebooks: the eight tutorials in each of three git clones of this checkout (``copy-K/holon_nb``; the
tutorials run git in their checkout), with their ``*.holon`` fixtures beside them (none needs the network: 04, 06, 07 and 08 replay recorded model or MCP
calls from cassettes, 05 and 08 reach only servers they start on 127.0.0.1). Timed, the modes interleaved within
each round (the order rotating), wall time of the whole ``pytest --holon-nb`` session:

- ``serial``: one process;
- ``-n 2``: pytest-xdist, two workers, notebooks longest first by the durations the serial run recorded;
- ``gateway -n 2``: two workers whose kernels run on a ``jupyter kernelgateway`` on 127.0.0.1 (two kernels
  at a time);
- ``shards``: ``--holon-nb-shard K/4`` for K = 1..4, one after the other, split by the serial run's durations
  (``--holon-nb-durations``): each shard's wall time, and the spread (max - min) / max.

Then a projection from the serial run's per-notebook durations: 200 notebooks (the 24 measured costs
repeated in turn) on 8 workers, packed longest first (what ``-n 8`` with recorded durations does), plus the
measured fixed cost of a session, against serial / 8.

Each run also records the CPU seconds its processes used (the session, its workers, their local kernels):
CPU / wall near the number of cores says the cores were busy throughout, and a kernel started ahead of need
would only compete with the running ones.

The machine's load average is recorded before and after each run: other work on a shared machine slows
some runs, and the interleaving spreads that over the modes.

Run: ``python benchmarks/bench_suite_scaling.py [--rounds 1] [--copies 3]``. Results go to
``benchmarks/results/suite_scaling.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import save

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("HOLON_NB_", "PYTEST_", "JUPYTER_GATEWAY"))}


def _suite(folder: Path, copies: int) -> list[str]:
    """``copies`` git clones of this checkout (its tracked files as they are in the working tree) under
    ``folder/copy-K/holon_nb``: the tutorials run git in their checkout (02 clones it and patches and tests
    holon_nb there), and each copy's ``notebooks/`` is a folder of its own (01, 02 and 04 run in their folder,
    ``shared_dir``, one at a time per folder). Returns the notebook folders to test, relative to ``folder``."""
    from _gateway import clone_checkout  # (tests/_gateway.py)

    base = clone_checkout(folder / "base")
    targets = []
    for k in range(1, copies + 1):
        subprocess.run(["git", "clone", "-q", str(base), str(folder / f"copy-{k}" / "holon_nb")], check=True)
        targets.append(f"copy-{k}/holon_nb/notebooks")
    # one rootdir for the whole suite, as a real suite has: without it pytest takes copy-1's pyproject.toml as
    # its ini file, and the notebooks of the other copies, outside that rootdir, get node ids without their
    # folder that collide (copy-2's 01-quickstart.ipynb is copy-3's): their durations would add up under one key
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return targets


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # every reaped descendant: pytest, workers, kernels
    return usage.ru_utime + usage.ru_stime


BOOKS: list[str] = []


def _run(folder: Path, *args: str) -> dict:
    load = os.getloadavg()[0]
    cpu = _cpu()
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--holon-nb", *args, *BOOKS],
        cwd=folder,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    wall = time.monotonic() - t0
    cpu = _cpu() - cpu
    tail = [line for line in proc.stdout.splitlines() if " passed" in line or " failed" in line][-1:]
    return {
        "wall_s": round(wall, 2),
        # CPU seconds of the session and its local kernels (a gateway's kernels are the gateway's children,
        # not counted): cpu / wall near the core count means no core sat idle for a kernel started ahead to use
        "cpu_s": round(cpu, 1),
        "cpu/wall": round(cpu / wall, 2),
        "exit": proc.returncode,
        "summary": tail,
        "load_before": round(load, 2),
        "load_after": round(os.getloadavg()[0], 2),
        **({"output_tail": proc.stdout[-3000:] + proc.stderr[-1500:]} if proc.returncode else {}),
    }


def _shard_nodes(recorded: dict[str, float], k: int) -> list[str]:
    """The notebooks of shard ``k`` (0-based) of 4, as the plugin splits them (same function, same durations)."""
    from holon_nb.testing._suites._order import bins

    weight = {n.rsplit("::", 1)[0]: v for n, v in recorded.items() if ".ipynb::" in n}
    return [f"{g}::notebook" for g in bins(weight, 4)[k]]


def _lpt(costs: list[float], workers: int) -> float:
    """Makespan of greedy longest-first packing of ``costs`` onto ``workers``."""
    loads = [0.0] * workers
    for c in sorted(costs, reverse=True):
        loads[loads.index(min(loads))] += c
    return max(loads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--copies", type=int, default=3)
    parser.add_argument(
        "--modes", default="serial,-n 2,gateway -n 2,shards", help="comma list of the modes to time (default: all)"
    )
    ns = parser.parse_args()
    from _gateway import kernel_gateway

    # this checkout's bytecode compiled, as an installed wheel's is (else every kernel compiles holon_nb)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "holon_nb")], check=True)
    data: dict = {"load_at_start": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as tmp:
        folder = Path(tmp)
        books = _suite(folder, ns.copies)
        BOOKS[:] = books
        data["notebooks"] = sum(len(list((folder / b).glob("0*.ipynb"))) for b in books)
        durations = folder / "durations.json"
        # a first serial run records the durations the ordering and the shards use
        first = _run(folder, f"--holon-nb-durations={durations}", "--holon-nb-store-durations")
        data["recording run (serial)"] = first
        recorded = json.loads(durations.read_text())
        with kernel_gateway(folder) as (url, token):
            modes = {
                "serial": [f"--holon-nb-durations={durations}"],
                "-n 2": ["-n", "2", f"--holon-nb-durations={durations}"],
                "gateway -n 2": ["-n", "2", f"--holon-nb-durations={durations}"]
                + ["--holon-nb-gateway", url, "--holon-nb-gateway-token", token],
                "shards": [],
            }
            modes = {m: a for m, a in modes.items() if m in ns.modes.split(",")}
            runs: dict[str, list[dict]] = {m: [] for m in modes}
            order = list(modes)
            for i in range(ns.rounds):
                for mode in order[i % len(order) :] + order[: i % len(order)]:
                    if mode != "shards":
                        runs[mode].append(_run(folder, *modes[mode]))
                        continue
                    shards = [
                        _run(folder, f"--holon-nb-shard={k}/4", f"--holon-nb-durations={durations}")
                        for k in range(1, 5)
                    ]
                    walls = [s["wall_s"] for s in shards]
                    for k, shard in enumerate(shards):  # what the split expected: the recorded durations' sum
                        shard["recorded_sum_s"] = round(sum(recorded[n] for n in _shard_nodes(recorded, k)), 1)
                    runs[mode].append(
                        {
                            "shards": shards,
                            "walls_s": walls,
                            "spread (max-min)/max": round((max(walls) - min(walls)) / max(walls), 3),
                        }
                    )
    data["recorded durations (serial)"] = recorded
    for mode, rows in runs.items():
        data[mode] = rows
        if mode != "shards":
            data[f"{mode} median_s"] = statistics.median(r["wall_s"] for r in rows)
    serial = data.get("serial median_s")
    for mode in ("-n 2", "gateway -n 2"):
        if serial and f"{mode} median_s" in data:
            data[f"speed-up {mode}"] = round(serial / data[f"{mode} median_s"], 3)
    data["goal -n 2"] = 1.7
    if runs.get("shards"):
        data["shard spread (median over rounds)"] = statistics.median(r["spread (max-min)/max"] for r in runs["shards"])
        expected = [s["recorded_sum_s"] for s in runs["shards"][0]["shards"]]
        data["shard spread of the recorded sums"] = round((max(expected) - min(expected)) / max(expected), 3)
    data["goal shard spread"] = 0.15

    costs = [v for k, v in recorded.items() if ".ipynb::" in k]
    overhead = max(0.0, first["wall_s"] - sum(costs))  # the session's own cost: start-up, collection
    projected = [costs[i % len(costs)] for i in range(200)]
    makespan = _lpt(projected, 8)
    data["projection 200 notebooks on 8 workers"] = {
        "per-notebook cost median_s": round(statistics.median(costs), 2),
        "per-notebook cost max_s": round(max(costs), 2),
        "serial_s": round(sum(projected) + overhead, 1),
        "serial/8_s": round((sum(projected) + overhead) / 8, 1),
        "session overhead_s": round(overhead, 1),
        "8 workers longest first_s": round(makespan + overhead, 1),
        "ratio to serial/8": round((makespan + overhead) / ((sum(projected) + overhead) / 8), 3),
        "goal": 1.2,
        "assumes": "8 cores, one per worker, each notebook costing what it cost in the serial run",
    }
    data["load_at_end"] = [round(x, 2) for x in os.getloadavg()]
    save("suite_scaling", data)


if __name__ == "__main__":
    main()
