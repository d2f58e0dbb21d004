"""Notebooks as regression tests (notebook-tests spec §6, §7): holon-nb test vs nbval vs nbmake.

Parts (all by default; ``--part NAME`` to pick, repeatable):

- ``compare``: comparing a 200-cell notebook (receipts, streams, rich outputs) with a run that differs
  only in volatile values: median ms of :func:`~holon_nb.testing._compare.compare_notebooks` with a fresh
  :class:`~holon_nb.testing.normalize.Normalizer` (goal < 100 ms).
- ``regressions``: a generated notebook (an ``%exec`` receipt, a printed line, a display updated by
  ``display_id``) recorded with ``holon-nb test --holon-nb-update``; then four seeded regressions — the
  command's exit status changes (0 -> 1), a receipt field is dropped, a printed line changes, a display
  update is lost — and which tool fails on each (a tool that also fails the unseeded baseline detects
  nothing: it cannot be used on that notebook).
- ``tools``: wall time of ``holon-nb test``, ``pytest --nbmake`` and ``pytest --nbval`` on the tutorials
  (in a fresh clone of this repository, in place, as CI runs them), on the tutorials without a
  ``holon-restart-kernel`` cell (nbclient ignores the tag, so such a tutorial runs another way under
  nbmake and nbval) and on a 200-cell generated notebook (``--targets`` picks); runs interleaved, median
  of ``--reps`` (default 2); plus the extension's import (``import holon_nb`` and ``%load_ext holon_nb``
  in a fresh interpreter). Goal: holon <= 1.1 x nbmake + import.
- ``peers``: the peer suites' own notebooks (``tests/notebooks/{nbval,pytest_notebook,nbmake}``, each with the
  verdicts its tests state) under the peer itself and under ``holon-nb test``: agreement and false passes.
- ``nbval``: ``holon-nb test`` against ``pytest --nbval`` on the same five ordinary notebooks (the
  determinism set's d1-d5), interleaved, median of ``--nbval-reps`` rounds (default 7). Goal: <= 1.1x.
  ``--nbval-baseline DIR`` times the ``holon_nb`` of another checkout (say, the commit before a change) as a
  third command in the same rounds, so before and after meet the same machine.
- ``phases``: per tutorial, where ``holon-nb test``'s time goes (kernel start and ready, the notebook's
  cells, the harness's own requests, kernel shutdown, folder copy, compare) and a bare nbclient run of
  the same notebook (nbmake's core) for the ratio.
- ``xdist``: ``pytest --holon-nb notebooks/`` with ``-n 0`` and ``-n 2``.
- ``repeat``: ``holon-nb test notebooks/ --holon-nb-repeat N`` (``--repeat N``, default 20): pass/fail, time.

nbval and nbmake are not dependencies: ``pip install nbval nbmake`` in the benchmark's environment.
Results go to ``benchmarks/results/notebook_tests.json``; a run of some parts (``--part``) replaces those parts
there and keeps the others' last results.

Run: ``python benchmarks/bench_notebook_tests.py [--part compare] [--repeat 20]``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from _common import median_ms, save

from holon_nb.testing._compare import compare_notebooks
from holon_nb.testing.normalize import RESULT_MIMETYPE, Normalizer, Roots

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
RESULTS_DIR = Path(__file__).resolve().parent / "results"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HOLON_NB_", "PYTEST_", "SEED_"))}
    env.update(extra)
    return env


def _pytest(args: list[str], cwd: Path, **env: str) -> tuple[int, float, str]:
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=cwd,
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    return proc.returncode, time.monotonic() - t0, proc.stdout[-3000:] + proc.stderr[-2000:]


# ------------------------------------------------------------------------------------------------ compare
def _receipt(rng: random.Random, i: int) -> dict:
    return {
        "tool_name": "ExecCommand",
        "status": "success",
        "summary_text": "command exited with status 0",
        "result": {
            "task_id": f"task_{rng.getrandbits(60):015x}",
            "duration_ms": rng.randint(1, 900),
            "started_at": f"2026-12-01T15:{rng.randint(10, 59)}:00.{rng.randint(0, 999999):06d}Z",
            "cwd": f"/tmp/tmp{rng.getrandbits(30):x}/work",
            "exit_status": 0,
            "stdout_preview": f"line {i}\n" * 5,
            "usage": {"input": rng.randint(1, 99)},
        },
    }


def _big_notebook(seed: int) -> nbformat.NotebookNode:
    rng = random.Random(seed)
    nb = nbformat.v4.new_notebook()
    for i in range(200):
        cell = nbformat.v4.new_code_cell(f"cell {i}")
        kind = i % 4
        if kind == 0:
            data = {RESULT_MIMETYPE: _receipt(rng, i), "text/plain": f"receipt {i}", "text/html": "<b>x</b>"}
            cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
        elif kind == 1:
            cell.outputs = [
                nbformat.v4.new_output("stream", name="stdout", text=f"\r10%\r100% step {i}\n" * 3),
                nbformat.v4.new_output("stream", name="stdout", text=f"done in {rng.random():.2f} s\n"),
            ]
        elif kind == 2:
            cell.outputs = [
                nbformat.v4.new_output(
                    "execute_result", data={"text/plain": f"<Obj at 0x{rng.getrandbits(40):x}>"}, execution_count=i
                )
            ]
        else:
            cell.outputs = [
                nbformat.v4.new_output("display_data", data={"text/plain": f"value {i}", "text/html": f"<i>{i}</i>"})
            ]
        nb.cells.append(cell)
    return nb


def part_compare() -> dict:
    saved, fresh = _big_notebook(1), _big_notebook(2)
    diffs: list = []

    def run() -> None:
        norm = Normalizer(Roots.current(workspace=ROOT))
        diffs[:] = compare_notebooks(saved, fresh, norm)

    ms = median_ms(run, runs=20, warmup=3)
    changed = copy.deepcopy(fresh)
    changed.cells[0].outputs[0].data[RESULT_MIMETYPE]["result"]["exit_status"] = 1
    found = compare_notebooks(saved, changed, Normalizer(Roots.current(workspace=ROOT)))
    return {
        "cells": 200,
        "compare_median_ms": round(ms, 2),
        "goal_ms": 100,
        "equal_after_masks": diffs == [],
        "seeded_difference_found": [d.index for d in found] == [0],
    }


# ------------------------------------------------------------------------------------------- regressions
SEEDED_CELLS = [
    "%load_ext holon_nb",
    "import os",
    "%exec sh -c 'echo built; exit ${SEED_EXIT:-0}'",
    "print(os.environ.get('SEED_LINE', 'rows: 42'))",
    "from IPython.display import display\n"
    "h = display('progress: started', display_id=True)\n"
    "if not os.environ.get('SEED_NO_UPDATE'):\n"
    "    h.update('progress: finished')",
]


def _regression_notebook(folder: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in SEEDED_CELLS]
    path = folder / "seeded.ipynb"
    nbformat.write(nb, path)
    code, _, out = _pytest(["--holon-nb", "--holon-nb-update", path.name], folder)
    assert code == 0, out
    return path


def _drop_field(path: Path) -> None:
    """Seed 'a receipt lost a field': the saved receipt has a field this run no longer produces."""
    nb = nbformat.read(path, as_version=4)
    for out in nb.cells[2].outputs:
        if RESULT_MIMETYPE in out.get("data", {}):
            out.data[RESULT_MIMETYPE]["result"]["artifact_path"] = "out/report.csv"
            out.data["text/plain"] += "\nartifact_path: out/report.csv"
    nbformat.write(nb, path)


# the other tools run with holon_nb's plugin off: in this repository `holon_nb_paths` would otherwise have
# pytest collect (and run) every tutorial a second time, as holon_nb items, in the same session
TOOLS = {
    "holon-nb test": ["--holon-nb"],
    "nbval": ["--nbval", "-p", "no:holon_nb"],
    "nbval --nbval-lax": ["--nbval-lax", "-p", "no:holon_nb"],
    "nbmake": ["--nbmake", "-p", "no:holon_nb"],
}


def part_regressions() -> dict:
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-seeded-") as tmp:
        folder = Path(tmp)
        base = _regression_notebook(folder)
        pristine = base.read_bytes()
        seeds = {
            "baseline": {},
            "exit status 0 -> 1": {"SEED_EXIT": "1"},
            "dropped receipt field": "drop",
            "changed stream line": {"SEED_LINE": "rows: 41"},
            "display update lost": {"SEED_NO_UPDATE": "1"},
        }
        for tool, args in TOOLS.items():
            row = {}
            for seed, env in seeds.items():
                base.write_bytes(pristine)
                if env == "drop":
                    _drop_field(base)
                    env = {}
                code, secs, out = _pytest([*args, base.name], folder, **env)
                row[seed] = "fails" if code == 1 else ("passes" if code == 0 else f"exit {code}")
            baseline_ok = row["baseline"] == "passes"
            row["detected"] = [s for s in seeds if s != "baseline" and baseline_ok and row[s] == "fails"]
            results[tool] = row
    return results


# ------------------------------------------------------------------------------------------------ peers
PEER_SUITES = ROOT / "tests" / "notebooks"
#: pytest-notebook's own settings for a notebook, as its test of that notebook gives them
#: (tests/test_nb_regression.py: test_regression_diff_ignore_pass); others run with its defaults
PYTEST_NOTEBOOK_INI = {
    "different_outputs.ipynb": [
        "/metadata/language_info/version",
        "/cells/*/execution_count",
        "/cells/*/outputs/*/traceback",
        "/cells/*/outputs/*/execution_count",
        "/cells/12/outputs/0/data/text/latex",
        "/cells/9/outputs/0/metadata/application/json",
    ]
}


def _verdicts(suite: str) -> dict[str, str]:
    """``{notebook: expected verdict}`` of a peer suite, from its test module (tests/notebooks/test_<suite>_samples.py)."""
    import importlib.util

    path = PEER_SUITES / f"test_{suite}_samples.py"
    spec = importlib.util.spec_from_file_location(f"_samples_{suite}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {name: (v if isinstance(v, str) else v[0]) for name, v in module.VERDICTS.items()}


def _peer_run(suite: str, tool: str, name: str, folder: Path) -> str:
    """One notebook of a peer suite (its folder copied to ``folder``) under ``tool``: pass, fail or skip."""
    ini = folder / "pytest.ini"
    lines = ["[pytest]"]
    if tool == "holon-nb test":
        args = ["--holon-nb"]
        if suite == "nbval" and name == "sample_notebook.ipynb":  # nbval's Makefile runs it with this file
            args += ["--holon-nb-sanitize-with", str(PEER_SUITES / "fidelity" / "nbval_sanitize_defaults.cfg")]
    elif tool == "nbval":
        args = ["--nbval", "-p", "no:holon_nb"]
        if name == "sample_notebook.ipynb":
            args += ["--nbval-sanitize-with", str(PEER_SUITES / "fidelity" / "nbval_sanitize_defaults.cfg")]
    elif tool == "nbmake":
        args = ["--nbmake", "-p", "no:holon_nb"]
    else:  # pytest-notebook
        args = ["--nb-test-files", "-p", "no:holon_nb", "--nb-exec-cwd", str(folder)]
        if name in PYTEST_NOTEBOOK_INI:
            lines += ["nb_diff_ignore ="] + [f"    {x}" for x in PYTEST_NOTEBOOK_INI[name]]
    ini.write_text("\n".join(lines) + "\n")
    code, _, out = _pytest([*args, "-rs", name], folder)
    if code == 0:
        return "skip" if " skipped" in out and " passed" not in out else "pass"
    return "fail" if code == 1 else f"exit {code}"


def part_peers() -> dict:
    """Each peer suite's notebooks (tests/notebooks/{nbval,pytest_notebook,nbmake}) under the peer itself and
    under ``holon-nb test``: agreement with the verdicts the peer's own tests state (a skip counts as a pass),
    and false passes (a pass where the verdict is fail)."""
    peers = {"nbval": "nbval", "pytest_notebook": "pytest-notebook", "nbmake": "nbmake"}
    out: dict = {}
    for suite, peer in peers.items():
        verdicts = _verdicts(suite)
        rows: dict = {}
        for name, want in verdicts.items():
            row: dict = {"expected": want}
            for tool in (peer, "holon-nb test"):
                with tempfile.TemporaryDirectory(prefix="bench-peers-") as tmp:
                    folder = Path(tmp) / suite
                    shutil.copytree(PEER_SUITES / suite, folder, ignore=shutil.ignore_patterns("*.md"))
                    row[tool] = _peer_run(suite, tool, name, folder)
            rows[name] = row
        summary = {}
        for tool in (peer, "holon-nb test"):
            got = {n: ("pass" if r[tool] == "skip" else r[tool]) for n, r in rows.items()}
            summary[tool] = {
                "agree": f"{sum(got[n] == r['expected'] for n, r in rows.items())}/{len(rows)}",
                "false_passes": [n for n, r in rows.items() if r["expected"] == "fail" and got[n] == "pass"],
                "false_failures": [n for n, r in rows.items() if r["expected"] == "pass" and got[n] != "pass"],
            }
        out[suite] = {"notebooks": rows, "summary": summary}
        print(suite, json.dumps(summary), flush=True)
    return out


# ------------------------------------------------------------------------------------------------ tools
def _import_ms() -> float:
    code = (
        "import time\n"
        "from IPython.testing.globalipapp import start_ipython\n"
        "ip = start_ipython(); t = time.perf_counter(); ip.run_line_magic('load_ext', 'holon_nb')\n"
        "print((time.perf_counter() - t) * 1000)"
    )  # import holon_nb and %load_ext, IPython already up
    samples = []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as home:
            out = subprocess.run(
                [sys.executable, "-c", code],
                env=_env(HOLON_NB_HOME=home),
                capture_output=True,
                text=True,
                timeout=120,
                cwd=home,
            )
            samples.append(float(out.stdout.strip().splitlines()[-1]))
    return min(samples)


def _big_runnable(folder: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cells = ["%load_ext holon_nb"]
    for i in range(1, 200):
        if i % 20 == 0:
            cells.append(f"%exec echo step {i}")
        elif i % 3 == 0:
            cells.append(f"from IPython.display import display\ndisplay({{'text/plain': 'value {i}'}}, raw=True)")
        else:
            cells.append(f"print('line', {i})")
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    path = folder / "big200.ipynb"
    nbformat.write(nb, path)
    code, _, out = _pytest(["--holon-nb", "--holon-nb-update", path.name], folder)
    assert code == 0, out
    return path


def _checkout(tmp: Path) -> Path:
    """A fresh clone of this repository at its HEAD commit, as CI has it (tutorials 02 and 04 need a
    standalone git checkout: they clone it and attach it as a workspace; a linked worktree or a copy of
    ``notebooks/`` outside git changes what they show)."""
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    repo = tmp / "holon_nb"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True, timeout=300)
    # on a branch called main, as CI's clone is (tutorial 02 shows the branch of its clone)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-B", "main", head], check=True, timeout=60)
    return repo


def part_tools(reps: int = 2, targets: tuple[str, ...] = ("tutorials", "tutorials-no-restart", "big")) -> dict:
    """Wall time of each tool on the tutorials (in a fresh clone, in place) and on the 200-cell notebook.

    Runs are interleaved (holon, nbmake, nbval, holon, …) so a burst of load from other processes
    hits every tool alike; the figure is the median of ``reps`` runs (min also given)."""
    results: dict = {"extension_import_ms": round(_import_ms(), 1), "reps": reps}
    with tempfile.TemporaryDirectory(prefix="bench-tools-") as tmp:
        folder = Path(tmp)
        repo = _checkout(folder)
        tutorials = sorted(p for p in (repo / "notebooks").glob("0*.ipynb"))
        # nbclient (so nbmake, nbval) ignores the holon-restart-kernel tag: a tutorial with it runs another
        # way there (tutorial 03 then waits out its timer, 30 s more), so the ratio is given without it too
        plain = [p for p in tutorials if "holon-restart-kernel" not in p.read_text(encoding="utf-8")]
        chosen: dict = {}
        if "tutorials" in targets:
            chosen[f"tutorials ({len(tutorials)})"] = (["notebooks"], repo, len(tutorials))
        if "tutorials-no-restart" in targets:
            chosen[f"tutorials without a kernel restart ({len(plain)})"] = (
                [str(p.relative_to(repo)) for p in plain],
                repo,
                len(plain),
            )
        if "big" in targets:
            chosen["200-cell notebook"] = ([_big_runnable(folder).name], folder, 1)
        for label, (target, cwd, count) in chosen.items():
            tools = {k: v for k, v in TOOLS.items() if k != "nbval --nbval-lax"}
            times: dict[str, list[float]] = {t: [] for t in tools}
            codes: dict[str, list[int]] = {t: [] for t in tools}
            for _ in range(reps):
                for tool, args in tools.items():
                    code, secs, _ = _pytest([*args, *target], cwd)
                    times[tool].append(secs)
                    codes[tool].append(code)
            row: dict = {
                tool: {
                    "wall_s": round(statistics.median(times[tool]), 2),
                    "min_s": round(min(times[tool]), 2),
                    "runs_s": [round(t, 2) for t in times[tool]],
                    "exit": codes[tool],
                }
                for tool in tools
            }
            nbmake = row["nbmake"]["wall_s"]
            row["holon / nbmake"] = round(row["holon-nb test"]["wall_s"] / nbmake, 3)
            row["holon / nbmake (min)"] = round(row["holon-nb test"]["min_s"] / row["nbmake"]["min_s"], 3)
            row["goal holon <= s"] = round(1.1 * nbmake + results["extension_import_ms"] / 1000 * count, 2)
            results[label] = row
    return results


# ------------------------------------------------------------------------------------------------ nbval
#: ordinary notebooks both tools run as they are: the determinism set's first five (seeded random data,
#: timestamps, a progress bar, warnings, pandas); nbval fails some of them (it masks nothing), which
#: costs it no extra time
NBVAL_BOOKS = ("d1-random", "d2-timestamps", "d3-progress", "d4-warnings", "d5-pandas")


def part_nbval(reps: int = 7, baseline: Path | None = None) -> dict:
    """``holon-nb test`` against ``pytest --nbval`` on the same five notebooks (:data:`NBVAL_BOOKS`, copied to a
    temporary folder), one session of each per round, the order rotating each round so drift in the
    machine's speed reaches every command alike; the ratio of the medians (goal <= 1.1). With ``baseline`` (a
    checkout holding ``holon_nb/``), ``holon-nb test`` of that checkout runs in the same rounds too."""
    # each tool with the other notebook plugins off (a user has one), and this checkout's bytecode compiled
    # as installing a wheel compiles it (a machine with PYTHONDONTWRITEBYTECODE=1 never writes it, and every
    # kernel would compile holon_nb from source: ~0.3 s per notebook that an installed holon_nb never pays)
    for root in (ROOT, *([baseline] if baseline else [])):
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(root / "holon_nb")], check=True, capture_output=True
        )
    others = ["-p", "no:nbmake", "-p", "no:nb_regression"]
    commands = {
        "holon-nb test": [
            sys.executable,
            "-m",
            "holon_nb.cli",
            "test",
            "-p",
            "no:cacheprovider",
            "-q",
            "-p",
            "no:nbval",
        ],
        "pytest --nbval": [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "--nbval",
            "-p",
            "no:holon_nb",
        ],
    }
    commands = {tool: [*cmd, *others] for tool, cmd in commands.items()}
    envs = {tool: _env() for tool in commands}
    if baseline is not None:  # its harness and, through kernel_env, its kernels import the baseline's holon_nb
        tool = f"holon-nb test ({baseline})"
        commands[tool] = commands["holon-nb test"]
        path = os.pathsep.join(filter(None, [str(baseline), os.environ.get("PYTHONPATH")]))
        envs[tool] = _env(PYTHONPATH=path)
    times: dict[str, list[float]] = {t: [] for t in commands}
    codes: dict[str, list[int]] = {t: [] for t in commands}
    with tempfile.TemporaryDirectory(prefix="bench-nbval-") as tmp:
        folder = Path(tmp)
        books = []
        for name in NBVAL_BOOKS:
            shutil.copy(PEER_SUITES / "determinism" / f"{name}.ipynb", folder)
            books.append(f"{name}.ipynb")
        order = list(commands)
        for i in range(reps):
            for tool in order[i % len(order) :] + order[: i % len(order)]:
                t0 = time.monotonic()
                proc = subprocess.run(
                    [*commands[tool], *books], cwd=folder, env=envs[tool], capture_output=True, text=True, timeout=1800
                )
                times[tool].append(time.monotonic() - t0)
                codes[tool].append(proc.returncode)
    row: dict = {
        tool: {
            "median_s": round(statistics.median(times[tool]), 2),
            "min_s": round(min(times[tool]), 2),
            "runs_s": [round(t, 2) for t in times[tool]],
            "exit": codes[tool],
        }
        for tool in commands
    }
    row["notebooks"] = list(NBVAL_BOOKS)
    row["ratio (medians)"] = round(row["holon-nb test"]["median_s"] / row["pytest --nbval"]["median_s"], 3)
    row["ratio (per round, median)"] = round(
        statistics.median(a / b for a, b in zip(times["holon-nb test"], times["pytest --nbval"], strict=True)), 3
    )
    row["goal"] = 1.1
    if baseline is not None:
        before = times[f"holon-nb test ({baseline})"]
        row["baseline ratio (medians)"] = round(
            statistics.median(before) / statistics.median(times["pytest --nbval"]), 3
        )
        row["this / baseline (medians)"] = round(
            statistics.median(times["holon-nb test"]) / statistics.median(before), 3
        )
    return row


# ----------------------------------------------------------------------------------------------- phases
def part_phases() -> dict:
    """Where ``holon-nb test``'s time goes, per tutorial (in a fresh clone): check_notebook in this process
    with its phases timed (kernel start, each cell, the harness's own requests, kernel shutdown, compare),
    then a bare nbclient run of the same notebook (what nbmake does) for the ratio."""
    import functools
    from collections import defaultdict

    from nbclient import NotebookClient

    from holon_nb.testing import _harness as harness
    from holon_nb.testing import check

    spent: dict[str, float] = defaultdict(float)

    def timed(owner: object, name: str, label: str, is_async: bool) -> None:
        fn = getattr(owner, name)
        if is_async:

            async def wrapper(*a: object, **k: object) -> object:
                t0 = time.perf_counter()
                try:
                    return await fn(*a, **k)
                finally:
                    spent[label] += time.perf_counter() - t0
        else:

            def wrapper(*a: object, **k: object) -> object:  # type: ignore[misc]
                t0 = time.perf_counter()
                try:
                    return fn(*a, **k)
                finally:
                    spent[label] += time.perf_counter() - t0

        setattr(owner, name, functools.wraps(fn)(wrapper))

    # the harness's own requests: preload, final wait (synthetic cells) and the silent ones; cells = execute
    for name in ("execute", "synthetic", "silent", "restart"):
        timed(harness._Run, name, name, True)
    timed(NotebookClient, "async_start_new_kernel", "kernel start", True)
    timed(NotebookClient, "async_start_new_kernel_client", "kernel ready", True)
    timed(NotebookClient, "_async_cleanup_kernel", "kernel shutdown", True)
    timed(check, "compare_notebooks", "compare", False)
    timed(check, "private_copy", "folder copy", False)
    timed(harness.PreparedRun, "execute", "run_notebook", False)  # (check runs each run as a PreparedRun)

    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-phases-") as tmp:
        repo = _checkout(Path(tmp))
        for path in sorted((repo / "notebooks").glob("0*.ipynb")):
            spent.clear()
            t0 = time.perf_counter()
            result = check.check_notebook(path, check.CheckOptions())
            total = time.perf_counter() - t0
            phases = {k: round(v, 3) for k, v in spent.items()}
            # execute includes the synthetic cells; report the notebook's own cells apart
            phases["cells"] = round(spent["execute"] - spent["synthetic"], 3)
            phases["harness requests"] = round(spent["synthetic"] + spent["silent"], 3)
            phases["outside the kernel run"] = round(total - spent["run_notebook"], 3)
            del phases["execute"]
            nb = nbformat.read(path, as_version=4)
            for cell in nb.cells:
                if cell.cell_type == "code":
                    cell.outputs = []
            client = NotebookClient(nb, timeout=300, record_timing=True, kernel_name="python3", allow_errors=True)
            with tempfile.TemporaryDirectory() as home:
                os.environ["HOLON_NB_HOME"] = home
                t0 = time.perf_counter()
                try:
                    client.execute(cwd=str(path.parent))
                finally:
                    bare = time.perf_counter() - t0
                    del os.environ["HOLON_NB_HOME"]
            out[path.name] = {
                "holon_s": round(total, 2),
                "failed": result.failed,
                "bare_nbclient_s": round(bare, 2),
                "ratio": round(total / bare, 3),
                "phases_s": phases,
            }
    out["total"] = {
        "holon_s": round(sum(v["holon_s"] for v in out.values()), 2),
        "bare_nbclient_s": round(sum(v["bare_nbclient_s"] for v in out.values()), 2),
    }
    out["total"]["ratio"] = round(out["total"]["holon_s"] / out["total"]["bare_nbclient_s"], 3)
    return out


# ------------------------------------------------------------------------------------------ xdist/repeat
def part_xdist() -> dict:
    """``pytest --holon-nb -n 0`` vs ``-n 2`` on the tutorials (in a fresh clone)."""
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-xdist-") as tmp:
        repo = _checkout(Path(tmp))
        for n in ("0", "2"):
            code, secs, _ = _pytest(["--holon-nb", "-n", n, "notebooks/"], repo)
            out[f"-n {n}"] = {"wall_s": round(secs, 2), "exit": code}
    out["speed-up"] = round(out["-n 0"]["wall_s"] / out["-n 2"]["wall_s"], 2)
    return out


def part_repeat(n: int) -> dict:
    """``holon-nb test notebooks/ --holon-nb-repeat N`` (in a fresh clone): exit status, time, and the reports
    of the failing notebooks (each cell, which run differed, and the value); pytest's whole output goes to
    ``results/notebook_tests_repeat_N.txt``."""
    with tempfile.TemporaryDirectory(prefix="bench-repeat-") as tmp:
        repo = _checkout(Path(tmp))
        t0 = time.monotonic()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-q",
                "--holon-nb",
                f"--holon-nb-repeat={n}",
                "notebooks/",
            ],
            cwd=repo,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=6 * 3600,
        )
        secs = time.monotonic() - t0
    lines = proc.stdout.splitlines()  # the reports of the failing notebooks: pytest's FAILURES section
    start = next((i for i, line in enumerate(lines) if "= FAILURES =" in line), len(lines))
    end = next((i for i, line in enumerate(lines) if "short test summary" in line), len(lines))
    failures = lines[start + 1 : end][:400]
    (RESULTS_DIR / f"notebook_tests_repeat_{n}.txt").write_text(proc.stdout + proc.stderr[-5000:])
    summary = [line for line in proc.stdout.splitlines() if " passed" in line or " failed" in line][-1:]
    return {"repeat": n, "exit": proc.returncode, "wall_s": round(secs, 1), "summary": summary, "failures": failures}


ALL_PARTS = ("compare", "regressions", "peers", "tools", "nbval", "phases", "xdist", "repeat")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", action="append", choices=ALL_PARTS)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--reps", type=int, default=2, help="runs of each tool in the tools part (median)")
    parser.add_argument("--nbval-reps", type=int, default=7, help="rounds of the nbval part (median)")
    parser.add_argument(
        "--nbval-baseline",
        type=Path,
        default=None,
        metavar="DIR",
        help="nbval part: also time holon-nb test of the checkout DIR (its holon_nb/) in the same rounds",
    )
    parser.add_argument(
        "--targets",
        default="tutorials,tutorials-no-restart,big",
        help="tools part: comma list of tutorials, tutorials-no-restart, big",
    )
    ns = parser.parse_args()
    parts = ns.part or list(ALL_PARTS)
    data: dict = {"measured_under_load": os.getloadavg()[0], "load_at_start": [round(x, 2) for x in os.getloadavg()]}
    for part in parts:
        t0 = time.monotonic()
        load_before = [round(x, 2) for x in os.getloadavg()]
        if part == "repeat":
            data[part] = part_repeat(ns.repeat)
        elif part == "tools":
            data[part] = part_tools(ns.reps, tuple(ns.targets.split(",")))
        elif part == "nbval":
            data[part] = part_nbval(ns.nbval_reps, ns.nbval_baseline.resolve() if ns.nbval_baseline else None)
        else:
            data[part] = globals()[f"part_{part}"]()
        data[part]["_part_s"] = round(time.monotonic() - t0, 1)
        data[part]["_load_before"] = load_before
        data[part]["_load_after"] = [round(x, 2) for x in os.getloadavg()]
        print(part, json.dumps(data[part]), flush=True)
    previous = RESULTS_DIR / "notebook_tests.json"
    if ns.part is not None and previous.exists():  # the parts not run keep their last results
        kept = {k: v for k, v in json.loads(previous.read_text()).items() if k in ALL_PARTS and k not in parts}
        data = {**data, **kept}
    save("notebook_tests", data)


if __name__ == "__main__":
    main()
