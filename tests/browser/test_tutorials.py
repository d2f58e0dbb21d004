"""Every tutorial in notebooks/ as a user sees it: opened in JupyterLab (headless Chromium), run with
Run > Run All Cells, and its rendered DOM checked for the defects of issue 11: a MathJax element inside a holon
card, right-aligned table cells, a broken widget after a restart, output shown twice, a live tail without a
height cap.

A tutorial with a cell tagged ``holon-restart-kernel`` (03) is run the way its markdown asks a person to: the
cells above it, then Kernel > Restart Kernel…, then that cell and all below. Each tutorial runs in a copy of this
checkout (a git repository, as 01 and 02 expect) with its own holon home (``.holon/`` beside it), on this pytest
worker's JupyterLab server (tests/browser/conftest.py). The checks of one tutorial share one run: they are one
xdist group, so under ``--dist loadgroup`` one worker runs the tutorial once.
Screenshots (``tutorial-NN.png``, the whole notebook; ``cell-NN-I.png``, one cell of it) go to
``$HOLON_NB_SCREENSHOTS`` (default: the test's tmp dir).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from _browser import (
    CLEARED,
    chromium_page,
    menu,
    notebook_screenshot,
    open_notebook,
    require,
    restart_kernel,
    run_cells,
    save_and_reload,
    select_cell,
    settle,
    shots_dir,
)
from _support import tutorial_names

require("playwright", "jupyterlab")
pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
TUTORIALS = tutorial_names(REPO / "notebooks")

# What the page shows, per cell: holon cards (MathJax inside, the ignore classes), table cells' alignment (cells
# a card aligns itself, such as a diff's right-aligned line numbers, excepted), live
# tails' heights, broken widgets (ipywidgets' broken-link icon of a widget whose kernel is gone, or its error text
# when the model is missing), and the lines of each <pre> (for output shown twice).
DOM = r"""() => {
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
  return cells.map((cell, index) => {
    const out = cell.querySelector('.jp-OutputArea');
    const cards = out ? [...out.querySelectorAll('.holon-card')] : [];
    const cellsOf = out ? [...out.querySelectorAll('.holon-card td, .holon-card th')] : [];
    const prompt = cell.querySelector('.jp-InputPrompt');
    return {
      index,
      code: cell.classList.contains('jp-CodeCell'),
      prompt: prompt ? prompt.textContent.trim() : '',
      source: [...cell.querySelectorAll('.jp-InputArea .cm-line')].map(l => l.textContent).join('\n'),
      cards: cards.length,
      mathjax: cards.filter(c => c.querySelector('mjx-container, .MathJax, .MathJax_Display, .MathJax_Preview')).length,
      unmarked: cards.filter(c => !(c.classList.contains('tex2jax_ignore') && c.classList.contains('mathjax_ignore'))).length,
      notLeft: cellsOf.filter(td => !td.style.textAlign && !['left', 'start'].includes(getComputedStyle(td).textAlign))
                      .map(td => getComputedStyle(td).textAlign + ': ' + td.textContent.trim().slice(0, 40)),
      // a live tail's scroll box is its widget (holon-tail-follow); a static tail's, its own box
      tails: out ? [...out.querySelectorAll('.holon-task-output')]
                     .map(t => t.closest('.holon-tail-follow, .holon-task-tail-box') || t)
                     .map(t => Math.round(t.getBoundingClientRect().height)) : [],
      // what a person sees: a dead widget hidden by its static fallback (notebook/_liveness.py) is not broken
      broken: out ? [...out.querySelectorAll('.jp-OutputArea-output')].filter(o => o.checkVisibility())
                      .filter(o => /Error displaying widget|Loading widget\.\.\./.test(o.textContent)
                                   || o.querySelector('.jupyter-widgets-disconnected'))
                      .map(o => o.querySelector('.jupyter-widgets-disconnected')
                                ? 'disconnected widget (broken-link icon): ' + o.textContent.trim().slice(0, 60)
                                : o.textContent.trim().slice(0, 80)) : [],
      errors: out ? [...out.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
                      .filter(o => /Traceback|Error:/.test(o.textContent)).map(o => o.textContent.slice(0, 300)) : [],
      pres: out ? [...out.querySelectorAll('pre')].filter(p => p.checkVisibility()).map(p => p.textContent) : [],
    };
  });
}"""

# One cell of each tutorial is also saved alone (``cell-NN-I.png``): the README's pictures are taken from these.
README_CELLS = {"01": 6, "02": 11, "03": 5, "04": 8, "05": 18, "06": 4}

TAIL_CAP_PX = 600  # a capped live tail is a scroll box; uncapped, 40 long lines take ~1,400 px


def _restart_cells(path: Path) -> list[int]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [i for i, c in enumerate(nb["cells"]) if "holon-restart-kernel" in c.get("metadata", {}).get("tags", [])]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A copy of this checkout's files (the working tree's versions of git's files) as a fresh git repository:
    the tutorials run git in `..` and clone their checkout; nothing of the real checkout is touched."""
    root = tmp_path_factory.mktemp("checkout") / "holon_nb"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        src = REPO / name
        if src.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / name)
    git = ["git", "-c", "user.name=Browser Test", "-c", "user.email=browser@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(git + ["add", "-A"], cwd=root, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "copy"], cwd=root, check=True)
    return root


def _dups(cell: dict) -> list[str]:
    """Output lines (not the cell's own source) shown in two or more <pre> boxes of one cell."""
    seen: dict[str, int] = {}
    source = {ln.strip() for ln in cell["source"].splitlines()}
    for pre in cell["pres"]:
        for line in {ln.strip() for ln in pre.splitlines()}:
            if len(line) >= 4 and line not in source:
                seen[line] = seen.get(line, 0) + 1
    return sorted(line for line, n in seen.items() if n > 1)


# Checks that fail on main until a fix lands; strict, so the first run after the fix fails here and the mark is
# removed.
KNOWN: dict[tuple[str, str], str] = {}


def tutorials(check: str) -> pytest.MarkDecorator:
    """Parametrize ``check`` over every tutorial, sharing one run per tutorial (module scope), with the strict
    xfail marks of ``KNOWN``."""
    return pytest.mark.parametrize(
        "rendered",
        [
            pytest.param(
                name,
                marks=[pytest.mark.xdist_group(f"browser-tutorial-{name}")]
                + ([pytest.mark.xfail(strict=True, reason=KNOWN[(check, name)])] if (check, name) in KNOWN else []),
            )
            for name in TUTORIALS
        ],
        indirect=True,
        scope="module",
    )


@pytest.fixture(scope="module")
def rendered(request, checkout, lab_server) -> dict:
    """Run one tutorial in JupyterLab as a person does and return what the page showed: ``cells`` (the DOM
    summary above, after the run), ``max_tail`` (the tallest live tail seen while cells ran), ``reopened`` (the
    DOM after File > Save Notebook and a reload of the page) and ``seconds``."""
    name = request.param
    work, rel = lab_server.folder(name.split("-")[0])
    shots = shots_dir(work)
    # a clone of the checkout of its own: its notebooks/.holon is this tutorial's holon home
    subprocess.run(["git", "clone", "-q", str(checkout), str(work / "holon_nb")], check=True)
    restarts = _restart_cells(checkout / "notebooks" / name)
    max_tail = [0]

    def sample() -> None:  # the tallest live tail while cells run
        with_tails = page.evaluate(
            "() => Math.max(0, ...[...document.querySelectorAll('.holon-task-output')]"
            ".map(t => t.getBoundingClientRect().height))"
        )
        max_tail[0] = max(max_tail[0], with_tails)

    started = time.monotonic()
    base = lab_server.base
    with contextlib.ExitStack() as stack:
        stack.callback(lab_server.end_sessions)
        page = stack.enter_context(chromium_page(1300, 1000))
        open_notebook(page, base, f"{rel}/holon_nb/notebooks/{name}")
        # the committed outputs go first, so that what is checked below is what this run rendered
        menu(page, "Edit", "Clear Outputs of All Cells", started=CLEARED)
        if not restarts:
            run_cells(page, "Run All Cells")
        else:  # as the markdown asks: run the cells above, restart from the Kernel menu, run the rest
            assert len(restarts) == 1, f"{name}: one restart per tutorial is supported, not {restarts}"
            select_cell(page, restarts[0])
            run_cells(page, "Run All Above Selected Cell", upto=restarts[0])
            settle(page, timeout_s=240, tick=sample)
            page.wait_for_timeout(1000)
            notebook_screenshot(page, shots / f"tutorial-{name[:2]}-before-restart.png")
            restart_kernel(page)
            select_cell(page, restarts[0])
            run_cells(page, "Run Selected Cell and All Below", start=restarts[0], attempts=1)
        settle(page, timeout_s=300, tick=sample)
        page.wait_for_timeout(1500)  # live views finish their last update; a MathJax pass would have run
        settle(page, tick=sample)
        cells = page.evaluate(DOM)
        at = README_CELLS.get(name[:2])
        notebook_screenshot(
            page,
            shots / f"tutorial-{name[:2]}.png",
            cells={} if at is None else {at: shots / f"cell-{name[:2]}-{at}.png"},
        )
        save_and_reload(page)
        reopened = page.evaluate(DOM)
    return {
        "name": name,
        "cells": cells,
        "max_tail": max_tail[0],
        "reopened": reopened,
        "seconds": round(time.monotonic() - started, 1),
        "restarts": restarts,
    }


def _where(cells: list[dict], key: str) -> dict:
    return {c["index"]: c[key] for c in cells if c[key]}


@tutorials("test_runs_to_the_end")
def test_runs_to_the_end(rendered) -> None:
    unrun = [
        c["index"]
        for c in rendered["cells"]
        if c["code"] and not c["prompt"].strip("[]: ").isdigit() and not c["source"].startswith(OFFERED)
    ]
    assert not unrun, f"{rendered['name']}: code cells without an execution count: {unrun}"
    assert not _where(rendered["cells"], "errors"), _where(rendered["cells"], "errors")


#: The first line of a cell an agent offered through the Notebook tools (no collaboration document: it is
#: the next input, not run; holon_nb/notebook/_kernel/_document.py).
OFFERED = "# offered by an agent"


@pytest.mark.parametrize(
    "rendered",
    [
        pytest.param(
            "07-notebook-tools.ipynb", marks=[pytest.mark.xdist_group("browser-tutorial-07-notebook-tools.ipynb")]
        )
    ],
    indirect=True,
    scope="module",
)
def test_an_agents_cell_appears_without_reload_and_is_saved(rendered) -> None:
    """Issue 28 in JupyterLab without jupyter-collaboration: the agent's EditNotebook insert is offered as the
    next cell (set_next_input), shown right below the %%agent cell without a reload, its source the agent's,
    not run; ExecuteCell ran it in the kernel, so the notebook's last cell sees the fix. Save and reload keep
    the cell."""
    cells = rendered["cells"]
    agent = next(c["index"] for c in cells if c["source"].startswith("%%agent"))
    offered = [c for c in cells if c["source"].startswith(OFFERED)]
    assert [c["index"] for c in offered] == [agent + 1], [c["source"][:60] for c in cells]
    assert "astype(int)" in offered[0]["source"] and not offered[0]["prompt"].strip("[]: ").isdigit()
    assert "'north': 42" in "\n".join(cells[-1]["pres"])
    kept = [c for c in rendered["reopened"] if c["source"].startswith(OFFERED)]
    assert [c["source"] for c in kept] == [offered[0]["source"]]


@tutorials("test_no_mathjax_inside_holon_cards")
def test_no_mathjax_inside_holon_cards(rendered) -> None:
    cells = rendered["cells"]
    assert sum(c["cards"] for c in cells) > 0, f"{rendered['name']} shows no holon card"
    assert not _where(cells, "mathjax"), f"cards typeset by MathJax, per cell: {_where(cells, 'mathjax')}"
    assert not _where(cells, "unmarked"), f"cards without mathjax_ignore, per cell: {_where(cells, 'unmarked')}"


@tutorials("test_card_cells_left_aligned")
def test_card_cells_left_aligned(rendered) -> None:
    assert not _where(rendered["cells"], "notLeft"), _where(rendered["cells"], "notLeft")


@tutorials("test_live_tail_capped")
def test_live_tail_capped(rendered) -> None:
    heights = _where(rendered["cells"], "tails")
    assert rendered["max_tail"] <= TAIL_CAP_PX and all(h <= TAIL_CAP_PX for hs in heights.values() for h in hs), (
        f"tallest live tail while running {rendered['max_tail']} px; at the end, per cell: {heights}"
    )


@tutorials("test_no_output_shown_twice")
def test_no_output_shown_twice(rendered) -> None:
    dups = {c["index"]: d for c in rendered["cells"] if (d := _dups(c))}
    assert not dups, f"{rendered['name']}: lines shown in two boxes of one cell: {dups}"


@tutorials("test_no_broken_widget_after_save_and_reload")
def test_no_broken_widget_after_save_and_reload(rendered) -> None:
    assert not _where(rendered["cells"], "broken"), _where(rendered["cells"], "broken")
    assert not _where(rendered["reopened"], "broken"), (
        f"{rendered['name']} reopened: broken widgets per cell: {_where(rendered['reopened'], 'broken')}"
    )
