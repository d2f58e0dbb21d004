"""A real front end: JupyterLab in headless Chromium runs a notebook with a live task.

Skipped unless Debian's ``chromium``, the ``playwright`` package and
``jupyterlab`` are installed (``pip install ".[test,browser]"``; never
``playwright install``), and failed instead with ``HOLON_NB_REQUIRE_BROWSER=1`` (CI). The screenshot is saved under
``$HOLON_NB_SCREENSHOTS`` (default: the test's tmp dir) for a person to look at.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from _browser import (
    chromium_page,
    open_notebook,
    require,
    restart_kernel,
    run_cells,
    save_and_reload,
    settle,
    shots_dir,
)
from nbformat.v4 import new_code_cell, new_notebook

require("playwright", "jupyterlab")
pytestmark = pytest.mark.browser


@pytest.fixture
def lab(lab_folder):
    """``(base URL, the test's folder relative to the server's root, its path)`` on this worker's JupyterLab."""
    server, path, rel = lab_folder
    return server.base, rel, path


def _write(root: Path, name: str, *sources: str) -> None:
    nb = new_notebook(
        cells=[new_code_cell(src) for src in sources],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, root / name)


def _page(height: int):
    return chromium_page(1300, height)


def _shots(root: Path) -> Path:
    return shots_dir(root)


def _settle(page, idle: bool = True, timeout_s: float = 120) -> None:
    settle(page, idle=idle, timeout_s=timeout_s)


def _open_and_run_all(page, base: str, folder: str, name: str) -> None:
    """Open notebook ``name`` of the test's ``folder`` in JupyterLab (its kernel session started first), wait
    for its kernel, run every cell."""
    open_notebook(page, base, f"{folder}/{name}")
    run_cells(page, "Run All Cells")


def test_live_task_widget_renders(lab) -> None:
    base, token, root = lab
    _write(
        root,
        "live.ipynb",
        "%load_ext holon_nb",
        "%exec --yield-ms 300 for i in 1 2 3 4 5 6; do echo tick-$i; sleep 0.5; done",
        'print("other cell")',
    )
    shots = _shots(root)
    with _page(1000) as page:
        _open_and_run_all(page, base, token, "live.ipynb")
        page.wait_for_timeout(1800)
        _settle(page)
        page.screenshot(path=str(shots / "live-task-running.png"))
        page.wait_for_selector(".jp-Cell:nth-child(2) .holon-receipt:has-text('TaskOutput')", timeout=60_000)
        page.wait_for_timeout(500)
        _settle(page)
        page.screenshot(path=str(shots / "live-task-ended.png"), full_page=True)
        cells = page.locator(".jp-Cell")
        cell2 = cells.nth(1).inner_text()
        cell3 = cells.nth(2).inner_text()
    assert "tick-6" in cell2 and "completed" in cell2 and "exit status: 0" in cell2, cell2
    assert cell2.count("tick-6") == 1, cell2  # the live tail was replaced by the final receipt: output shown once
    assert "tick-" not in cell3 and "other cell" in cell3


def test_stop_button_stops_the_task(lab) -> None:
    base, token, root = lab
    _write(
        root,
        "stop.ipynb",
        "%load_ext holon_nb",
        "%exec --yield-ms 300 --no-login while true; do echo tick; sleep 0.2; done",
    )
    shots = _shots(root)
    with _page(800) as page:
        _open_and_run_all(page, base, token, "stop.ipynb")
        stop = page.locator(".jp-Cell .jupyter-button:has-text('Stop')")
        stop.wait_for(timeout=60_000)
        page.wait_for_timeout(800)
        _settle(page)
        stop.click()
        page.wait_for_selector(".jp-Cell:nth-child(2) .holon-receipt:has-text('TaskOutput')", timeout=60_000)
        page.wait_for_timeout(300)
        _settle(page)
        page.screenshot(path=str(shots / "stop-button.png"))
        cell2 = page.locator(".jp-Cell").nth(1).inner_text()
    assert "cancelled" in cell2 and "tick" in cell2


ASKS = """format: holon_nb.script/v1
steps:
  - response:
      stop_reason: tool_use
      blocks:
        - {type: text, text: 'Which format should the report use?'}
        - {type: tool_use, id: w1, name: WaitFor, input: {reason: report format, wake: operator_input, delivery: silent}}
  - text: CSV it is.
"""


def test_follow_waits_with_stop_offered_then_runs_the_woken_turn(lab) -> None:
    base, token, root = lab
    (root / "asks.yaml").write_text(ASKS)
    _write(
        root,
        "follow.ipynb",
        "%load_ext holon_nb",
        f"%%agent --model scripted/{root / 'asks.yaml'} --follow 2\nRerun the report jobs; ask me first.",
        "import time, holon_nb\nrt, deadline = holon_nb.get_runtime(), time.time() + 60\n"
        "while not rt.store.query(\"SELECT 1 FROM waits WHERE status='active'\") and time.time() < deadline:\n"
        "    time.sleep(0.1)\n"
        "from pathlib import Path  # the test looks at the waiting view, then creates 'looked'\n"
        "while not Path('looked').exists() and time.time() < deadline + 60:\n    time.sleep(0.1)",
        '%holon say "CSV, please"',
    )
    shots = _shots(root)
    with _page(1000) as page:
        _open_and_run_all(page, base, token, "follow.ipynb")
        view = page.locator(".jp-Cell").nth(1)
        page.wait_for_selector(
            ".jp-Cell:nth-child(2) :text('following: waiting for one of 1 open wait(s)')", timeout=60_000
        )
        _settle(page, idle=False)  # cell 3 keeps the kernel busy while the view waits
        waiting = view.inner_text()
        stop_visible = page.locator(".jp-Cell:nth-child(2) .jupyter-button:has-text('Stop')").is_visible()
        page.screenshot(path=str(shots / "follow-waiting.png"))
        (root / "looked").touch()  # cell 3 ends, cell 4 answers the agent
        page.wait_for_selector(".jp-Cell:nth-child(2) :text('stopped following')", timeout=60_000)
        _settle(page)
        ended = view.inner_text()
        page.screenshot(path=str(shots / "follow-ended.png"), full_page=True)
    assert "waiting" in waiting and stop_visible
    assert "woken by operator_prompt" in ended and "CSV it is." in ended and "completed" in ended


RENDER_CHECKS = r"""() => {
  const cards = [...document.querySelectorAll('.holon-card')];
  const td = document.querySelector('.holon-receipt td');
  const tail = document.querySelector('.holon-task-output');
  return {
    cards: cards.length,
    mathjax: cards.filter(c => c.querySelector('mjx-container, .MathJax, .MathJax_Display, .MathJax_Preview')).length,
    ignored: cards.filter(c => !(c.classList.contains('tex2jax_ignore') && c.classList.contains('mathjax_ignore'))).length,
    tdAlign: td ? getComputedStyle(td).textAlign : null,
    tailHeight: tail ? tail.getBoundingClientRect().height : null,
    tailLines: tail ? tail.textContent.split('\n').length : 0,
    control: !!document.querySelector('.holon-control mjx-container, .holon-control .MathJax'),
    headerLineHeight: (() => { const h = document.querySelector('.holon-task-header');
                               return h ? getComputedStyle(h).lineHeight : null; })(),
  };
}"""


def test_cards_skip_mathjax_cells_left_aligned_live_tail_capped(lab) -> None:
    base, token, root = lab
    # the task runs on until the test has looked at its live tail (it creates 'looked'): ended, the tail is
    # replaced by the final receipt, and a loaded machine let that happen before the look (a flake under load)
    long_lines = (
        "for i in $(seq 1 60); do printf 'line %s %0150d\\n' $i 0; done; while [ ! -e looked ]; do sleep 0.1; done"
    )
    _write(
        root,
        "render.ipynb",
        "%load_ext holon_nb",
        r"""%%tool ExecCommand
{"cmd": "printf '%s\\n' '\\[ x^2 \\]' '$5 ... $6'"}""",
        r"""%%tool ExecCommandBatch
{"items": [{"cmd": "printf '%s\\n' '$5 ... $6'"}, {"cmd": "echo b"}]}""",
        f"%exec --yield-ms 200 --no-login {long_lines}",
        # the control: the same text in an HTML output of no holon card is typeset (MathJax runs here)
        "from IPython.display import HTML\nHTML(r\"<div class='holon-control'>\\[ y^2 \\]</div>\")",
    )
    shots = _shots(root)
    with _page(1000) as page:
        _open_and_run_all(page, base, token, "render.ipynb")
        page.wait_for_selector(".holon-task-output", timeout=60_000)
        page.wait_for_function(
            "() => (document.querySelector('.holon-task-output')||{}).textContent?.includes('line 40')", timeout=60_000
        )
        _settle(page)
        running = page.evaluate(RENDER_CHECKS)
        page.screenshot(path=str(shots / "render-running.png"), full_page=True)
        (root / "looked").touch()  # the task may end now
        page.wait_for_selector(".jp-Cell:nth-child(4) .holon-receipt:has-text('TaskOutput')", timeout=60_000)
        _settle(page)
        page.wait_for_timeout(1500)  # a MathJax pass over new output would have run by now
        ended = page.evaluate(RENDER_CHECKS)
        page.screenshot(path=str(shots / "render-ended.png"), full_page=True)
        cell2 = page.locator(".jp-Cell").nth(1).inner_text()
    assert ended["control"], ended
    for state in (running, ended):
        assert state["cards"] >= 3 and state["mathjax"] == 0 and state["ignored"] == 0, state
        assert state["tdAlign"] in ("left", "start"), state
    assert "x^2" in cell2 and "$5 ... $6" in cell2  # shown as printed, not typeset
    assert running["tailLines"] >= 40 and running["tailHeight"] < 600, running  # 40 long lines in a capped box
    assert running["headerLineHeight"] != "28px", running


LATER = """import threading
import holon_nb

rt = holon_nb.get_runtime()
threading.Timer(2.0, lambda: rt.call("CreateWorkItem", {"objective": "Added while no cell ran"})).start()
print("scheduled")"""


def test_board_updates_between_cells_and_survives_restart_and_reload(lab) -> None:
    base, token, root = lab
    _write(
        root,
        "board.ipynb",
        "%load_ext holon_nb",
        '%workitem create "Shown when the board is drawn"',
        "%workitems",
        LATER,
    )
    shots = _shots(root)
    board = ".jp-Cell:nth-child(3) .holon-board-view"
    with _page(900) as page:
        _open_and_run_all(page, base, token, "board.ipynb")
        # a work item created by a kernel thread after every cell ended: the board redraws itself
        page.wait_for_selector(f"{board}:has-text('Added while no cell ran')", timeout=60_000)
        page.screenshot(path=str(shots / "board-updated.png"), full_page=True)
        restart_kernel(page)
        page.wait_for_timeout(1500)
        after_restart = page.locator(".jp-Cell").nth(2).inner_html()
        save_and_reload(page)
        page.screenshot(path=str(shots / "board-reopened.png"), full_page=True)
        reopened = page.locator(".jp-Cell").nth(2).inner_html()
    for shown in (after_restart, reopened):
        # no broken widget: the board is display output, drawn as it last was
        assert "jupyter-widgets-disconnected" not in shown and "Error displaying widget" not in shown, shown[:2000]
        assert "holon-board-view" in shown and "Added while no cell ran" in shown, shown[:2000]
    saved = nbformat.read(root / "board.ipynb", as_version=4)
    (out,) = saved.cells[2].outputs
    assert "application/vnd.jupyter.widget-view+json" not in out["data"]
    assert "Added while no cell ran" in out["data"]["text/plain"]
