"""Run every tutorial N times in a row headless and compare their normalised outputs.

A saved tutorial must read the same on every run: no "running" placeholder
left, no receipt missing or duplicated, no JSON envelope as text, no
temporary path. Outputs are normalised first: ids (``task_…``, ``work_…``,
…), timestamps, durations, commit hashes and temporary paths are replaced
by placeholders; what remains must be identical across runs.

Usage::

    python benchmarks/bench_tutorial_stability.py [--runs 20] [--only 03] [--keep DIR]

Prints one line per run and a JSON summary (also in
``benchmarks/results/tutorial_stability.json``): per tutorial the number of
distinct normalised outputs (1 means stable), the failed runs, the runs with a
placeholder, a JSON-envelope text or a temporary path, and wall times.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import save  # noqa: E402

from holon_nb.testing import format_summary, run_notebook  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

_RULES = [
    (
        re.compile(r"\b(task|work|timer|tool|msg|brief|turn|wait|ws|wt|trig|inv|run|occ|mem|call)_[0-9a-f]{6,}\b"),
        r"\1_<id>",
    ),
    (re.compile(r"(?<=_)[0-9a-f]{12,}"), "<id>"),  # an id cut short in a clipped value
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"), "<time>"),
    (re.compile(r"\b\d+(\.\d+)? ?(ms|s)\b"), "<dur>"),
    (re.compile(r"\b[0-9a-f]{7,40}\b"), "<hash>"),
    (re.compile(r"/tmp/[^\s'\"]+"), "<tmp>"),
    (re.compile(r"\b(tokens in|tokens out|in|out) \d+"), r"\1 <n>"),
    (re.compile(r"elapsed[^\n]*"), "elapsed <…>"),
]
_PLACEHOLDERS = ("replaces it when the task ends", "its final receipt will replace this line")


def normalise(text: str) -> str:
    """``text`` with run-specific values (ids, times, durations, hashes, temp paths) replaced."""
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return text


def texts(nb: dict) -> list[list[str]]:
    """Per code cell, the text of each output a text-only reader sees (stream text, ``text/plain``, errors)."""
    cells = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        outs = []
        previous = None
        for o in cell.get("outputs", []):
            if o["output_type"] == "stream":
                t = "".join(o["text"]) if isinstance(o["text"], list) else o["text"]
                if previous == o.get("name") and outs:  # one stream split in two messages reads the same
                    outs[-1] += t
                    continue
                previous = o.get("name")
                outs.append(t)
                continue
            elif o["output_type"] == "error":
                t = f"{o['ename']}: {o['evalue']}"
            else:
                t = o.get("data", {}).get("text/plain", "")
            previous = None
            outs.append("".join(t) if isinstance(t, list) else t)
        cells.append(outs)
    return cells


def fingerprint(cells: list[list[str]]) -> str:
    """A short hash of the normalised texts (each text normalised before it is joined)."""
    return hashlib.sha256(json.dumps([[normalise(t) for t in outs] for outs in cells]).encode()).hexdigest()[:12]


def check(cells: list[list[str]]) -> dict[str, bool]:
    """Reader-facing faults of one executed notebook."""
    flat = [t for outs in cells for t in outs]
    return {
        "placeholder": any(p in t for t in flat for p in _PLACEHOLDERS),
        "json_envelope": any(t.lstrip().startswith('{"tool_name"') for t in flat),
        "temp_path": any(re.search(r"/tmp/(holon-nb-run|tmp)", t) for t in flat),
    }


def analyse(copies: list[Path]) -> dict:
    """Variants and reader-facing faults of executed copies of one tutorial."""
    variants: dict[str, list[str]] = {}
    faults: dict[str, list[str]] = {"placeholder": [], "json_envelope": [], "temp_path": []}
    for out in copies:
        cells = texts(json.loads(out.read_text()))
        variants.setdefault(fingerprint(cells), []).append(out.name)
        for key, bad in check(cells).items():
            if bad:
                faults[key].append(out.name)
    return {
        "runs": len(copies),
        "distinct_normalised_outputs": len(variants),
        "variants": {k: len(v) for k, v in variants.items()},
        "first_run_of_variant": {k: v[0] for k, v in variants.items()},
        **{f"runs_{k}": v for k, v in faults.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--only", default="", help="run only tutorials whose name starts with this")
    parser.add_argument("--keep", default="", help="keep the executed copies in this directory")
    parser.add_argument(
        "--analyse",
        default="",
        metavar="DIR",
        help="do not run: compare the executed copies kept in DIR by an earlier run",
    )
    ns = parser.parse_args()
    if ns.analyse:
        summary = {}
        for src in sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb")):
            copies = sorted(Path(ns.analyse).glob(f"{src.stem}.run*.ipynb"))
            if copies:
                summary[src.stem] = analyse(copies)
        save("tutorial_stability_analysis", {"executed_copies": ns.analyse, "tutorials": summary})
        return
    keep = Path(ns.keep) if ns.keep else Path(tempfile.mkdtemp(prefix="holon-stability-"))
    keep.mkdir(parents=True, exist_ok=True)
    summary: dict[str, dict] = {}
    for src in sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb")):
        if ns.only and not src.name.startswith(ns.only):
            continue
        variants: dict[str, int] = {}
        first_of: dict[str, str] = {}
        faults = {"placeholder": [], "json_envelope": [], "temp_path": [], "failed": []}
        walls = []
        for i in range(1, ns.runs + 1):
            out = keep / f"{src.stem}.run{i:02d}.ipynb"
            t0 = time.monotonic()
            result = run_notebook(src, output=out, timeout=120)
            walls.append(time.monotonic() - t0)
            nb = json.loads(out.read_text())
            cells = texts(nb)
            digest = fingerprint(cells)
            variants[digest] = variants.get(digest, 0) + 1
            first_of.setdefault(digest, out.name)
            if result.exit_code != 0:
                faults["failed"].append(i)
                print(format_summary(result), flush=True)
            for key, bad in check(cells).items():
                if bad:
                    faults[key].append(i)
            print(f"{src.stem} run {i:2d}: exit {result.exit_code} {walls[-1]:.1f} s variant {digest}", flush=True)
        summary[src.stem] = {
            "runs": ns.runs,
            "distinct_normalised_outputs": len(variants),
            "variants": variants,
            "first_run_of_variant": first_of,
            **{f"runs_{k}": v for k, v in faults.items()},
            "wall_s_median": round(statistics.median(walls), 1),
            "wall_s_max": round(max(walls), 1),
        }
    save("tutorial_stability", {"executed_copies": str(keep), "tutorials": summary})


if __name__ == "__main__":
    main()
