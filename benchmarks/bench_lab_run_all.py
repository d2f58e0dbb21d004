"""Every tutorial run N times in a row in JupyterLab, as a person runs it, on a loaded machine (issue 26).

One JupyterLab on 127.0.0.1 serves a temporary copy of this checkout (a git repository, as tutorials 01
and 02 expect), and one headless chromium drives it; every run of every tutorial happens in that copy's
one ``notebooks/`` folder. For each tutorial, N times: open it, clear its outputs, Kernel > Restart
Kernel…, Run > Run All Cells, wait until every cell finished (the kernel idle, no cell queued, no live
view still running; generous timeouts), File > Save Notebook, reload the page, then check what the page
shows and the saved file holds:

- no traceback inside a success receipt (a ``holon-receipt`` card whose pill says success/completed);
- no ``already_running`` receipt where the tutorial expects a result (no tutorial expects one);
- no live badge still saying running/queued, no "its final receipt will replace this line" placeholder,
  no "no longer updated" note on a view of the kernel that is still running;
- no widget error ("Error displaying widget", "Loading widget...", a disconnected widget shown);
- every code cell ran, and the saved file has no ``error`` output and no traceback on stderr.

A tutorial with a cell tagged ``holon-restart-kernel`` (03) is run as its markdown asks a person: Run All
stops at that cell (it raises a UsageError until the kernel was restarted; checked), then Kernel >
Restart Kernel…, select that cell and Run > Run Selected Cell and All Below. Like the browser tests
(tests/browser/conftest.py), the server's kernels get ``HOLON_NB_HEADLESS=1``, so 03's timer is due in
10 s instead of the two minutes it gives a person. The steps are tests/_browser.py's.

``--load N`` starts N busy Python loops (``while True: pass``) for the whole benchmark: "another
CPU-heavy process". Kernels import this checkout's holon_nb (``PYTHONPATH``), or with ``--installed`` the one
installed beside the Python that runs the benchmark (issue 26's binder check: run it with the Python of a fresh
``pip install -r binder/requirements.txt`` environment, plus playwright to drive the browser). Bounded: every wait has a
timeout, and no run starts after ``--max-minutes``. Loopback only.

Usage::

    python benchmarks/bench_lab_run_all.py [--runs 10] [--only 03] [--load 1] [--artifacts DIR]

Prints one line per run and a JSON summary (also in ``benchmarks/results/lab_run_all.json``): per
tutorial clean/total, each failure with its reasons, wall times. A screenshot of the final state after
the reload of every run goes to ``--artifacts`` (default ``benchmarks/results/lab_run_all/``) as
``NN-runKK.png``; a failed run also leaves its saved notebook there (``NN-runKK.ipynb``). First a control
notebook with the defects looked for (an already_running receipt, a traceback in a success receipt, an
error output) is run the same way: the summary says which of them the checks missed (``--no-control``
skips it).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(Path(__file__).parent), str(REPO / "tests"), str(REPO / "tests" / "browser")]

from _browser import (  # noqa: E402
    _CHROMIUM,
    CLEARED,
    Chromium,
    LabServer,
    chromium_page,
    jupyter_server,
    menu,
    notebook_screenshot,
    open_notebook,
    restart_kernel,
    run_cells,
    save_and_reload,
    select_cell,
    settle,
    wait_until_shown,
)
from _common import RESULTS, save  # noqa: E402
from test_tutorials import DOM, _restart_cells  # noqa: E402

# What the page shows beyond test_tutorials.DOM, per cell: receipts (their pill) with a traceback inside,
# already_running receipts, live badges still running, placeholders, "no longer updated" notes, shown.
CHECKS = r"""() => {
  const shown = e => e.checkVisibility();
  const live = s => !s.closest('.holon-card').classList.contains('holon-receipt');
  return [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map((cell, index) => {
    const out = cell.querySelector('.jp-OutputArea');
    const all = out ? [...out.querySelectorAll('.jp-OutputArea-output')] : [];
    const receipts = out ? [...out.querySelectorAll('.holon-receipt')] : [];
    const pill = r => ((r.querySelector(':scope > div > b + span') || {}).textContent || '').trim();
    const visible = all.filter(shown).map(o => o.innerText).join('\n');
    return {
      index,
      traceback: receipts.filter(r => ['success', 'completed'].includes(pill(r)))
                         .filter(r => /Traceback \(most recent call last\)/.test(r.textContent))
                         .map(r => r.innerText.slice(0, 200)),
      already: all.filter(o => /already_running|command already running as/.test(o.textContent))
                  .map(o => o.innerText.slice(0, 200)),
      running: out ? [...out.querySelectorAll('.holon-card span')].filter(shown).filter(live)
                       .map(s => s.textContent.trim()).filter(t => ['running', 'queued', 'cancelling'].includes(t)) : [],
      placeholder: /its final receipt will replace this line|replaces it when the task ends/.test(visible),
      frozen: /no longer updated/.test(visible),
    };
  });
}"""
# Live views still updating: a pill of a live view (not of a receipt, which tells a task's status when it was
# called: TaskInput's 'running', TaskStop's 'cancelling') saying running/queued, or a placeholder line, shown.
BUSY_VIEWS = r"""() => [...document.querySelectorAll('.jp-Notebook .jp-OutputArea')].some(out =>
  [...out.querySelectorAll('.holon-card span')].some(s => s.checkVisibility()
     && !s.closest('.holon-card').classList.contains('holon-receipt')
     && ['running', 'queued', 'cancelling'].includes(s.textContent.trim()))
  || [...out.querySelectorAll('.jp-OutputArea-output')].some(o => o.checkVisibility()
     && /its final receipt will replace this line|replaces it when the task ends/.test(o.innerText)))"""
LOADING = (
    "() => ![...document.querySelectorAll('.jp-Notebook .jp-Cell')].some(c => c.innerText.includes('Loading widget'))"
)
GUARD = "restart the kernel first"  # 03's restart cell, run without a restart


def copy_checkout(dest: Path) -> Path:
    """This checkout's files (git's files, working-tree versions) copied to ``dest`` as a fresh git repository
    (tests/browser/test_tutorials.py's ``checkout``): tutorials 01 and 02 run git in it and clone it."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (REPO / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)
    git = ["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=dest, check=True)
    subprocess.run([*git, "add", "-A"], cwd=dest, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "copy"], cwd=dest, check=True)
    return dest


def page_findings(cells: list[dict], checks: list[dict], live_from: int, when: str) -> list[str]:
    """What is wrong on the page: ``cells`` from test_tutorials.DOM, ``checks`` from :data:`CHECKS`;
    cells from ``live_from`` on ran in the kernel that still runs (their views must not read as frozen)."""
    bad = []
    for c, k in zip(cells, checks, strict=True):
        i = c["index"]
        if c["code"] and not c["prompt"].strip("[]: ").isdigit():
            bad.append(f"{when}: cell {i} has no execution count ({c['prompt']!r})")
        for key, what in (("broken", "widget error"), ("errors", "traceback on stderr")):
            bad += [f"{when}: cell {i} {what}: {v[:120]!r}" for v in c[key]]
        bad += [f"{when}: cell {i} traceback in a success receipt: {v[:120]!r}" for v in k["traceback"]]
        bad += [f"{when}: cell {i} already_running: {v[:120]!r}" for v in k["already"]]
        bad += [f"{when}: cell {i} live badge still says {v!r}" for v in k["running"]]
        if k["placeholder"]:
            bad.append(f"{when}: cell {i} still shows a 'final receipt will replace' placeholder")
        if k["frozen"] and i >= live_from:
            bad.append(f"{when}: cell {i} says 'no longer updated' though its kernel still runs")
    return bad


def file_findings(path: Path) -> list[str]:
    """What is wrong in the saved notebook: a code cell that did not run, an ``error`` output, a traceback on
    stderr, an ``already_running`` receipt."""
    bad = []
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] != "code":
            continue
        if cell.get("execution_count") is None:
            bad.append(f"file: cell {i} not executed")
        for o in cell.get("outputs", []):
            if o["output_type"] == "error":
                bad.append(f"file: cell {i} error output {o.get('ename')}: {str(o.get('evalue'))[:100]!r}")
            text = json.dumps(o)
            if o.get("name") == "stderr" and "Traceback" in text:
                bad.append(f"file: cell {i} traceback on stderr")
            if "already_running" in text:
                bad.append(f"file: cell {i} already_running receipt")
    return bad


def run_once(page, server: LabServer, rel: str, path: Path, shot: Path) -> tuple[list[str], list[str]]:
    """One run of the notebook at ``rel`` (``path`` on disk) as a person does it; returns (findings, notes).
    Notes are what happened without making the run unclean (a run JupyterLab cut short and was redone)."""
    notes: list[str] = []
    restarts = _restart_cells(path)
    live_from = restarts[0] if restarts else 0
    open_notebook(page, server.base, rel)
    menu(page, "Edit", "Clear Outputs of All Cells", started=CLEARED)
    restart_kernel(page)
    said = io.StringIO()
    with contextlib.redirect_stdout(said):  # run_cells says when Lab cut a run short and it ran it again
        run_cells(page, "Run All Cells", upto=restarts[0] if restarts else None)
        settle(page, timeout_s=600)
        if restarts:
            guard = page.evaluate(DOM)[restarts[0]]
            if GUARD not in page.locator(".jp-Notebook .jp-Cell").nth(restarts[0]).inner_text():
                return [f"Run All did not stop at the restart cell {restarts[0]} with its UsageError"], notes
            if any(c["code"] and c["prompt"].strip("[]: ").isdigit() for c in page.evaluate(DOM)[restarts[0] + 1 :]):
                return [f"Run All ran cells below the restart cell {restarts[0]} ({guard['prompt']})"], notes
            restart_kernel(page)
            select_cell(page, restarts[0])
            run_cells(page, "Run Selected Cell and All Below", start=restarts[0], attempts=1)
            settle(page, timeout_s=600)
    notes += [line for line in said.getvalue().splitlines() if line.strip()]
    findings: list[str] = []
    try:  # every background task's final receipt in, every live view done
        page.wait_for_function(f"() => !({BUSY_VIEWS})()", timeout=240_000, polling=500)
    except Exception:  # noqa: BLE001 - playwright's TimeoutError; the checks below say what still runs
        notes.append("live views still running 240 s after the kernel went idle")
    settle(page)
    page.wait_for_timeout(1500)  # the last display updates land
    findings += page_findings(page.evaluate(DOM), page.evaluate(CHECKS), live_from, "before save")
    save_and_reload(page)
    try:
        page.wait_for_function(LOADING, timeout=90_000, polling=500)
        if restarts:  # 03's board (cell 5) belongs to the kernel restarted since: it must say so
            wait_until_shown(page, 5, "no longer updated since")
    except Exception:  # noqa: BLE001 - the checks below report what is shown
        notes.append("after the reload a widget was still loading (or 03's board not frozen) after 90 s")
    findings += page_findings(page.evaluate(DOM), page.evaluate(CHECKS), live_from, "after reload")
    notebook_screenshot(page, shot)
    return findings + file_findings(path), notes


# Lines of the server's log (kernels write there too) that say why a run failed outside holon_nb
CAUSES = ("Address already in use", "Timeout waiting for kernel_info", "KernelRestarter", "Kernel died")


def one_run(server: LabServer, log: Path, name: str, k: int, artifacts: Path) -> dict:
    """Run ``k`` of tutorial ``name`` in a page of its own; every kernel is ended afterwards. A failed run
    leaves a screenshot of the page when a step failed (``NN-runKK-failed.png``), the notebook it saved
    (``NN-runKK.ipynb``) and, in its notes, the server log's lines that name a cause (:data:`CAUSES`)."""
    rel, path = f"holon_nb/notebooks/{name}", server.root / "holon_nb" / "notebooks" / name
    t0, wall0, offset = time.monotonic(), time.time(), log.stat().st_size
    with chromium_page(1300, 1000) as page:
        try:
            findings, notes = run_once(page, server, rel, path, artifacts / f"{name[:2]}-run{k:02d}.png")
        except Exception as exc:  # noqa: BLE001 - a step timed out: a failed run, go on
            findings, notes = [f"step failed: {type(exc).__name__}: {str(exc)[:300]}"], []
            with contextlib.suppress(Exception):
                page.screenshot(path=str(artifacts / f"{name[:2]}-run{k:02d}-failed.png"), full_page=True)
    with contextlib.suppress(Exception):
        server.end_sessions()
    if findings:
        if path.stat().st_mtime >= wall0:  # this run saved it
            shutil.copy2(path, artifacts / f"{name[:2]}-run{k:02d}.ipynb")
        with log.open("rb") as f:
            f.seek(offset)
            said = f.read().decode(errors="replace").splitlines()
        notes += [f"server log: {line.strip()[:200]}" for line in said if any(c in line for c in CAUSES)][:5]
    wall = round(time.monotonic() - t0, 1)
    return {"run": k, "clean": not findings, "wall_s": wall, "findings": findings, "notes": notes}


# A notebook with the defects the checks look for: they must report each of them (``--no-control`` skips it)
CONTROL = [
    "%load_ext holon_nb",
    "%exec --yield-ms 0 sleep 8",
    "%exec --yield-ms 0 sleep 8",  # the same command while it runs: an already_running receipt
    "%exec python3 -c \"print('Traceback (most recent call last):')\"",  # a success receipt with a traceback
    "raise ValueError('control')",  # an error output
]
CONTROL_EXPECTS = ("cell 2 already_running", "cell 3 traceback in a success receipt", "file: cell 4 error output")


def control(server: LabServer, artifacts: Path) -> dict:
    """Run :data:`CONTROL` (in a folder of its own) as a tutorial is run; which expected findings were missed."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    path, rel = server.folder("control")
    nb = new_notebook(cells=[new_code_cell(src) for src in CONTROL])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path / "control.ipynb")
    with chromium_page(1300, 1000) as page:
        findings, _ = run_once(page, server, f"{rel}/control.ipynb", path / "control.ipynb", artifacts / "control.png")
    with contextlib.suppress(Exception):
        server.end_sessions()
    missed = [e for e in CONTROL_EXPECTS if not any(e in f for f in findings)]
    return {"findings": findings, "missed": missed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--only", default="", help="run only tutorials whose name starts with one of these (comma-separated)"
    )
    parser.add_argument("--load", type=int, default=1, help="busy Python loops running meanwhile")
    parser.add_argument("--artifacts", default=str(RESULTS / "lab_run_all"))
    parser.add_argument("--no-control", action="store_true", help="skip the control notebook (CONTROL)")
    parser.add_argument("--max-minutes", type=float, default=300, help="start no run after this")
    parser.add_argument(
        "--installed",
        action="store_true",
        help="kernels import the holon_nb installed beside this Python (e.g. a binder environment), not this checkout",
    )
    ns = parser.parse_args()
    artifacts = Path(ns.artifacts)
    artifacts.mkdir(parents=True, exist_ok=True)
    only = [p for p in ns.only.split(",") if p]
    names = [n for n in sorted(p.name for p in (REPO / "notebooks").glob("0*.ipynb") if ".executed." not in p.name)]
    names = [n for n in names if not only or any(n.startswith(p) for p in only)]
    started = time.monotonic()
    summary: dict[str, dict] = {}
    checked: dict = {}
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(ns.load)]
    scratch = Path(tempfile.mkdtemp(prefix="holon-lab-run-all-"))
    try:
        root = copy_checkout(scratch / "lab" / "holon_nb").parent
        env = {"HOLON_NB_HEADLESS": "1"}
        if not ns.installed:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
        with jupyter_server(root, None, **env) as base:
            server = LabServer(base, root)
            log = scratch / f"jupyterlab-{base.rsplit(':', 1)[1]}.log"  # tests/_browser.py's jupyter_server
            browser = Chromium(scratch / "chromium-profile")
            _CHROMIUM.append(browser)
            try:
                if not ns.no_control:
                    checked = control(server, artifacts)
                    print(f"control: the checks missed {checked['missed'] or 'nothing'}", flush=True)
                for name in names:
                    runs: list[dict] = []
                    for k in range(1, ns.runs + 1):
                        if (time.monotonic() - started) / 60 > ns.max_minutes:
                            print(f"{name[:2]} run {k}: not started (--max-minutes {ns.max_minutes})", flush=True)
                            break
                        run = one_run(server, log, name, k, artifacts)
                        runs.append(run)
                        verdict = "clean" if run["clean"] else "FAIL: " + "; ".join(run["findings"][:4])
                        extra = f" ({'; '.join(run['notes'])})" if run["notes"] else ""
                        print(f"{name[:2]} run {k:2d}/{ns.runs}: {run['wall_s']:6.1f} s {verdict}{extra}", flush=True)
                    walls = [r["wall_s"] for r in runs] or [0.0]
                    summary[name] = {
                        "clean": sum(r["clean"] for r in runs),
                        "total": len(runs),
                        "failures": [r for r in runs if not r["clean"]],
                        "notes": {r["run"]: r["notes"] for r in runs if r["notes"]},
                        "wall_s_median": round(statistics.median(walls), 1),
                        "wall_s_max": max(walls),
                    }
            finally:
                _CHROMIUM.remove(browser)
                browser.close()
                with contextlib.suppress(OSError):
                    shutil.copy2(log, artifacts / "jupyterlab.log")
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
        shutil.rmtree(scratch, ignore_errors=True)
    table = {name[:2]: f"{s['clean']}/{s['total']}" for name, s in summary.items()}
    save(
        "lab_run_all",
        {
            "runs_per_tutorial": ns.runs,
            "busy_loops": ns.load,
            "artifacts": str(artifacts),
            "minutes": round((time.monotonic() - started) / 60, 1),
            "clean_per_tutorial": table,
            "control": checked,
            "tutorials": summary,
        },
    )


if __name__ == "__main__":
    main()
