"""Tutorial 01 in JupyterLab whose kernels run on a Jupyter Kernel Gateway (issue 30; docs/large-suites.md).

A real ``jupyter kernelgateway`` on 127.0.0.1 (a token) and a JupyterLab started with its gateway URL and token
(``JUPYTER_GATEWAY_URL`` / ``JUPYTER_GATEWAY_AUTH_TOKEN``, what ``--gateway-url`` and
``--GatewayClient.auth_token`` set): the notebook's kernel is the gateway's (Lab starts none of its own), and Run
All Cells runs the tutorial there with holon_nb loaded in the remote kernel: its receipts render as holon cards,
and no cell shows an error. The gateway starts kernels in a clone of this checkout's ``notebooks/`` (a Kernel
Gateway does not apply the notebook's folder; Enterprise Gateway does) with ``HOLON_NB_HOME`` and
``HOLON_NB_HEADLESS`` passed on to them.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest
from _browser import CLEARED, chromium_page, jupyter_server, menu, open_notebook, require, run_cells, settle
from _gateway import kernel_gateway

require("playwright", "jupyterlab")
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("kernel-gateway")]

REPO = Path(__file__).resolve().parents[2]

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


def _clone(root: Path) -> Path:
    """This checkout's files as a fresh git repository under ``root`` (tutorial 01 runs git in it)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (REPO / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, root / name)
    git = ["git", "-c", "user.name=Browser Test", "-c", "user.email=browser@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(git + ["add", "-A"], cwd=root, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "copy"], cwd=root, check=True)
    return root


@pytest.mark.timeout(900)
def test_tutorial_01_runs_in_jupyterlab_with_its_kernel_on_a_kernel_gateway(tmp_path: Path) -> None:
    lab_root = tmp_path / "lab"
    checkout = _clone(lab_root / "holon_nb")
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
