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
    DEAD_VIEW,
    RESTART_TASK,
    SLOW_TURN,
    TURN_RUNNING,
    agent_cell,
    assert_dead_turn_views,
    assert_dead_views,
    chromium_page,
    menu,
    open_notebook,
    require,
    restart_checks,
    restart_kernel,
    restart_until_disconnected,
    run_cells,
    save_and_reload,
    settle,
    shots_dir,
    wait_until_shown,
    wait_widget_models_gone,
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
        page.wait_for_selector(  # in the live view (its standby owner before it, hidden, says the same)
            ".jp-Cell:nth-child(2) .holon-beacon :text('following: waiting for one of 1 open wait(s)')",
            timeout=60_000,
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
  // the live view's tail, in its scroll box (the standby fallback before it, hidden, has one too)
  const pre = [...document.querySelectorAll('.holon-task-output')].find(e => e.getClientRects().length);
  const tail = pre && (pre.closest('.holon-tail-follow') || pre);
  return {
    cards: cards.length,
    mathjax: cards.filter(c => c.querySelector('mjx-container, .MathJax, .MathJax_Display, .MathJax_Preview')).length,
    ignored: cards.filter(c => !(c.classList.contains('tex2jax_ignore') && c.classList.contains('mathjax_ignore'))).length,
    tdAlign: td ? getComputedStyle(td).textAlign : null,
    tailHeight: tail ? tail.getBoundingClientRect().height : null,
    tailLines: pre ? pre.textContent.split('\n').length : 0,
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
        page.wait_for_selector(".holon-tail-follow .holon-task-output", timeout=60_000)  # the live view's tail
        page.wait_for_function(
            "() => (document.querySelector('.holon-tail-follow .holon-task-output')||{}).textContent"
            "?.includes('line 40')",
            timeout=60_000,
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
        wait_until_shown(page, 2, "no longer updated since")
        after_restart = page.evaluate(DEAD_VIEW, 2)
        save_and_reload(page)
        wait_until_shown(page, 2, "no longer updated since")
        page.screenshot(path=str(shots / "board-reopened.png"), full_page=True)
        reopened = page.evaluate(DEAD_VIEW, 2)
    for shown in (after_restart, reopened):
        # no broken widget shown: the board is display output, drawn as it last was, saying it is no longer
        # updated (its hidden beacon widget, dead or missing, is what tells the page so)
        assert shown["disconnected"] == 0 and "Error displaying widget" not in shown["text"], shown
        assert "Added while no cell ran" in shown["text"] and "no longer updated since" in shown["text"], shown
    saved = nbformat.read(root / "board.ipynb", as_version=4)
    out, beacon = saved.cells[2].outputs
    assert "application/vnd.jupyter.widget-view+json" not in out["data"]
    assert "Added while no cell ran" in out["data"]["text/plain"]
    assert "application/vnd.holon.live-fallback+json" in beacon["data"]


def test_restart_during_a_task_leaves_static_views_before_and_after_reload(lab) -> None:
    """Issue 26 items 3 and 4: after Kernel > Restart the live task view reads as a static "interrupted by a
    kernel restart" receipt (no Stop button, no running badge, no broken-link icon) and the live board says
    since when it is no longer updated; the same after File > Save and a reload of the page."""
    base, token, root = lab
    _write(
        root,
        "restart.ipynb",
        "%load_ext holon_nb",
        '%workitem create "Shown on the board"',
        RESTART_TASK,
        "%workitems",
    )
    shots = _shots(root)
    with _page(1100) as page:
        _open_and_run_all(page, base, token, "restart.ipynb")
        page.wait_for_function(
            "() => [...document.querySelectorAll('.holon-task-output')].some(e => /tick-5\\b/.test(e.textContent))",
            timeout=60_000,
        )
        _settle(page)
        live = restart_checks(page, 2, 3)
        page.screenshot(path=str(shots / "restart-before.png"), full_page=True)
        restart_until_disconnected(page)
        after_restart = restart_checks(page, 2, 3)
        page.screenshot(path=str(shots / "restart-live-page.png"), full_page=True)
        save_and_reload(page)
        wait_widget_models_gone(page)  # the widgets' outputs gave up on their models ("model not found")
        reopened = restart_checks(page, 2, 3)
        page.screenshot(path=str(shots / "restart-reopened.png"), full_page=True)
    (root / "done").touch()
    # while the task ran: the live view, its Stop button; no fallback and no stale note shown
    assert live["task"]["stop"] == 1 and live["task"]["running"] == 1, live
    assert "interrupted by a kernel restart" not in live["task"]["text"], live["task"]["text"]
    assert "no longer updated" not in live["board"]["text"], live["board"]["text"]
    assert_dead_views(after_restart, "after the restart")
    assert_dead_views(reopened, "after save and reload")


def test_restart_during_an_agent_turn_leaves_a_static_view_before_and_after_reload(lab) -> None:
    """Issue 26 item 3 for the ``%%agent`` view: after Kernel > Restart while the turn runs (its tool call
    running), the view reads as a static "interrupted by a kernel restart" transcript (no Stop button, no
    running badge, no dead widget); the same after File > Save and a reload (no "Error displaying widget")."""
    base, token, root = lab
    (root / "slow.yaml").write_text(SLOW_TURN)
    _write(root, "turn.ipynb", "%load_ext holon_nb", agent_cell(root / "slow.yaml"))
    shots = _shots(root)
    try:
        with _page(1000) as page:
            _open_and_run_all(page, base, token, "turn.ipynb")
            page.wait_for_function(TURN_RUNNING, timeout=60_000)
            _settle(page)
            page.wait_for_timeout(1500)  # the standby lags the view by at most a second
            live = page.evaluate(DEAD_VIEW, 1)
            page.screenshot(path=str(shots / "turn-restart-before.png"), full_page=True)
            restart_until_disconnected(page)
            after_restart = page.evaluate(DEAD_VIEW, 1)
            page.screenshot(path=str(shots / "turn-restart-live-page.png"), full_page=True)
            save_and_reload(page)
            wait_widget_models_gone(page)  # the widgets' outputs gave up on their models ("model not found")
            reopened = page.evaluate(DEAD_VIEW, 1)
            page.screenshot(path=str(shots / "turn-restart-reopened.png"), full_page=True)
    finally:
        (root / "done").touch()
    # while the turn ran: the live view with its Stop button and running badge; its standby not shown
    assert live["stop"] == 1 and live["running"] >= 1, live
    assert "interrupted by a kernel restart" not in live["text"], live["text"]
    assert_dead_turn_views({"after the restart": after_restart, "after save and reload": reopened})


INTERRUPTED_OUTPUT = r"""(i) => {
  const out = document.querySelectorAll('.jp-Notebook .jp-Cell')[i].querySelector('.jp-OutputArea');
  return out ? out.innerText : '';
}"""


def test_interrupt_during_holon_wait_ends_the_cell_with_one_line(lab) -> None:
    """Issue 26 item 5 in JupyterLab: Kernel > Interrupt Kernel while ``%holon wait`` blocks ends the cell with
    one line naming what was stopped and what still runs, no traceback through holon_nb; the task goes on."""
    base, token, root = lab
    _write(root, "interrupt.ipynb", "%load_ext holon_nb", "%exec --yield-ms 0 --no-login sleep 120", "%holon wait")
    shots = _shots(root)
    with _page(900) as page:
        _open_and_run_all(page, base, token, "interrupt.ipynb")
        # the wait blocks: the task's view is shown and the last cell still runs
        page.wait_for_function(
            """() => document.querySelector('.jp-Notebook .holon-beacon')
                  && /\\[\\*\\]/.test(document.querySelectorAll('.jp-Notebook .jp-InputPrompt')[2].textContent)""",
            timeout=60_000,
        )
        menu(page, "Kernel", "Interrupt Kernel")
        page.wait_for_function(f"() => ({INTERRUPTED_OUTPUT})(2).includes('Interrupted:')", timeout=60_000)
        text = page.evaluate(INTERRUPTED_OUTPUT, 2)
        page.screenshot(path=str(shots / "interrupt-wait.png"), full_page=True)
    lines = [line for line in text.splitlines() if line.strip()]
    # Lab shows it as "KeyboardInterrupt: Interrupted: stopped %holon wait; still running: task_… — …"
    assert "Interrupted: stopped %holon wait; still running: task_" in text, text
    assert "holon_nb" not in text and "Traceback" not in text, text
    assert len(lines) <= 2, text  # one line (two at most when wrapped), not a traceback through the package


TAIL_STATE = r"""() => {
  // the live view's tail (its standby fallback, hidden before it, has one too)
  const pre = [...document.querySelectorAll('.jp-Notebook .holon-task-output')].find(e => e.getClientRects().length);
  if (!pre) return null;
  const box = pre.closest('.holon-tail-follow') || pre;  // the scroll box (before the fix: the <pre> itself)
  const b = box.getBoundingClientRect();
  const texts = [], walk = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) if (walk.currentNode.textContent.trim()) texts.push(walk.currentNode);
  const rect = (node, start, end) => { const r = document.createRange(); r.setStart(node, start);
                                       r.setEnd(node, end); return r.getBoundingClientRect(); };
  const first = texts[0], last = texts[texts.length - 1];
  const lastEnd = last.textContent.trimEnd().length;
  const oldest = rect(first, 0, 1), newest = rect(last, lastEnd - 1, lastEnd);
  const inView = r => r.top >= b.top - 2 && r.bottom <= b.bottom + 2;
  const numbers = (pre.textContent.match(/line-\d+/g) || []).map(s => +s.slice(5));
  return {
    newest: numbers.length ? Math.max(...numbers) : 0,
    scrollTop: box.scrollTop,
    scrollable: box.scrollHeight > box.clientHeight + 20,
    atBottom: inView(newest),  // the newest line is in view
    atTop: inView(oldest),  // the oldest line shown is in view
    x: b.left + b.width / 2, y: b.top + b.height / 2,
  };
}"""


def _tail_after(page, newest: int, timeout_ms: int = 60_000) -> dict:
    """The tail's state once it shows a line numbered above ``newest`` (a later update)."""
    page.wait_for_function(
        f"() => {{ const s = ({TAIL_STATE})(); return s && s.newest > {newest}; }}", timeout=timeout_ms
    )
    page.wait_for_timeout(100)  # one frame for layout
    return page.evaluate(TAIL_STATE)


def test_live_tail_follows_new_output_unless_the_reader_scrolled_up(lab) -> None:
    """Issue 26 item 6: the live output box shows the newest lines as they come (like a terminal); scrolled up,
    the reader keeps their place across updates; scrolled back down, it follows again."""
    base, token, root = lab
    _write(
        root,
        "tail.ipynb",
        "%load_ext holon_nb",
        "%exec --yield-ms 200 --no-login i=0; while [ ! -e done ]; do i=$((i+1)); echo line-$i; sleep 0.1; done",
    )
    shots = _shots(root)
    try:
        with _page(1000) as page:
            _open_and_run_all(page, base, token, "tail.ipynb")
            first = _tail_after(page, 60)  # the 40-line window is full and scrolls
            following = [_tail_after(page, first["newest"] + 3)]
            following.append(_tail_after(page, following[-1]["newest"] + 3))
            page.screenshot(path=str(shots / "tail-following.png"))
            at = page.evaluate(TAIL_STATE)
            page.mouse.move(at["x"], at["y"])
            page.mouse.wheel(0, -5000)  # the reader scrolls up to the oldest lines shown
            page.wait_for_function(f"() => ({TAIL_STATE})().atTop", timeout=10_000)
            scrolled = page.evaluate(TAIL_STATE)
            kept = [_tail_after(page, scrolled["newest"] + 3)]
            kept.append(_tail_after(page, kept[-1]["newest"] + 3))
            page.screenshot(path=str(shots / "tail-scrolled-up.png"))
            at = page.evaluate(TAIL_STATE)
            page.mouse.move(at["x"], at["y"])
            page.mouse.wheel(0, 5000)  # back down to the newest line: it follows again
            page.wait_for_function(f"() => ({TAIL_STATE})().atBottom", timeout=10_000)
            back = _tail_after(page, page.evaluate(TAIL_STATE)["newest"] + 3)
    finally:
        (root / "done").touch()
    assert first["scrollable"], first
    assert first["atBottom"] and all(s["atBottom"] for s in following), (first, following)
    assert scrolled["atTop"] and not scrolled["atBottom"], scrolled
    # the reader's place survived two updates: still at the top of the box, the newest line out of view
    assert all(s["atTop"] and not s["atBottom"] and s["scrollTop"] == scrolled["scrollTop"] for s in kept), (
        scrolled,
        kept,
    )
    assert back["atBottom"], back


# WCAG contrast of every text element of every holon card: its computed colour over its computed background
# (the first opaque background up its ancestors, translucent ones composited on top), alpha composited too
CONTRAST = r"""() => {
  const rgba = s => { const m = s.match(/rgba?\(([^)]+)\)/); if (!m) return null;
                      const v = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
                      return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
  const over = (top, below) => [0, 1, 2].map(i => top[i] * top[3] + below[i] * (1 - top[3])).concat([1]);
  const lum = c => { const f = x => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; };
                     return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const background = el => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let bg = [255, 255, 255, 1];
    for (const c of layers.reverse()) bg = over(c, bg);
    return bg;
  };
  const shown = e => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden';
  const rows = [];
  for (const card of document.querySelectorAll('.jp-Notebook .holon-card')) {
    for (const el of [card, ...card.querySelectorAll('*')]) {
      if (!shown(el) || el.tagName === 'STYLE') continue;
      const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
      if (!own) continue;
      const bg = background(el), fg = over(rgba(getComputedStyle(el).color), bg);
      const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
      rows.push({text: own.slice(0, 40), tag: el.tagName, color: getComputedStyle(el).color,
                 bg: `rgb(${bg.slice(0, 3).map(Math.round).join(',')})`, ratio: (hi + 0.05) / (lo + 0.05)});
    }
  }
  return {theme: document.body.dataset.jpThemeLight, rows};
}"""


def _theme(page, name: str, light: bool) -> None:
    """Settings > Theme > ``name``, as a person picks it; waits until JupyterLab applied it."""
    _settle(page, idle=False)
    page.locator(".lm-MenuBar-itemLabel").get_by_text("Settings", exact=True).first.click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Theme", exact=True).first.click()
    page.locator(".lm-Menu-itemLabel").get_by_text(name, exact=True).first.click()
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{str(light).lower()}'", timeout=30_000)
    page.wait_for_timeout(1000)  # the theme's stylesheet applied


def test_card_text_reaches_wcag_aa_in_light_and_dark_themes(lab) -> None:
    """Issue 26 item 8: every text of a receipt, an error card, a live task view (with coloured output) and a
    board reaches 4.5:1 against its background, measured from computed styles, in JupyterLab Light and Dark."""
    base, token, root = lab
    colours = "printf '\\033[31mred \\033[32mgreen \\033[33myellow \\033[34mblue \\033[90mgrey \\033[0mplain\\n'"
    _write(
        root,
        "contrast.ipynb",
        "%load_ext holon_nb",
        f"%exec {colours}",
        '%tool ExecCommand {"cmd": "true", "status": "x"}',
        '%workitem create "Needs the report" --todo "Fetch the data"',
        "%workitems",
        f"%exec --yield-ms 200 --no-login {colours}; while [ ! -e done ]; do echo tick; sleep 0.3; done",
    )
    shots = _shots(root)
    measured = {}
    try:
        with _page(1400) as page:
            _open_and_run_all(page, base, token, "contrast.ipynb")
            page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-Notebook .holon-task-output')]"
                ".some(e => e.getClientRects().length && e.textContent.includes('tick'))",
                timeout=60_000,
            )
            _settle(page)
            measured["light"] = page.evaluate(CONTRAST)
            page.screenshot(path=str(shots / "contrast-light.png"), full_page=True)
            _theme(page, "JupyterLab Dark", light=False)
            try:
                measured["dark"] = page.evaluate(CONTRAST)
                page.screenshot(path=str(shots / "contrast-dark.png"), full_page=True)
            finally:
                _theme(page, "JupyterLab Light", light=True)  # the server's settings outlive this test
    finally:
        (root / "done").touch()
    for theme, state in measured.items():
        assert state["theme"] == ("true" if theme == "light" else "false"), state["theme"]
        rows = state["rows"]
        assert len(rows) > 30, rows  # every card's texts were measured
        print(theme, "lowest:", sorted(rows, key=lambda r: r["ratio"])[:5])
        low = [r for r in rows if r["ratio"] < 4.5]
        assert not low, (theme, low)
