"""``Runtime.call("ApplyPatch", …)`` vs ``git apply`` of the same unified diff.

(1) A typical agent patch: 3 hunks in a 2,000-line file. (2) A 2,000-hunk
patch on a 50,000-line file (aim: ratio to ``git apply`` ≤ 3), plus our peak
memory for it (tracemalloc peak of the engine alone, and RSS growth of the
whole call). Every run starts from a fresh copy of the original file; only
the apply is timed. Prints figures; asserts nothing about speed.
Run: ``python benchmarks/bench_apply_patch.py [RUNS]``.
"""

from __future__ import annotations

import difflib
import gc
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from _common import rss_kib, save

from holon_nb import Runtime
from holon_nb.tools.patching import PathPolicy, apply_patch


def _make_file(n_lines: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "return", "value", "self", "item", "data", "index", "{", "}", "if"]
    lines = []
    for i in range(n_lines):
        indent = " " * (4 * rng.randint(0, 3))
        lines.append(f"{indent}{' '.join(rng.choice(words) for _ in range(rng.randint(1, 7)))}  # {i}\n")
    return lines


def _edit(lines: list[str], hunks: int, seed: int) -> list[str]:
    """Edit ``hunks`` well-separated places: replace one line, insert one, delete one, in turn."""
    rng = random.Random(seed)
    out = list(lines)
    step = len(lines) // hunks
    for k in reversed(range(hunks)):
        i = k * step + rng.randint(8, step - 8)  # ≥16 lines apart, so no two hunks merge
        kind = k % 3
        if kind == 0:
            out[i] = out[i].rstrip("\n") + "  # edited\n"
        elif kind == 1:
            out.insert(i, "    inserted_line = compute(value)\n")
        else:
            del out[i]
    return out


def _diff(before: list[str], after: list[str], name: str) -> str:
    return "".join(difflib.unified_diff(before, after, f"a/{name}", f"b/{name}", n=3))


def _timed(restore: Callable[[], None], run: Callable[[], None], runs: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        restore()
        run()
    samples = []
    for _ in range(runs):
        restore()
        t0 = time.perf_counter()
        run()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def _compare(
    work: Path, rt: Runtime, name: str, original: bytes, patch: str, expected: bytes, runs: int
) -> tuple[float, float]:
    """Median ms of ours and of ``git apply``, sampled alternately so machine load hits both alike."""
    target = work / name
    patch_file = work.parent / f"{name}.diff"
    patch_file.write_text(patch)

    def ours() -> None:
        env = rt.call("ApplyPatch", {"patch": patch}).envelope
        if env["status"] != "success":
            raise SystemExit(f"ApplyPatch failed: {env['error']}")

    def git() -> None:
        subprocess.run(["git", "apply", "--whitespace=nowarn", str(patch_file)], cwd=work, check=True)

    samples: dict[str, list[float]] = {"ours": [], "git": []}
    for i in range(runs + 2):
        for label, fn in (("ours", ours), ("git", git)):
            target.write_bytes(original)
            t0 = time.perf_counter()
            fn()
            elapsed = (time.perf_counter() - t0) * 1000
            if target.read_bytes() != expected:
                raise SystemExit(f"{label} produced different bytes than expected")
            if i >= 2:  # the first two rounds warm up
                samples[label].append(elapsed)
    return statistics.median(samples["ours"]), statistics.median(samples["git"])


def main(runs: int = 50) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "W"
        work.mkdir()
        with Runtime(home=Path(tmp) / "home", workspace=work) as rt:
            small = _make_file(2_000, 1)
            small_after = _edit(small, 3, 2)
            small_patch = _diff(small, small_after, "small.py")
            s_ours, s_git = _compare(
                work, rt, "small.py", "".join(small).encode(), small_patch, "".join(small_after).encode(), runs
            )
            policy = PathPolicy(execution_root=str(work), bound_roots=(str(work),))
            s_engine = _timed(
                lambda: (work / "small.py").write_text("".join(small)), lambda: apply_patch(small_patch, policy), runs
            )

            big = _make_file(50_000, 3)
            big_after = _edit(big, 2_000, 4)
            big_patch = _diff(big, big_after, "big.py")
            big_runs = max(3, runs // 10)
            b_ours, b_git = _compare(
                work, rt, "big.py", "".join(big).encode(), big_patch, "".join(big_after).encode(), big_runs
            )

            (work / "big.py").write_text("".join(big))
            gc.collect()
            rss_before = rss_kib()
            rt.call("ApplyPatch", {"patch": big_patch})
            rss_growth = rss_kib() - rss_before

            (work / "big.py").write_text("".join(big))
            gc.collect()
            tracemalloc.start()
            apply_patch(big_patch, policy)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
    save(
        "apply_patch",
        {
            "runs_typical": runs,
            "runs_large": big_runs,
            "typical_file_lines": 2_000,
            "typical_hunks": 3,
            "typical_patch_bytes": len(small_patch.encode()),
            "typical_apply_patch_ms": round(s_ours, 3),
            "typical_git_apply_ms": round(s_git, 3),
            "typical_ratio": round(s_ours / s_git, 2),
            "typical_engine_only_ms": round(s_engine, 3),
            "large_file_lines": 50_000,
            "large_hunks": big_patch.count("\n@@ "),
            "large_file_bytes": len("".join(big).encode()),
            "large_patch_bytes": len(big_patch.encode()),
            "large_apply_patch_ms": round(b_ours, 1),
            "large_git_apply_ms": round(b_git, 1),
            "large_ratio": round(b_ours / b_git, 2),
            "large_engine_tracemalloc_peak_mib": round(peak / 2**20, 1),
            "large_call_rss_growth_mib": round(rss_growth / 1024, 1),
        },
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
