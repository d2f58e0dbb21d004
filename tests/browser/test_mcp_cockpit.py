"""The ``%holon mcp serve`` cockpit in JupyterLab (issue 29): an external MCP client's command that goes on as a
background task shows the notebook's live task view under its call, its output growing while it runs; its Stop
stops the task, whose final receipt then replaces the view. Skipped as the other browser tests are."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from _browser import chromium_page, open_notebook, require, run_cells, settle, shots_dir
from _mcp_support import served_calls
from _support import eventually
from nbformat.v4 import new_code_cell, new_notebook

require("playwright", "jupyterlab")
pytestmark = pytest.mark.browser

COCKPIT = ".jp-Cell:nth-child(2)"


def test_a_served_background_task_is_live_in_the_cockpit_and_its_stop_stops_it(lab_folder) -> None:
    server, root, folder = lab_folder
    nb = new_notebook(
        cells=[new_code_cell("%load_ext holon_nb"), new_code_cell("%holon mcp serve")],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, root / "cockpit.ipynb")
    shots = shots_dir(root)
    cmd = "for i in $(seq 1 600); do echo tick-$i; sleep 0.2; done"
    with chromium_page(1300, 1100) as page:
        open_notebook(page, server.base, f"{folder}/cockpit.ipynb")
        run_cells(page, "Run All Cells")
        page.wait_for_selector(f"{COCKPIT} .jupyter-button:has-text('Stop serving')", timeout=60_000)
        token_file: Path = eventually(lambda: next(root.rglob("mcp-serve.json"), None), timeout=60)
        (call,) = served_calls(json.loads(token_file.read_text()), {"cmd": cmd, "yield_time_ms": 0, "login": False})
        task_id = call.structured_content["result"]["task_handle"]["task_id"]
        page.wait_for_selector(f"{COCKPIT} :text('call 1 goes on as task {task_id}')", timeout=60_000)
        page.wait_for_selector(f"{COCKPIT} .holon-task-output:has-text('tick-3')", timeout=60_000)
        settle(page)
        page.screenshot(path=str(shots / "mcp-cockpit-live.png"))
        early = page.locator(f"{COCKPIT} .holon-task-output").inner_text()
        # it follows: a tick later than any the view showed a moment ago (how far it got depends on the load)
        later = max(int(n) for n in re.findall(r"tick-(\d+)", early)) + 3
        page.wait_for_selector(f"{COCKPIT} .holon-task-output:has-text('tick-{later}')", timeout=60_000)
        header = page.locator(f"{COCKPIT} .holon-task-header").inner_text()
        page.locator(f"{COCKPIT} .holon-beacon .jupyter-button:has-text('Stop')").click()
        page.wait_for_selector(f"{COCKPIT} .holon-receipt:has-text('TaskOutput')", timeout=60_000)
        settle(page)
        page.screenshot(path=str(shots / "mcp-cockpit-stopped.png"))
        cell = page.locator(COCKPIT).inner_text()
        live_views = page.locator(f"{COCKPIT} .holon-beacon").count()
    assert later - 3 >= 3  # the view showed tick-3 or later when first read, then grew past what it showed
    assert task_id in header and "running" in header
    assert "cancelled" in cell and "TaskStop" in cell and live_views == 0
