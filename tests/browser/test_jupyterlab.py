"""A real front end: JupyterLab in headless Chromium runs a notebook with a live task.

Skipped unless Debian's ``chromium``, the ``playwright`` package and
``jupyterlab`` are installed (``pip install ".[browser]"``; never
``playwright install``). The screenshot is saved under
``$HOLON_NB_SCREENSHOTS`` (default: the test's tmp dir) for a person to look at.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium")
playwright = pytest.importorskip("playwright.sync_api") if CHROMIUM else None
if CHROMIUM is None:
    pytest.skip("Debian's chromium is not installed", allow_module_level=True)
pytest.importorskip("jupyterlab")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path: Path):
    port = _free_port()
    token = "holon-nb-test"
    env = {**os.environ, "HOLON_NB_HOME": str(tmp_path / "home"), "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}", "--ServerApp.disable_check_xsrf=True", "--allow-root"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=1)
            break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("JupyterLab did not start")
    yield base, token, tmp_path
    os.killpg(proc.pid, 15)
    proc.wait(10)


def _write(root: Path, name: str, *sources: str) -> None:
    nb = new_notebook(cells=[new_code_cell(src) for src in sources],
                      metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(nb, root / name)


@contextlib.contextmanager
def _page(height: int):
    """A headless Chromium page (Debian's chromium), closed afterwards."""
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield browser.new_page(viewport={"width": 1300, "height": height})
        finally:
            browser.close()
    

def _shots(root: Path) -> Path:
    shots = Path(os.environ.get("HOLON_NB_SCREENSHOTS", root))
    shots.mkdir(parents=True, exist_ok=True)
    return shots


def _dismiss_dialogs(page) -> bool:
    """Accept (or, without an accept button, Escape) every open JupyterLab dialog; True when there was one."""
    seen = False
    for _ in range(5):
        if not page.locator(".jp-Dialog").count():
            break
        seen = True
        accept = page.locator(".jp-Dialog .jp-mod-accept")
        if accept.count():
            accept.first.click()
        else:
            page.keyboard.press("Escape")
        page.wait_for_timeout(200)
    return seen


def _settle(page, idle: bool = True, timeout_s: float = 90) -> None:
    """Before every step: dismiss any dialog JupyterLab puts up (a "Select Kernel" dialog can appear late, even
    after cells ran, and covers the menus) and (``idle``) wait for the kernel to be idle, dismissing dialogs that
    appear meanwhile."""
    deadline = time.monotonic() + timeout_s
    while True:
        _dismiss_dialogs(page)
        if not idle or page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").count():
            if not _dismiss_dialogs(page):
                return
            continue
        if time.monotonic() > deadline:  # leave what the page showed for a person to look at
            status = page.evaluate("() => [...document.querySelectorAll('.jp-Notebook-ExecutionIndicator')]"
                                   ".map(e => e.getAttribute('data-status'))")
            with contextlib.suppress(playwright.Error):
                page.screenshot(path=str(_shots(Path(os.environ.get("HOLON_NB_SCREENSHOTS", "/tmp")))
                                         / "not-idle.png"), full_page=True)
            raise AssertionError(f"the kernel did not become idle in {timeout_s} s (indicator: {status})")
        page.wait_for_timeout(200)


def _open_and_run_all(page, base: str, token: str, name: str) -> None:
    """Open a notebook in JupyterLab, wait for its kernel, and run every cell."""
    page.goto(f"{base}/lab/tree/{name}?token={token}")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    for _attempt in range(3):  # the menu sometimes opens before the notebook panel takes commands: try again
        _settle(page)
        page.get_by_text("Run", exact=True).first.click()
        _settle(page, idle=False)
        page.get_by_text("Run All Cells", exact=True).click()
        try:
            page.wait_for_function("() => [...document.querySelectorAll('.jp-InputPrompt')]"
                                   ".some(e => /\\[(\\*|\\d+)\\]/.test(e.textContent))", timeout=10_000)
            return
        except playwright.Error:
            page.keyboard.press("Escape")
    raise AssertionError("Run All Cells did not start the notebook")


def test_live_task_widget_renders(lab) -> None:
    base, token, root = lab
    _write(root, "live.ipynb", "%load_ext holon_nb",
           "%exec --yield-ms 300 for i in 1 2 3 4 5 6; do echo tick-$i; sleep 0.5; done", 'print("other cell")')
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
    assert "tick-6" in cell2 and "completed (exit 0)" in cell2
    assert "tick-" not in cell3 and "other cell" in cell3


def test_stop_button_stops_the_task(lab) -> None:
    base, token, root = lab
    _write(root, "stop.ipynb", "%load_ext holon_nb",
           "%exec --yield-ms 300 --no-login while true; do echo tick; sleep 0.2; done")
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
    _write(root, "follow.ipynb", "%load_ext holon_nb",
           f"%%agent --model scripted/{root / 'asks.yaml'} --follow 2\nRerun the report jobs; ask me first.",
           "import time, holon_nb\nrt, deadline = holon_nb.get_runtime(), time.time() + 60\n"
           "while not rt.store.query(\"SELECT 1 FROM waits WHERE status='active'\") and time.time() < deadline:\n"
           "    time.sleep(0.1)\ntime.sleep(2)  # the screenshot of the waiting view is taken now",
           '%holon say "CSV, please"')
    shots = _shots(root)
    with _page(1000) as page:
        _open_and_run_all(page, base, token, "follow.ipynb")
        view = page.locator(".jp-Cell").nth(1)
        page.wait_for_selector(".jp-Cell:nth-child(2) :text('following: waiting for one of 1 open wait(s)')",
                               timeout=60_000)
        _settle(page, idle=False)  # cell 3 keeps the kernel busy while the view waits
        waiting = view.inner_text()
        stop_visible = page.locator(".jp-Cell:nth-child(2) .jupyter-button:has-text('Stop')").is_visible()
        page.screenshot(path=str(shots / "follow-waiting.png"))
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
    long_lines = "for i in $(seq 1 60); do printf 'line %s %0150d\\n' $i 0; done; sleep 1.5"
    _write(root, "render.ipynb", "%load_ext holon_nb",
           r"""%%tool ExecCommand
{"cmd": "printf '%s\\n' '\\[ x^2 \\]' '$5 ... $6'"}""",
           r"""%%tool ExecCommandBatch
{"items": [{"cmd": "printf '%s\\n' '$5 ... $6'"}, {"cmd": "echo b"}]}""",
           f"%exec --yield-ms 200 --no-login {long_lines}",
           # the control: the same text in an HTML output of no holon card is typeset (MathJax runs here)
           'from IPython.display import HTML\nHTML(r"<div class=\'holon-control\'>\\[ y^2 \\]</div>")')
    shots = _shots(root)
    with _page(1000) as page:
        _open_and_run_all(page, base, token, "render.ipynb")
        page.wait_for_selector(".holon-task-output", timeout=60_000)
        page.wait_for_function("() => (document.querySelector('.holon-task-output')||{}).textContent"
                               "?.includes('line 40')", timeout=60_000)
        _settle(page)
        running = page.evaluate(RENDER_CHECKS)
        page.screenshot(path=str(shots / "render-running.png"), full_page=True)
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
