"""JupyterLab whose kernels run on a Jupyter Kernel Gateway (issue 30; docs/large-suites.md): tutorial 01, and
holon_nb's live views, Stop button and board in the remote kernel.

A real ``jupyter kernelgateway`` on 127.0.0.1 (a token) and a JupyterLab started with its gateway URL and token
(``JUPYTER_GATEWAY_URL`` / ``JUPYTER_GATEWAY_AUTH_TOKEN``, what ``--gateway-url`` and
``--GatewayClient.auth_token`` set): the notebook's kernel is the gateway's (Lab starts none of its own), and Run
All Cells runs the tutorial there with holon_nb loaded in the remote kernel: its receipts render as holon cards,
and no cell shows an error. The gateway starts kernels in a clone of this checkout's ``notebooks/`` (a Kernel
Gateway does not apply the notebook's folder; Enterprise Gateway does) with ``HOLON_NB_HOME`` and
``HOLON_NB_HEADLESS`` passed on to them.

The second test starts JupyterLab with ``--gateway-url`` on its command line (and ``--GatewayClient.auth_token``),
as a user does: a background task's live view updates in the page while it runs, its Stop button stops it (the
final receipt says cancelled), and a ``%workitems`` board redraws itself when a kernel thread adds a work item
after every cell ended. Its screenshots go to ``$HOLON_NB_SCREENSHOTS`` (default: the test's tmp dir).
"""

from __future__ import annotations

import contextlib
import json
import urllib.request
from pathlib import Path

import nbformat
import pytest
from _browser import (
    CLEARED,
    chromium_page,
    jupyter_server,
    menu,
    open_notebook,
    require,
    run_cells,
    settle,
    shots_dir,
)
from _gateway import clone_checkout, kernel_gateway

require("playwright", "jupyterlab")
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("kernel-gateway")]


SUMMARY = r"""() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell')].map(cell => {
  const out = cell.querySelector('.jp-OutputArea');
  return {
    prompt: (cell.querySelector('.jp-InputPrompt') || {}).textContent || '',
    cards: out ? out.querySelectorAll('.holon-card').length : 0,
    errors: out ? [...out.querySelectorAll('.jp-OutputArea-output')]
                    .filter(o => /Traceback|Error:/.test(o.textContent)
                                 && o.getAttribute('data-mime-type') === 'application/vnd.jupyter.stderr')
                    .map(o => o.textContent.slice(0, 300)) : [],
  };
})"""


def _kernels(url: str, token: str) -> list[dict]:
    request = urllib.request.Request(f"{url}/api/kernels", headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return list(json.loads(answer.read()))


@pytest.mark.timeout(900)
def test_tutorial_01_runs_in_jupyterlab_with_its_kernel_on_a_kernel_gateway(tmp_path: Path) -> None:
    lab_root = tmp_path / "lab"
    checkout = clone_checkout(lab_root / "holon_nb")
    passed = {"HOLON_NB_HOME": str(tmp_path / "home"), "HOLON_NB_HEADLESS": "1"}
    with (
        kernel_gateway(tmp_path, cwd=checkout / "notebooks", kernel_env=passed) as (url, token),
        jupyter_server(lab_root, None, JUPYTER_GATEWAY_URL=url, JUPYTER_GATEWAY_AUTH_TOKEN=token) as base,
        chromium_page(1300, 1000) as page,
    ):
        assert _kernels(url, token) == []
        open_notebook(page, base, "holon_nb/notebooks/01-quickstart.ipynb")
        assert len(_kernels(url, token)) == 1  # the notebook's kernel is the gateway's
        menu(page, "Edit", "Clear Outputs of All Cells", started=CLEARED)
        run_cells(page, "Run All Cells")
        settle(page, timeout_s=300)
        page.wait_for_timeout(1500)
        settle(page)
        cells = page.evaluate(SUMMARY)
        with contextlib.suppress(Exception):
            page.screenshot(path=str(tmp_path / "tutorial-01-gateway.png"), full_page=True)
    assert cells and all(c["prompt"].strip() not in ("[ ]:", "[*]:") for c in cells), cells
    assert [c["errors"] for c in cells if c["errors"]] == []
    assert sum(c["cards"] for c in cells) >= 3, cells  # holon_nb's receipts, rendered from the remote kernel
    assert (tmp_path / "home" / "holon.sqlite3").exists() or any((tmp_path / "home").rglob("*.sqlite3"))


# a task that prints until it is stopped; a board; a work item a kernel thread adds after every cell ended
TICKS = "%exec --yield-ms 300 --no-login i=0; while true; do i=$((i+1)); echo tick-$i; sleep 0.2; done"
LATER = """import threading
import holon_nb

rt = holon_nb.get_runtime()
threading.Timer(2.0, lambda: rt.call("CreateWorkItem", {"objective": "Added while no cell ran"})).start()
print("scheduled")"""
TICKS_SHOWN = r"""() => Math.max(0, ...[...document.querySelectorAll('.jp-Notebook .jp-Cell')[3]
  .querySelectorAll('.holon-task-output')].filter(e => e.getClientRects().length)
  .flatMap(e => [...e.textContent.matchAll(/tick-(\d+)/g)].map(m => Number(m[1]))))"""

STOPS_SHOWN = r"""() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')[3].querySelectorAll('.jupyter-button')]
  .filter(b => b.getClientRects().length && b.textContent.includes('Stop')).length"""


@pytest.mark.timeout(600)
def test_live_view_stop_and_board_work_in_jupyterlab_started_with_gateway_url(tmp_path: Path) -> None:
    lab_root, work = tmp_path / "lab", tmp_path / "kernels"
    lab_root.mkdir()
    work.mkdir()
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(src)
            for src in ("%load_ext holon_nb", '%workitem create "Shown on the board"', "%workitems", TICKS, LATER)
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, lab_root / "live.ipynb")
    passed = {"HOLON_NB_HOME": str(tmp_path / "home"), "HOLON_NB_HEADLESS": "1"}
    shots = shots_dir(tmp_path)
    task, board = ".jp-Cell:nth-child(4)", ".jp-Cell:nth-child(3) .holon-board-view"
    with (
        kernel_gateway(tmp_path, cwd=work, kernel_env=passed) as (url, token),
        jupyter_server(lab_root, None, args=[f"--gateway-url={url}", f"--GatewayClient.auth_token={token}"]) as base,
        chromium_page(1300, 1100) as page,
    ):
        open_notebook(page, base, "live.ipynb")
        assert len(_kernels(url, token)) == 1  # the notebook's kernel is the gateway's
        run_cells(page, "Run All Cells")
        settle(page)  # every cell ran; the task goes on in the background
        # the live view updates in the page: its tail grows while no cell runs
        page.wait_for_function(f"() => ({TICKS_SHOWN})() >= 5", timeout=60_000)
        first = page.evaluate(TICKS_SHOWN)
        page.wait_for_function(f"() => ({TICKS_SHOWN})() >= {first + 5}", timeout=60_000)
        # the board redrew itself when the kernel thread added a work item
        page.wait_for_selector(f"{board}:has-text('Added while no cell ran')", timeout=60_000)
        page.screenshot(path=str(shots / "gateway-live-running.png"), full_page=True)
        running = page.locator(task).inner_text()
        stop = page.locator(f"{task} .jupyter-button:has-text('Stop')")
        assert stop.is_visible()
        stop.click()
        page.wait_for_selector(f"{task} .holon-receipt:has-text('TaskOutput')", timeout=60_000)
        settle(page)
        page.screenshot(path=str(shots / "gateway-stopped.png"), full_page=True)
        stopped = page.locator(task).inner_text()
        shown_board = page.locator(board).inner_text()
        stops_shown = page.evaluate(STOPS_SHOWN)
    assert "tick-" in running and "running" in running, running
    assert "cancelled" in stopped and "tick-" in stopped, stopped
    assert stops_shown == 0, stopped  # the task ended: no Stop button left in its view
    assert "Shown on the board" in shown_board and "Added while no cell ran" in shown_board, shown_board
