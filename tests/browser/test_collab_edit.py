"""Issue 28 in JupyterLab with jupyter-collaboration: an agent turn (the scripted provider) inserts a cell
through EditNotebook and runs it with ExecuteCell; the cell and its output appear in the open notebook without a
reload (the edit is an update of the notebook's shared document), and File > Save and a reload keep them.

The server here is this module's own, with real-time collaboration on (the other browser tests turn it off:
tests/_browser.py ``jupyter_server(collaboration=False)``). Screenshots ``collab-live.png`` (before the reload)
and ``collab-reloaded.png`` go to ``$HOLON_NB_SCREENSHOTS`` (default: the test's tmp dir).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from _browser import chromium_page, notebook_screenshot, open_notebook, require, run_cells, save_and_reload, shots_dir
from _support import eventually

require("playwright", "jupyterlab", "jupyter_server_ydoc", "jupyter_nbmodel_client")
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser-collab")]

SCRIPT = """\
format: holon_nb.script/v1
steps:
  - tool_use: {id: call_1, name: EditNotebook, input: {op: insert, index: 3, source: "print('answer', x + 1)"}}
  - tool_use: {id: call_2, name: ExecuteCell, input: {index: 3}}
    expect: {last_message: {tool_results: [{tool_use_id: call_1, is_error: false}]}}
  - text: I inserted a cell below that prints the answer, and ran it.
    expect: {last_message: {tool_results: [{tool_use_id: call_2, is_error: false}]}}
"""


def _cell(source: str, kind: str = "code") -> dict:
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


NOTEBOOK = {
    "cells": [
        _cell("%load_ext holon_nb\n%config HolonNB.notebook_tools = True"),
        _cell("x = 41"),
        _cell("%%agent --model scripted/live.yaml --approve-all --wait\nAdd a cell that prints x + 1 and run it."),
        _cell("The end of the notebook.", "markdown"),
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}

#: Each cell's source and output text, as the page shows them.
CELLS = r"""() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map(cell => ({
  source: [...cell.querySelectorAll('.jp-InputArea .cm-line')].map(l => l.textContent).join('\n')
    || (cell.querySelector('.jp-MarkdownOutput')?.innerText ?? ''),
  output: [...cell.querySelectorAll('.jp-OutputArea-output')].map(o => o.innerText).join('\n'),
}))"""


@pytest.fixture(scope="module")
def collab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    from _browser import jupyter_server

    root = tmp_path_factory.mktemp("collab-root")
    (root / "live.ipynb").write_text(json.dumps(NOTEBOOK))
    (root / "live.yaml").write_text(SCRIPT)
    with jupyter_server(root, None, collaboration=True, HOLON_NB_HEADLESS="1") as base:
        yield base, root


def test_an_agents_cell_appears_live_and_is_saved(collab_server: tuple[str, Path], tmp_path: Path) -> None:
    base, root = collab_server
    shots = shots_dir(tmp_path)
    with chromium_page() as page:
        open_notebook(page, base, "live.ipynb", cells=4)
        run_cells(page, upto=3)

        def answered() -> list[dict] | None:
            cells = page.evaluate(CELLS)
            return cells if any("answer 42" in c["output"] for c in cells) else None

        try:
            cells = eventually(answered, timeout=120, step=0.5)  # no reload: the shared document brought it
        finally:
            notebook_screenshot(page, shots / "collab-live.png")
            print(json.dumps(page.evaluate(CELLS), indent=1)[:4000])
        assert [c["source"] for c in cells][3] == "print('answer', x + 1)", [c["source"] for c in cells]
        assert len(cells) == 5 and cells[3]["output"].strip() == "answer 42"
        assert cells[4]["source"].strip() == "The end of the notebook."
        assert "I inserted a cell below" in cells[2]["output"]

        save_and_reload(page)
        reopened = eventually(answered, timeout=60, step=0.5)
        notebook_screenshot(page, shots / "collab-reloaded.png")
        assert [c["source"] for c in reopened] == [c["source"] for c in cells]

    saved = json.loads((root / "live.ipynb").read_text())
    agent_cell = saved["cells"][3]
    assert "".join(agent_cell["source"]) == "print('answer', x + 1)"
    assert agent_cell["metadata"]["holon_nb"] == {"inserted_by": "agent"}
    assert "answer 42" in "".join(agent_cell["outputs"][0]["text"])
