"""Shared pieces of the browser tests (tests/browser): a Jupyter server, a headless Chromium page, and the
steps a person takes in JupyterLab or Notebook 7 (dismiss a dialog, wait for the kernel, use a menu).

The browser is Debian's ``chromium`` driven by the PyPI ``playwright`` package; never ``playwright install``.
Without chromium, playwright, jupyterlab or notebook the tests skip, unless ``HOLON_NB_REQUIRE_BROWSER=1``
(set by ``.ci/run``): then the missing piece is a failure, so CI cannot pass by skipping them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TOKEN = "holon-nb-test"
REQUIRED = os.environ.get("HOLON_NB_REQUIRE_BROWSER", "") not in ("", "0")


def require(*modules: str) -> None:
    """Skip the calling test module when Debian's chromium or one of ``modules`` is missing; with
    ``HOLON_NB_REQUIRE_BROWSER=1`` fail it instead (CI must not pass by skipping the browser tests)."""
    missing = [] if CHROMIUM else ["Debian's chromium (apt-get install chromium)"]
    missing += [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return
    reason = "browser tests need " + ", ".join(missing) + " (pip install '.[test,browser]'; never playwright install)"
    if REQUIRED:
        pytest.fail(f"HOLON_NB_REQUIRE_BROWSER is set but {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# JupyterLab user settings for the test server: every cell in the DOM (no windowing, so off-screen cells are
# rendered and measured), no autosave (a copy is opened, but nothing should be written behind the test's back),
# no news toast over the notebook.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
}


@contextlib.contextmanager
def jupyter_server(
    root: Path,
    home: Path | None,
    app: str = "jupyterlab",
    collaboration: bool = False,
    args: Sequence[str] = (),
    **env_vars: str,
) -> Iterator[str]:
    """Run ``python -m {app}`` (``jupyterlab`` or ``notebook``) on 127.0.0.1 serving ``root``, its kernels
    using holon home ``home`` (None: each kernel's default, ``.holon/`` beside its notebook) and the extra
    environment ``env_vars``, with the extra command-line ``args`` (``--gateway-url=…``); yield the base URL.
    The server's process group is ended afterwards.

    With jupyter-collaboration installed (the ``collab`` extra) real-time collaboration is on in every
    JupyterLab; ``collaboration=False`` (the default) turns it off (``YDocExtension.disable_rtc``), so the
    browser tests see the classic file-backed front end they were written for."""
    port = _free_port()
    state = (home or root).parent
    settings = state / f"lab-settings-{port}"
    for name, value in LAB_SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(value))
    env = {k: v for k, v in os.environ.items() if k != "HOLON_NB_HOME"}
    env.update(
        JUPYTER_CONFIG_DIR=str(state / f"cfg-{port}"),
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(settings / "ws"),
        **env_vars,
    )
    if home is not None:
        env["HOLON_NB_HOME"] = str(home)
    # Kernels the server starts talk over Unix sockets in a short runtime directory of their own. jupyter_client
    # picks free TCP ports and closes them before the kernel binds them; on four busy workers another process
    # took one in between ("Address already in use"), and the server's restarts keep the ports, so the notebook
    # never got a kernel (jupyter/jupyter_client#154). A socket's path must stay under 108 bytes: a runtime
    # directory a test gives keeps TCP when it is long. A gateway's kernels are remote: their transport is its.
    runtime = env_vars.get("JUPYTER_RUNTIME_DIR")
    gateway = "JUPYTER_GATEWAY_URL" in env_vars or any(a.startswith("--gateway-url") for a in args)
    own_runtime = None
    if runtime is None and not gateway:
        own_runtime = runtime = tempfile.mkdtemp(prefix="jr-")
        env["JUPYTER_RUNTIME_DIR"] = runtime
    ipc = not gateway and runtime is not None and len(runtime) <= 40
    transport = ["--KernelManager.transport=ipc"] if ipc else []
    log = open(state / f"{app}-{port}.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            app,
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={root}",
            "--ServerApp.disable_check_xsrf=True",
            "--allow-root",
            *([] if collaboration else ["--YDocExtension.disable_rtc=True"]),
            *transport,
            *args,
        ],
        env=env,
        cwd=state,  # jupyter-collaboration keeps its .jupyter_ystore.db in the working directory
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=1)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"{app} did not start (log: {log.name})") from None
                time.sleep(0.3)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(5)
        log.close()
        if own_runtime is not None:
            shutil.rmtree(own_runtime, ignore_errors=True)


class Chromium:
    """This worker's one chromium (``chromium`` fixture, tests/browser/conftest.py): Debian's chromium started
    headless with a DevTools port, which each test's page connects to (``connect_over_cdp``) in a browser
    context of its own. Launching chromium for every test cost a second or more each time. Playwright itself
    starts and stops with each page: its sync API keeps an asyncio loop marked as running in the thread while
    it is started, and a later test of the same worker that runs an event loop (anyio, asyncio.run) fails
    ("Cannot run the event loop while another loop is running")."""

    def __init__(self, profile: Path) -> None:
        self.log = open(profile.parent / "chromium.log", "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            start_new_session=True,
        )
        port_file = profile / "DevToolsActivePort"  # chromium writes the port it chose here
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text().strip()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise AssertionError(f"chromium did not start (log: {self.log.name})")
            time.sleep(0.1)
        self.endpoint = f"http://127.0.0.1:{port_file.read_text().split()[0]}"

    def close(self) -> None:
        """End chromium's process group."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, 15)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait(5)
        self.log.close()


_CHROMIUM: list[Chromium] = []  # this worker's chromium while it runs (set by the ``chromium`` fixture)


@contextlib.contextmanager
def chromium_page(width: int = 1300, height: int = 1000):
    """A headless page of this worker's chromium in a browser context of its own (no cookies, storage or cache
    shared with another test), closed afterwards. When the block raises, the page is saved as
    ``failed-<test>.png`` in the screenshot directory first."""
    from playwright.sync_api import sync_playwright

    assert _CHROMIUM, "chromium_page needs the chromium fixture (tests/browser/conftest.py)"
    with sync_playwright() as p:
        browser = p.chromium.connect_over_cdp(_CHROMIUM[0].endpoint)
        context = browser.new_context(viewport={"width": width, "height": height})
        try:
            page = context.new_page()
            page.set_default_timeout(30_000)
            try:
                yield page
            except BaseException:  # leave what the page showed when the test failed, for a person to look at
                test = os.environ.get("PYTEST_CURRENT_TEST", "test").split(" ")[0].split("::")[-1]
                name = "".join(c if c.isalnum() or c in "-_." else "_" for c in test)[:120]
                with contextlib.suppress(Exception):
                    page.screenshot(path=str(shots_dir(Path("/tmp")) / f"failed-{name}.png"), full_page=True)
                raise
        finally:
            with contextlib.suppress(Exception):
                context.close()
            with contextlib.suppress(Exception):
                browser.close()  # a CDP connection: disconnects, chromium runs on


class LabServer:
    """One JupyterLab server per pytest worker (``lab_server`` fixture, tests/browser/conftest.py) serving
    ``root``; each test works in a folder of its own under it (:meth:`folder`), so each notebook's kernel has
    its own holon home (``.holon/`` beside the notebook), and :meth:`end_sessions` ends every kernel after the
    test. Notebook 7's pages (``/notebooks/…``) are served by the same server (the ``notebook`` package's
    server extension)."""

    def __init__(self, base: str, root: Path) -> None:
        self.base, self.root = base, root
        self._count = 0

    def folder(self, name: str) -> tuple[Path, str]:
        """A new empty folder for one test: its path and its path relative to the server's root (what the
        server's URLs and APIs take)."""
        self._count += 1
        rel = f"{self._count:03d}-{''.join(c if c.isalnum() or c in '-_.' else '_' for c in name)[:60]}"
        path = self.root / rel
        path.mkdir(parents=True)
        return path, rel

    def _api(self, method: str, path: str) -> object:
        request = urllib.request.Request(
            f"{self.base}{path}", headers={"Authorization": f"token {TOKEN}"}, method=method
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            body = answer.read()
        return json.loads(body) if body else None

    def end_sessions(self, timeout_s: float = 60) -> None:
        """Delete every session and kernel on the server and wait until none is left, so the next test starts
        with none (``open_notebook`` waits for exactly one kernel) and no kernel of this test runs on. (The
        JupyterLab workspace a test leaves is not reopened by the next: ``open_notebook`` loads with ``?reset``.)"""
        for session in self._api("GET", "/api/sessions") or []:
            with contextlib.suppress(OSError):
                self._api("DELETE", f"/api/sessions/{session['id']}")
        deadline = time.monotonic() + timeout_s
        while kernels := self._api("GET", "/api/kernels"):
            for kernel in kernels:
                with contextlib.suppress(OSError):
                    self._api("DELETE", f"/api/kernels/{kernel['id']}")
            if time.monotonic() > deadline:
                raise AssertionError(f"kernels still running after {timeout_s} s: {kernels}")
            time.sleep(0.2)


def shots_dir(default: Path) -> Path:
    """Where screenshots go: ``$HOLON_NB_SCREENSHOTS`` or ``default`` (created)."""
    shots = Path(os.environ.get("HOLON_NB_SCREENSHOTS") or default)
    shots.mkdir(parents=True, exist_ok=True)
    return shots


# In JupyterLab's "Select Kernel" dialog, pick the kernel the notebook's session already runs ("Connect to
# Existing Kernel", listed as "<name> (<id prefix>)") when there is one: accepting the default starts a new kernel,
# and the cells already sent to the running one are lost.
KEEP_KERNEL = r"""() => {
  const select = document.querySelector('.jp-Dialog select');
  if (!select) return false;
  const keep = [...select.options].find(o => /\([0-9a-f]{8}\)\s*$/.test(o.textContent));
  if (!keep) return false;
  select.value = keep.value;
  select.dispatchEvent(new Event('change', {bubbles: true}));
  return true;
}"""


def dismiss_dialogs(page) -> bool:
    """Accept (or, without an accept button, Escape) every open JupyterLab dialog, keeping the running kernel in
    a "Select Kernel" dialog (``KEEP_KERNEL``); True when there was one."""
    seen = False
    for _ in range(5):
        if not page.locator(".jp-Dialog").count():
            break
        seen = True
        with contextlib.suppress(Exception):
            page.evaluate(KEEP_KERNEL)
        accept = page.locator(".jp-Dialog .jp-mod-accept")
        try:
            if accept.count():
                accept.first.click(timeout=5_000)
            else:
                page.keyboard.press("Escape")
        except Exception:  # noqa: BLE001 - the dialog closed itself meanwhile; look again
            pass
        page.wait_for_timeout(200)
    return seen


IDLE = ".jp-Notebook-ExecutionIndicator[data-status='idle']"


def settle(page, idle: bool = True, timeout_s: float = 120, tick: Callable[[], None] | None = None) -> None:
    """Before every step: dismiss any dialog JupyterLab puts up (a "Select Kernel" dialog can appear late, even
    after cells ran, and covers the menus) and (``idle``) wait until the kernel is idle and no cell is queued
    (``[*]``), dismissing dialogs that appear meanwhile; ``tick`` runs at each poll (to sample the page while cells run).

    Raises AssertionError (with the indicator's status and a ``not-idle.png`` screenshot) after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        dismiss_dialogs(page)
        if tick is not None:
            tick()
        if not idle or (page.locator(IDLE).count() and not page.evaluate(RUNNING)):
            if not dismiss_dialogs(page):
                return
            continue
        if time.monotonic() > deadline:  # leave what the page showed for a person to look at
            status = page.evaluate(
                "() => [...document.querySelectorAll('.jp-Notebook-ExecutionIndicator')]"
                ".map(e => e.getAttribute('data-status'))"
            )
            with contextlib.suppress(Exception):
                page.screenshot(path=str(shots_dir(Path("/tmp")) / "not-idle.png"), full_page=True)
            raise AssertionError(f"the kernel did not become idle in {timeout_s} s (indicator: {status})")
        page.wait_for_timeout(250)


def start_session(base: str, path: str) -> None:
    """Start the notebook's kernel session on the server (POST /api/sessions, kernel python3) before the
    page opens the notebook: the page then joins the running session instead of
    choosing a kernel while it loads. (Left to the page, JupyterLab sometimes put up "Select Kernel" late, after
    cells were sent; accepting it replaced the kernel and the queued cells were lost: 4 of 7 runs failed.)"""
    headers = {"Authorization": f"token {TOKEN}", "Content-Type": "application/json"}
    body = json.dumps({"path": path, "name": Path(path).name, "type": "notebook", "kernel": {"name": "python3"}})
    request = urllib.request.Request(f"{base}/api/sessions", data=body.encode(), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert json.loads(answer.read())["kernel"]["id"], f"no kernel for {path}"


def open_notebook(page, base: str, path: str, app: str = "lab", cells: int | None = None) -> None:
    """Start ``path``'s kernel session (``start_session``), open the notebook page (``app``: ``lab`` for
    JupyterLab, ``notebooks`` for Notebook 7), wait until all its ``cells`` (default: as many as the file on
    disk under the server's root has; read through the contents API) are in the page and its kernel is idle
    (dismissing dialogs meanwhile). Before that, a menu command can go nowhere: the page looks ready but the
    notebook panel does not take commands yet."""
    start_session(base, path)
    if cells is None:
        request = urllib.request.Request(
            f"{base}/api/contents/{path}?content=1", headers={"Authorization": f"token {TOKEN}"}
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            cells = len(json.loads(answer.read())["content"]["cells"])
    # ?reset: start from an empty workspace (a saved one would reopen an earlier notebook of this server)
    url = f"{base}/lab/tree/{path}?reset&token={TOKEN}" if app == "lab" else f"{base}/notebooks/{path}?token={TOKEN}"
    page.goto(url)
    page.wait_for_function(
        f"() => document.querySelectorAll('.jp-Notebook .jp-Cell').length >= {cells}", timeout=90_000
    )
    settle(page)
    wait_kernel_settled(page, base)
    settle(page)


def wait_kernel_settled(page, base: str, steady_s: float = 3, timeout_s: float = 90) -> None:
    """Wait until the server runs exactly one kernel, with a client connected, and it has stayed the same kernel
    for ``steady_s`` seconds (dismissing dialogs meanwhile). Under load JupyterLab sometimes starts a kernel of its
    own while the page loads and shuts the first one down, seconds after the page looked ready; cells run before
    that are cancelled or lost."""
    headers = {"Authorization": f"token {TOKEN}"}
    deadline = time.monotonic() + timeout_s
    last, since = None, time.monotonic()
    while True:
        with urllib.request.urlopen(urllib.request.Request(f"{base}/api/kernels", headers=headers), timeout=10) as r:
            kernels = json.loads(r.read())
        now = kernels[0]["id"] if len(kernels) == 1 and kernels[0].get("connections", 1) >= 1 else None
        if now != last:
            last, since = now, time.monotonic()
        elif now is not None and time.monotonic() - since >= steady_s:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the notebook's kernel did not settle in {timeout_s} s: {kernels}")
        dismiss_dialogs(page)
        page.wait_for_timeout(250)


def menu(page, top: str, item: str, started: str | None = None) -> None:
    """Click menu ``top`` then its entry ``item`` (exact labels), settling (dialogs) before each click. With
    ``started`` (a JS predicate), wait until it holds and try the menu again (three times in all) when not: the
    menu sometimes opens before the notebook panel takes commands."""
    for _attempt in range(3):
        settle(page, idle=False)
        page.locator(".lm-MenuBar-itemLabel, .lm-MenuBar-content .lm-MenuBar-item").get_by_text(
            top, exact=True
        ).first.click()
        settle(page, idle=False)
        page.locator(".lm-Menu-itemLabel").get_by_text(item, exact=True).first.click()
        if started is None:
            return
        try:
            page.wait_for_function(started, timeout=10_000)
            return
        except Exception:  # noqa: BLE001 - playwright's TimeoutError: the command did not take; again
            page.keyboard.press("Escape")
    raise AssertionError(f"{top} > {item} did not take effect")


CLEARED = (
    "() => !document.querySelector('.jp-Notebook .jp-OutputArea-output') && "
    "[...document.querySelectorAll('.jp-Notebook .jp-InputPrompt')].every(e => !/\\d/.test(e.textContent))"
)
RUNNING = "() => [...document.querySelectorAll('.jp-InputPrompt')].some(e => /\\[\\*\\]/.test(e.textContent))"
STARTED = "() => [...document.querySelectorAll('.jp-InputPrompt')].some(e => /\\[(\\*|\\d+)\\]/.test(e.textContent))"


def select_cell(page, index: int) -> None:
    """Select cell ``index`` (0-based) in command mode, as a click on its left margin does."""
    settle(page, idle=False)
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.locator(".jp-InputPrompt").first.click()
    page.keyboard.press("Escape")
    page.wait_for_function(
        f"() => document.querySelectorAll('.jp-Notebook .jp-Cell')[{index}].classList.contains('jp-mod-selected')"
        " || document.querySelectorAll('.jp-Notebook .jp-Cell')["
        + str(index)
        + "].classList.contains('jp-mod-active')",
        timeout=10_000,
    )


def restart_kernel(page) -> None:
    """Kernel > Restart Kernel…, then the dialog's Restart button, as a person does; waits for idle."""
    settle(page)
    page.locator(".lm-MenuBar-itemLabel").get_by_text("Kernel", exact=True).first.click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Restart Kernel…", exact=True).first.click()
    page.locator(".jp-Dialog .jp-mod-accept").first.click(timeout=15_000)
    page.wait_for_timeout(500)
    settle(page)


def restart_until_disconnected(page) -> None:
    """Kernel > Restart Kernel… (:func:`restart_kernel`), then wait until the page's widget views are marked
    disconnected and one more frame, so the restart's styles apply before the caller reads the page."""
    restart_kernel(page)
    page.wait_for_function("() => document.querySelector('.jp-Notebook .jupyter-widgets-disconnected')", timeout=30_000)
    page.wait_for_timeout(300)  # one frame for the styles to apply


def wait_widget_models_gone(page) -> None:
    """After a reload of a notebook whose kernel restarted: wait until a widget output gave up on its model
    ("model not found": its output gets the class ``jupyter-widgets``), and one more frame."""
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-Notebook .jp-OutputArea-output.jupyter-widgets').length >= 1",
        timeout=30_000,
    )
    page.wait_for_timeout(300)


def save_and_reload(page) -> None:
    """File > Save Notebook, then a reload of the page, as a person reopening the notebook; waits until the
    widget manager has given up on any missing model (after 2 s), so a broken widget would show."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    menu(page, "File", "Save Notebook")
    page.wait_for_timeout(1000)
    settle(page)
    page.reload()
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    settle(page)
    page.wait_for_timeout(3000)
    # on a loaded machine the widget manager takes longer to resolve each saved widget (to a live view, or to
    # the error a dead one shows, which the static fallback hides): wait until no visible output still says
    # 'Loading widget...'; one that never resolves stays on the page for the caller's checks to report
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(
            """() => ![...document.querySelectorAll('.jp-OutputArea-output')]
                        .some(o => o.checkVisibility() && o.textContent.includes('Loading widget...'))""",
            timeout=90_000,
        )


def notebook_screenshot(page, path: Path, max_height: int = 16_000, cells: dict[int, Path] | None = None) -> None:
    """Save the whole open notebook (toolbar and every cell, not just the visible part) as a PNG: the viewport
    is made as tall as the notebook's scroll height (at most ``max_height`` px) for the shot, then restored.
    ``cells`` maps cell indexes to PNG paths for shots of single cells, taken while the viewport is tall (a cell
    taller than the usual viewport would be cut)."""
    size = page.viewport_size
    tall = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('.jp-NotebookPanel .jp-WindowedPanel-outer,"
        " .jp-NotebookPanel .jp-Notebook')].map(e => e.scrollHeight), 0)"
    )
    page.set_viewport_size({"width": size["width"], "height": min(max_height, max(size["height"], tall + 250))})
    try:
        page.evaluate(
            "() => document.querySelectorAll('.jp-NotebookPanel .jp-WindowedPanel-outer, "
            ".jp-NotebookPanel .jp-Notebook').forEach(e => { e.scrollTop = 0; })"
        )
        page.wait_for_timeout(500)
        box = page.evaluate(
            "() => { const p = document.querySelector('.jp-NotebookPanel').getBoundingClientRect();"
            " const cells = [...document.querySelectorAll('.jp-NotebookPanel .jp-Cell')];"
            " const end = cells.length ? cells[cells.length - 1].getBoundingClientRect().bottom + 16"
            " : p.bottom; return {x: p.left, y: p.top, width: p.width,"
            " height: Math.min(p.height, end - p.top)}; }"
        )
        page.screenshot(path=str(path), clip=box)
        for index, cell_path in (cells or {}).items():
            page.locator(".jp-Notebook .jp-Cell").nth(index).screenshot(path=str(cell_path))
    finally:
        page.set_viewport_size(size)


CANCELLED = (
    "([start, upto]) => [...document.querySelectorAll('.jp-Notebook .jp-Cell')]"
    ".slice(start, upto ?? undefined)"
    ".filter(c => c.classList.contains('jp-CodeCell'))"
    # a cell an agent offered (the Notebook tools without a collaboration document: set_next_input) is not run
    ".filter(c => !(c.querySelector('.jp-InputArea .cm-line')?.textContent ?? '').startsWith('# offered by an agent'))"
    ".some(c => /^\\[ \\]:?$/.test((c.querySelector('.jp-InputPrompt') || {}).textContent?.trim() ?? ''))"
)


def run_cells(
    page, item: str = "Run All Cells", start: int = 0, upto: int | None = None, watch_s: float = 15, attempts: int = 3
) -> None:
    """Run cells with Run > ``item`` as a person does, and make sure the run was not cut short: for ``watch_s``
    seconds (or until the kernel is idle) no code cell among cells ``start:upto`` (default: all) may fall back to
    ``[ ]`` (a queued cell JupyterLab cancelled). Under load JupyterLab sometimes drops the kernel connection
    right after the first cells were sent (the websocket closes; the queued cells are cancelled and never run).
    Then, as a person would, restart the kernel (Kernel > Restart Kernel…), clear the outputs and run again, up
    to ``attempts`` times in all.

    Raises AssertionError when every attempt was cut short."""
    for attempt in range(attempts):
        if attempt:
            print(f"run_cells: the run was cut short (cancelled cells); restart and run again ({attempt + 1})")
            restart_kernel(page)
            menu(page, "Edit", "Clear Outputs of All Cells", started=CLEARED)
        menu(page, "Run", item, started=STARTED)
        deadline = time.monotonic() + watch_s
        cut = False
        while time.monotonic() < deadline:
            dismiss_dialogs(page)
            if page.evaluate(CANCELLED, [start, upto]):
                cut = True
                break
            if page.locator(IDLE).count() and not page.evaluate(RUNNING):
                break
            page.wait_for_timeout(250)
        if not cut:
            return
    raise AssertionError(f"Run > {item} was cut short {attempts} times (cells cancelled)")


# A task that runs until the test says so, and a live board: what a restart leaves of their views
RESTART_TASK = "%exec --yield-ms 300 --no-login i=0; while [ ! -e done ]; do i=$((i+1)); echo tick-$i; sleep 0.2; done"
DEAD_VIEW = r"""(i) => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
  const shown = e => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
  return {
    text: cell.innerText,
    stop: [...cell.querySelectorAll('.jupyter-button')].filter(shown).length,
    disconnected: [...cell.querySelectorAll('.jupyter-widgets-disconnected')].filter(shown).length,
    running: [...cell.querySelectorAll('.holon-card span')].filter(shown)
               .filter(s => s.textContent.trim() === 'running').length,
  };
}"""


def wait_until_shown(page, cell: int, text: str, timeout_ms: int = 90_000) -> None:
    """Wait until cell ``cell`` of the open notebook shows ``text`` (its rendered, visible text) and no widget
    is still loading in it: after a restart or a reload, the page marks dead widgets on its own schedule,
    later on a loaded machine."""
    page.wait_for_function(
        """([i, text]) => {
          const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
          return !!cell && cell.innerText.includes(text) && !cell.innerText.includes('Loading widget');
        }""",
        arg=[cell, text],
        timeout=timeout_ms,
    )


def restart_checks(page, task_cell: int, board_cell: int) -> dict[str, dict]:
    """What cells ``task_cell`` (a live task view) and ``board_cell`` (a live board) show (:data:`DEAD_VIEW`)."""
    return {"task": page.evaluate(DEAD_VIEW, task_cell), "board": page.evaluate(DEAD_VIEW, board_cell)}


def assert_dead_views(state: dict[str, dict], when: str) -> None:
    """After a restart (issue 26 items 3, 4): the task view reads as interrupted, the board as no longer updated."""
    task, board = state["task"], state["board"]
    assert "interrupted by a kernel restart" in task["text"], (when, task["text"][-1500:])
    assert "Error displaying widget" not in task["text"] and "Loading widget" not in task["text"], (when, task)
    assert task["stop"] == 0 and task["disconnected"] == 0 and task["running"] == 0, (when, task)
    assert "tick-" in task["text"], (when, task["text"])  # its last output is still there to read
    assert "no longer updated since" in board["text"] and "Shown on the board" in board["text"], (when, board)
    assert "Error displaying widget" not in board["text"] and board["disconnected"] == 0, (when, board)


# An agent turn that runs until the test says so: a scripted model's ExecCommand, in the foreground, of a loop
# that ends once ``done`` exists (what a restart leaves of the ``%%agent`` view, issue 26 item 3)
SLOW_TURN = """\
format: holon_nb.script/v1
steps:
  - tool_use:
      id: call_1
      name: ExecCommand
      input: {cmd: "i=0; while [ ! -e done ]; do i=$((i+1)); echo tick-$i; sleep 0.2; done", yield_time_ms: 600000}
  - text: The loop ended.
"""


def agent_cell(script: Path) -> str:
    """A ``%%agent`` cell running the scripted model of file ``script`` (:data:`SLOW_TURN`)."""
    return f"%%agent --model scripted/{script}\nRun the loop until it ends."


#: True once the ``%%agent`` view shows its tool call running (the turn is under way, its Stop button offered).
TURN_RUNNING = (
    "() => [...document.querySelectorAll('.jp-Notebook .holon-tool-call summary')]"
    ".some(e => e.offsetHeight && /ExecCommand\\s+running/.test(e.textContent))"
)


def assert_dead_turn_views(states: dict[str, dict]) -> None:
    """:func:`assert_dead_turn_view` for each ``{when: state}``; one failure names every state that failed."""
    failures = []
    for when, turn in states.items():
        try:
            assert_dead_turn_view(turn, when)
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n".join(failures)


def assert_dead_turn_view(turn: dict, when: str) -> None:
    """After a restart (issue 26 item 3): the ``%%agent`` view (:data:`DEAD_VIEW`) reads as a static receipt
    interrupted by the kernel restart, its message and tool call still there to read; no Stop button, no running
    badge, no dead widget."""
    assert "interrupted by a kernel restart" in turn["text"], (when, turn["text"][-1500:])
    assert "Error displaying widget" not in turn["text"] and "Loading widget" not in turn["text"], (when, turn)
    assert turn["stop"] == 0 and turn["disconnected"] == 0 and turn["running"] == 0, (when, turn)
    assert "ExecCommand" in turn["text"] and "agent default" in turn["text"], (when, turn["text"][-1500:])
