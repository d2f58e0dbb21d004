"""Notebook 7 (the ``notebook`` package) as a user sees it: a scratch notebook with a live task, stopped with
its Stop button, in headless Chromium. The screenshots (``notebook7-running.png``, ``notebook7-stopped.png``)
go to ``$HOLON_NB_SCREENSHOTS`` (default: the test's tmp dir)."""

from __future__ import annotations

import nbformat
import pytest
from _browser import chromium_page, open_notebook, require, run_cells, settle, shots_dir
from nbformat.v4 import new_code_cell, new_notebook

require("playwright", "notebook")
pytestmark = pytest.mark.browser

CHECKS = r"""() => {
  const cards = [...document.querySelectorAll('.jp-Notebook .holon-card')];
  const tail = document.querySelector('.jp-Notebook .holon-task-output');
  return {
    cards: cards.length,
    mathjax: cards.filter(c => c.querySelector('mjx-container, .MathJax')).length,
    notLeft: [...document.querySelectorAll('.jp-Notebook .holon-card td')]
               .filter(td => !['left', 'start'].includes(getComputedStyle(td).textAlign)).length,
    tailHeight: tail ? tail.getBoundingClientRect().height : null,
  };
}"""


def test_live_task_and_its_stop_button_in_notebook_7(lab_folder) -> None:
    server, folder, rel = lab_folder
    nb = new_notebook(
        cells=[
            new_code_cell(src)
            for src in (
                "%load_ext holon_nb",
                '%exec --yield-ms 300 --no-login i=0; while true; do i=$((i+1)); echo "tick $i \\\\[ x^2 \\\\]"; sleep 0.1; done',
            )
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, folder / "scratch.ipynb")
    shots = shots_dir(folder)
    with chromium_page(1200, 1000) as page:  # Notebook 7's page, served by this worker's server
        open_notebook(page, server.base, f"{rel}/scratch.ipynb", app="notebooks")
        assert page.locator(".jp-NotebookKernelStatus, .jp-Notebook-ExecutionIndicator").count(), (
            "no kernel status indicator: is this Notebook 7?"
        )
        run_cells(page, "Run All Cells")
        stop = page.locator(".jp-Cell .jupyter-button:has-text('Stop')")
        stop.wait_for(timeout=60_000)
        page.wait_for_function(
            "() => (document.querySelector('.holon-task-output')||{}).textContent?.includes('tick 40')", timeout=60_000
        )
        settle(page)
        running = page.evaluate(CHECKS)
        page.screenshot(path=str(shots / "notebook7-running.png"))
        stop.click()
        page.wait_for_selector(".jp-Cell:nth-child(2) .holon-receipt:has-text('TaskOutput')", timeout=60_000)
        page.wait_for_timeout(500)
        settle(page)
        ended = page.evaluate(CHECKS)
        page.screenshot(path=str(shots / "notebook7-stopped.png"), full_page=True)
        cell = page.locator(".jp-Cell").nth(1).inner_text()
    assert "cancelled" in cell and "tick 1 " in cell, cell  # the Stop button ended it (it did not end by itself)
    assert running["tailHeight"] is not None and running["tailHeight"] < 600, running
    for state in (running, ended):
        assert state["mathjax"] == 0 and state["notLeft"] == 0, state
    assert ended["cards"] >= 2, ended
