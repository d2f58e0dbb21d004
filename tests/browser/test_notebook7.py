"""Notebook 7 (the ``notebook`` package) as a user sees it: a scratch notebook with a live task, stopped with
its Stop button, in headless Chromium. The screenshots (``notebook7-running.png``, ``notebook7-stopped.png``)
go to ``$HOLON_NB_SCREENSHOTS`` (default: the test's tmp dir)."""

from __future__ import annotations

import nbformat
import pytest
from _browser import (
    DEAD_VIEW,
    RESTART_TASK,
    SLOW_TURN,
    TURN_RUNNING,
    agent_cell,
    assert_dead_turn_views,
    assert_dead_views,
    chromium_page,
    open_notebook,
    require,
    restart_until_disconnected,
    run_cells,
    settle,
    shots_dir,
    wait_widget_models_gone,
)
from nbformat.v4 import new_code_cell, new_notebook

require("playwright", "notebook")
pytestmark = pytest.mark.browser

CHECKS = r"""() => {
  const cards = [...document.querySelectorAll('.jp-Notebook .holon-card')];
  // the live view's tail, in its scroll box (the standby fallback before it, hidden, has one too)
  const pre = [...document.querySelectorAll('.jp-Notebook .holon-task-output')].find(e => e.getClientRects().length);
  const tail = pre && (pre.closest('.holon-tail-follow') || pre);
  return {
    cards: cards.length,
    mathjax: cards.filter(c => c.querySelector('mjx-container, .MathJax')).length,
    notLeft: [...document.querySelectorAll('.jp-Notebook .holon-card td')]
               .filter(td => !['left', 'start'].includes(getComputedStyle(td).textAlign)).length,
    tailHeight: tail ? tail.getBoundingClientRect().height : null,
  };
}"""


def _save_and_reload(page) -> None:
    """Notebook 7's save (Ctrl+S, as a person types it) and a reload of the page, waiting for it to settle."""
    page.locator(".jp-Notebook").first.click()
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    page.wait_for_timeout(1500)
    settle(page)
    page.reload()
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    settle(page)


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


def test_restart_during_a_task_leaves_static_views_in_notebook_7(lab_folder) -> None:
    """Issue 26 items 3 and 4 in Notebook 7: after Kernel > Restart Kernel…, and again after a save and a
    reload, the live task view reads as "interrupted by a kernel restart" (no Stop button, no running badge,
    no broken-link icon, no widget error) and the live board says since when it is no longer updated."""
    server, folder, rel = lab_folder
    nb = new_notebook(
        cells=[
            new_code_cell(src)
            for src in ("%load_ext holon_nb", '%workitem create "Shown on the board"', RESTART_TASK, "%workitems")
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, folder / "restart.ipynb")
    shots = shots_dir(folder)
    try:
        with chromium_page(1200, 1100) as page:
            open_notebook(page, server.base, f"{rel}/restart.ipynb", app="notebooks")
            run_cells(page, "Run All Cells")
            page.wait_for_function(
                "() => [...document.querySelectorAll('.holon-task-output')].some(e => /tick-5\\b/.test(e.textContent))",
                timeout=60_000,
            )
            settle(page)
            live = page.evaluate(DEAD_VIEW, 2)
            restart_until_disconnected(page)
            after_restart = {"task": page.evaluate(DEAD_VIEW, 2), "board": page.evaluate(DEAD_VIEW, 3)}
            page.screenshot(path=str(shots / "notebook7-restart-live-page.png"), full_page=True)
            _save_and_reload(page)
            wait_widget_models_gone(page)  # the widgets' outputs gave up on their models ("model not found")
            reopened = {"task": page.evaluate(DEAD_VIEW, 2), "board": page.evaluate(DEAD_VIEW, 3)}
            page.screenshot(path=str(shots / "notebook7-restart-reopened.png"), full_page=True)
    finally:
        (folder / "done").touch()
    assert live["stop"] == 1 and "interrupted by a kernel restart" not in live["text"], live
    assert_dead_views(after_restart, "after the restart")
    assert_dead_views(reopened, "after save and reload")


def test_restart_during_an_agent_turn_leaves_a_static_view_in_notebook_7(lab_folder) -> None:
    """Issue 26 item 3 for the ``%%agent`` view in Notebook 7: after Kernel > Restart Kernel… while the turn
    runs, and again after a save and a reload, the view reads as "interrupted by a kernel restart" (no Stop
    button, no running badge, no dead widget, no "Error displaying widget")."""
    server, folder, rel = lab_folder
    (folder / "slow.yaml").write_text(SLOW_TURN)
    nb = new_notebook(
        cells=[new_code_cell(src) for src in ("%load_ext holon_nb", agent_cell(folder / "slow.yaml"))],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, folder / "turn.ipynb")
    shots = shots_dir(folder)
    try:
        with chromium_page(1200, 1000) as page:
            open_notebook(page, server.base, f"{rel}/turn.ipynb", app="notebooks")
            run_cells(page, "Run All Cells")
            page.wait_for_function(TURN_RUNNING, timeout=60_000)
            settle(page)
            page.wait_for_timeout(1500)  # the standby lags the view by at most a second
            live = page.evaluate(DEAD_VIEW, 1)
            restart_until_disconnected(page)
            after_restart = page.evaluate(DEAD_VIEW, 1)
            page.screenshot(path=str(shots / "notebook7-turn-restart-live-page.png"), full_page=True)
            _save_and_reload(page)
            wait_widget_models_gone(page)  # the widgets' outputs gave up on their models ("model not found")
            reopened = page.evaluate(DEAD_VIEW, 1)
            page.screenshot(path=str(shots / "notebook7-turn-restart-reopened.png"), full_page=True)
    finally:
        (folder / "done").touch()
    assert live["stop"] == 1 and live["running"] >= 1, live
    assert "interrupted by a kernel restart" not in live["text"], live["text"]
    assert_dead_turn_views({"after the restart": after_restart, "after save and reload": reopened})
