"""Helpers shared by the benchmarks: timing, RSS, result files."""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).with_name("results")


def median_ms(fn: Callable[[], object], runs: int, warmup: int = 5) -> float:
    """Median wall time of ``fn()`` in milliseconds over ``runs`` calls after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def interleaved_ms(fns: dict[str, Callable[[], object]], runs: int, warmup: int = 5) -> dict[str, float]:
    """Median wall time in milliseconds of each of ``fns``, timed in turn within each of ``runs`` rounds.

    On a shared machine the speed drifts over seconds; timing one function's runs after another's puts
    that drift into their ratio. Interleaved (the order rotating each round), every function sees the same
    machine, and a ratio of two medians compares like with like.
    """
    names = list(fns)
    for _ in range(warmup):
        for name in names:
            fns[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(runs):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            t0 = time.perf_counter()
            fns[name]()
            samples[name].append((time.perf_counter() - t0) * 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


def rss_kib() -> int:
    """Current resident set size of this process in KiB (``/proc/self/status`` VmRSS)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def hwm_kib() -> int:
    """Peak resident set size of this process in KiB (VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def save(name: str, data: dict) -> None:
    """Print ``data`` as JSON and store it under ``benchmarks/results/<name>.json``."""
    RESULTS.mkdir(exist_ok=True)
    data = {"benchmark": name, "cpus": os.cpu_count(), **data}
    text = json.dumps(data, indent=2)
    (RESULTS / f"{name}.json").write_text(text + "\n")
    print(text)


class Stamped:
    """A scripted provider that stamps each request's arrival (``time.perf_counter`` seconds) in ``stamps``."""

    def __init__(self, inner: Any):
        self.inner, self.route_ref, self.stamps = inner, inner.route_ref, []

    async def complete_turn(self, req: Any) -> Any:
        self.stamps.append(time.perf_counter())
        return await self.inner.complete_turn(req)
