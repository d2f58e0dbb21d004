"""Kernels started ahead (``--holon-nb-start-ahead on|off``; issue 30; docs/large-suites.md): does starting the
next notebook's kernel while a notebook runs shorten a suite?

A small suite: tutorials 01 and 03 in each of ``--copies`` git clones of this checkout (as
``bench_suite_scaling.py`` builds them; 01 works in its own folder, ``shared_dir``, 03 in a private copy). Four
modes, interleaved within each round (the order rotating): serial and ``-n 2``, each with kernels started ahead
and without. Per run: wall time of the whole ``pytest --holon-nb`` session, the CPU seconds of the session and its
kernels (every reaped descendant), and the load average before and after. Reported: each mode's median wall
and CPU, and per round the ratio on / off of the serial and ``-n 2`` runs.

Run: ``python benchmarks/bench_kernels_ahead.py [--rounds 3] [--copies 3] [--books 01,03]``. Results go to
``benchmarks/results/kernels_ahead_<books>.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

import bench_suite_scaling as scaling
from _common import save

MODES = {
    "serial, ahead off": ["--holon-nb-start-ahead=off"],
    "serial, ahead on": ["--holon-nb-start-ahead=on"],
    "-n 2, ahead off": ["-n", "2", "--holon-nb-start-ahead=off"],
    "-n 2, ahead on": ["-n", "2", "--holon-nb-start-ahead=on"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--copies", type=int, default=3)
    parser.add_argument("--books", default="01,03", help="comma list of tutorial numbers (default 01,03)")
    ns = parser.parse_args()
    data: dict = {"load_at_start": [round(x, 2) for x in os.getloadavg()], "copies": ns.copies, "books": ns.books}
    runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="bench-ahead-") as tmp:
        folder = Path(tmp)
        prefixes = tuple(f"{b.strip()}-" for b in ns.books.split(","))
        for target in scaling._suite(folder, ns.copies):
            books = sorted(p for p in (folder / target).glob("0*.ipynb") if p.name.startswith(prefixes))
            scaling.BOOKS.extend(str(p.relative_to(folder)) for p in books)
        data["notebooks"] = len(scaling.BOOKS)
        order = list(MODES)
        for i in range(ns.rounds):
            for mode in order[i % len(order) :] + order[: i % len(order)]:
                result = scaling._run(folder, *MODES[mode])
                runs[mode].append(result)
                print(mode, result, flush=True)
    data["runs"] = runs
    data["median"] = {
        mode: {
            "wall_s": round(statistics.median(r["wall_s"] for r in rs), 2),
            "cpu_s": round(statistics.median(r["cpu_s"] for r in rs), 1),
            "exits": [r["exit"] for r in rs],
        }
        for mode, rs in runs.items()
    }
    for kind in ("serial", "-n 2"):
        on, off = runs[f"{kind}, ahead on"], runs[f"{kind}, ahead off"]
        ratios = [a["wall_s"] / b["wall_s"] for a, b in zip(on, off, strict=True)]
        data[f"{kind}: on / off wall, per round"] = [round(r, 3) for r in ratios]
        data[f"{kind}: on / off wall, median"] = round(statistics.median(ratios), 3)
    data["load_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print({k: v for k, v in data.items() if k != "runs"}, flush=True)
    save("kernels_ahead_" + "_".join(b.strip() for b in ns.books.split(",")), data)


if __name__ == "__main__":
    main()
