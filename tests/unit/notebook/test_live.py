"""Live task views, final receipts and ``wait_and_report`` in the in-process shell.

Tasks stopped right after they start run without a login shell (``--no-login``):
killing ``bash -l`` while its profile runs ``pyenv rehash`` can leave pyenv's
lock file behind, which then stalls every login shell on the machine for 60 s.
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from _support import eventually
from IPython.utils.capture import capture_output
from ipywidgets.widgets.widget import _instances

import holon_nb
from holon_nb.notebook import wait_and_report
from holon_nb.notebook._widgets import VIEW_LINES, TaskWidget

RESULT = "application/vnd.holon.tool-result+json"
WIDGET = "application/vnd.jupyter.widget-view+json"
FALLBACK = "application/vnd.holon.live-fallback+json"
TICKS = "for i in 1 2 3 4; do echo tick-$i; sleep 0.15; done"


def _widget(bundles: list[dict[str, Any]]) -> TaskWidget:
    (view,) = [b[WIDGET] for b in bundles if WIDGET in b]
    widget = _instances[view["model_id"]]
    assert isinstance(widget, TaskWidget)
    return widget


def _own(outputs: Any) -> list[Any]:
    """The outputs other than live views' standby fallbacks and spent markers (notebook/_liveness.py)."""
    return [o for o in outputs if FALLBACK not in o.data]


def _display_id(output: Any) -> str:
    return output.transient.get("display_id", "")


def test_promoted_exec_view_is_replaced_by_its_final_receipt(ip: Any) -> None:
    with capture_output() as cap:
        ip.run_line_magic("exec", f"--yield-ms 100 {TICKS}")
        first = _own(cap.outputs)
        widget = _widget([o.data for o in first])
        assert wait_and_report(10) == []
        eventually(lambda: widget.status == "completed", timeout=60)
    # the cell shows the ExecCommand receipt and the live view, no third "will replace this line" slot
    assert len(first) == 2 and first[0].data[RESULT]["result"]["disposition"] == "promoted_to_task"
    assert "its final receipt replaces it" in first[1].data["text/plain"]
    view_id = _display_id(first[1])
    assert view_id
    later = _own(cap.outputs)[2:]
    # every later output updates the view's own display, with the final receipt (no widget left in the cell)
    assert later and all(o.update and _display_id(o) == view_id for o in later)
    assert all(o.data[RESULT]["tool_name"] == "TaskOutput" and WIDGET not in o.data for o in later)
    assert all(o.data[RESULT]["result"]["task"]["exit_status"] == 0 for o in later)
    text = widget.output
    positions = [text.index(f"tick-{i}") for i in range(1, 5)]
    assert positions == sorted(positions)
    assert widget.exit_status == 0 and widget._stop.disabled
    assert "tick-4" in widget.children[1].value  # the synced HTML child carries the tail
    assert widget.comm is None and widget.children[1].comm is None  # closed once replaced (children too)
    # right before the view, its standby fallback (shown only once the view is dead); spent at the end
    fallbacks = [o for o in cap.outputs if FALLBACK in o.data]
    assert FALLBACK in cap.outputs[1].data and not fallbacks[0].update
    assert fallbacks[0].data[FALLBACK]["state"] == "standby" and "interrupted" in fallbacks[0].data["text/plain"]
    assert fallbacks[-1].update and fallbacks[-1].data[FALLBACK]["state"] == "spent"
    assert {_display_id(o) for o in fallbacks} == {_display_id(fallbacks[0])}


def test_final_receipt_updates_the_origin_display(ip: Any) -> None:
    with capture_output() as cap:
        ip.run_line_magic("exec", "--yield-ms 0 sleep 0.2; echo final-marker")
        wait_and_report(10)
    # capture records display updates as further outputs; every TaskOutput one is an update of the view
    updates = [o for o in cap.outputs if RESULT in o.data and o.data[RESULT]["tool_name"] == "TaskOutput"]
    assert updates and all(o.update for o in updates)
    assert all("final-marker" in o.data["text/plain"] for o in updates)
    # the first line says how the task ended and how long it ran, not "success · 0 ms" (issue 26 #7)
    assert all(re.match(r"TaskOutput · completed · ran \d", o.data["text/plain"]) for o in updates), updates[0].data
    assert all("success" not in o.data["text/plain"].splitlines()[0] for o in updates)


def test_wait_and_report_displays_receipts_of_tasks_started_from_python_once(ip: Any) -> None:
    rt = holon_nb.get_runtime()
    result = rt.call("ExecCommand", {"cmd": "sleep 0.2; echo from-python", "yield_time_ms": 0})
    task_id = result.result["task_handle"]["task_id"]
    with capture_output() as cap:
        assert wait_and_report(10) == []
    (shown,) = [o.data for o in cap.outputs]
    assert shown[RESULT]["result"]["task"]["task_id"] == task_id
    assert "from-python" in shown["text/plain"]
    with capture_output() as cap:
        wait_and_report(10)
    assert cap.outputs == []


def test_wait_and_report_returns_running_ids_on_timeout(ip: Any) -> None:
    rt = holon_nb.get_runtime()
    args = {"cmd": "sleep 30", "yield_time_ms": 0, "login": False}
    task_id = rt.call("ExecCommand", args).result["task_handle"]["task_id"]
    with capture_output():
        assert wait_and_report(0.3) == [task_id]  # still running: it returned at its timeout, not the task's end
        ip.run_line_magic("holon", "wait --timeout 0.1")
        rt.call("TaskStop", {"task_id": task_id})


def test_stop_button_stops_the_task(ip: Any) -> None:
    with capture_output() as cap:
        ip.run_line_magic("exec", "--no-login --yield-ms 0 sleep 30")
        widget = _widget([o.data for o in cap.outputs])
        widget._stop.click()
        assert wait_and_report(10) == []
        eventually(lambda: widget.status == "cancelled", timeout=60)
    assert "stop requested" in widget.note


def test_task_magic_shows_a_live_view_replaced_by_its_final_state(ip: Any) -> None:
    # the command outlives the %task call by far (2 s), so its view is live even on a loaded machine
    with capture_output() as cap:
        ip.run_line_magic("exec", "--yield-ms 300 echo early; sleep 2; echo late")
        task_id = cap.outputs[0].data[RESULT]["result"]["task_handle"]["task_id"]
    with capture_output() as cap:
        ip.run_line_magic("task", task_id)
    bundles = [o.data for o in _own(cap.outputs)]
    assert bundles[0][RESULT]["tool_name"] == "TaskStatus"
    widget = _widget(bundles)
    assert len(bundles) == 2  # no second final receipt: that lives in the promotion cell
    assert "its final state replaces it" in bundles[1]["text/plain"]
    view_id = _display_id(_own(cap.outputs)[1])
    with capture_output() as after:
        wait_and_report(10)
    eventually(lambda: widget.status == "completed", timeout=60)
    assert widget.output.index("early") < widget.output.index("late")
    # the %task view's display becomes the task's final state: static text and HTML, no widget, no receipt
    mine = [o for o in after.outputs if _display_id(o) == view_id]
    assert mine and all(o.update and WIDGET not in o.data and RESULT not in o.data for o in mine)
    static = mine[-1].data
    assert static["text/plain"].startswith(f"{task_id} · completed (exit 0)")
    assert "late" in static["text/plain"] and "holon-task-static" in static["text/html"]
    assert widget.comm is None


def test_view_keeps_a_bounded_tail_in_order(ip: Any) -> None:
    n = VIEW_LINES * 3
    with capture_output() as cap:
        ip.run_line_magic("exec", f"--yield-ms 0 sleep 0.1; seq -f 'line-%g' 1 {n}")
        widget = _widget([o.data for o in cap.outputs])
        wait_and_report(10)
        eventually(lambda: widget.status == "completed" and f"line-{n}\n" in widget.output, timeout=60)
    lines = widget.output.splitlines()
    assert lines == [f"line-{i}" for i in range(n - VIEW_LINES + 1, n + 1)]
    assert widget.omitted_chars > 0


def test_live_update_rate_is_throttled(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """At 2 Hz the live hub's pump runs a cycle a full half second after its last, however late the machine
    runs it: its clock (``liveness.time``) is the test's here, moved only by the pump's own throttle sleeps,
    which still really sleep. The 40 lines (one every 25 ms) reach the view in fewer updates than lines."""
    from holon_nb.notebook import _liveness as liveness
    from holon_nb.notebook import current_session

    _session = current_session()

    ip.run_line_magic("config", "HolonNB.live_update_hz = 2")
    now = [time.monotonic()]

    def sleep(seconds: float) -> None:
        time.sleep(seconds)
        now[0] += seconds

    monkeypatch.setattr(liveness, "time", SimpleNamespace(monotonic=lambda: now[0], sleep=sleep))
    assert _session is not None
    hub, flushes = _session.hub, []
    cycle = hub._cycle
    monkeypatch.setattr(hub, "_cycle", lambda: (flushes.append(now[0]), cycle())[-1])
    with capture_output() as cap:
        ip.run_line_magic("exec", "--yield-ms 0 for i in $(seq 1 40); do echo x$i; sleep 0.025; done")
        widget = _widget([o.data for o in cap.outputs])
        changes: list[str] = []
        widget.children[1].observe(lambda c: changes.append(c["new"]), names="value")
        assert wait_and_report(60) == []
    eventually(lambda: widget.status == "completed", timeout=60)
    assert "x40" in widget.output and 1 <= len(changes) < 40  # coalesced, not one update per line
    gaps = [b - a for a, b in itertools.pairwise(flushes)]
    assert gaps and all(g >= 0.5 - 1e-9 for g in gaps), gaps  # a full period (float rounding aside)


@pytest.mark.parametrize("hz,expected", [(0, 0.5), (1000, 60.0), (4, 4.0)])
def test_live_update_hz_is_clamped(ip: Any, hz: float, expected: float) -> None:
    ip.run_line_magic("config", f"HolonNB.live_update_hz = {hz}")
    from holon_nb.notebook import current_session

    _session = current_session()

    assert _session is not None and _session.config.live_update_hz == expected


def test_widget_text_plain_and_escaping() -> None:
    widget = TaskWidget("task_0123456789abcde", summary="echo <b>")
    widget.apply(status="running", elapsed_s=1.25, output="<script>x</script>\n")
    assert "&lt;script&gt;" in widget.children[1].value
    assert "<b>" not in widget.children[0].value.replace("<b>task_", "")
    bundle = widget._repr_mimebundle_()
    assert "task_0123456789abcde" in bundle["text/plain"] and WIDGET in bundle
    widget.close()


def test_live_view_and_final_receipt_are_scrubbed(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "s3cr3t-token-value"
    monkeypatch.setenv("HOLON_TEST_TOKEN", secret)
    with capture_output() as cap:
        ip.run_line_magic("reload_ext", "holon_nb")
        ip.run_line_magic("exec", f"--yield-ms 0 sleep 0.1; echo $HOLON_TEST_TOKEN; echo {secret}-literal")
        widget = _widget([o.data for o in cap.outputs])
        wait_and_report(10)
        eventually(lambda: widget.status == "completed", timeout=60)
    assert secret not in widget.output + widget.children[0].value + widget.children[1].value
    assert "[redacted]" in widget.output and "[redacted]" in widget.children[0].value  # command summary too
    finals = [o.data for o in cap.outputs if RESULT in o.data and o.data[RESULT]["tool_name"] == "TaskOutput"]
    assert finals
    for bundle in finals:
        assert secret not in bundle["text/plain"] + bundle["text/html"] + repr(bundle[RESULT])


def test_unload_replaces_running_views_by_their_last_state(ip: Any) -> None:
    with capture_output() as cap:
        ip.run_line_magic("exec", "--no-login --yield-ms 0 sleep 30")
        widget = _widget([o.data for o in cap.outputs])
    view_id = _display_id(_own(cap.outputs)[1])
    with capture_output() as after:
        ip.run_line_magic("unload_ext", "holon_nb")
    try:
        update, spent = after.outputs  # ...the view is replaced by its last state, saying why no receipt will come
        assert update.update and _display_id(update) == view_id and WIDGET not in update.data
        assert "no final receipt" in update.data["text/plain"] and "closed" in update.data["text/plain"]
        assert spent.update and spent.data[FALLBACK]["state"] == "spent"  # its standby fallback is not needed
        assert widget.status == "interrupted" and "unloaded" in widget.note and widget._stop.disabled
        assert widget.comm is None
    finally:
        ip.run_line_magic("load_ext", "holon_nb")


def test_a_view_asked_for_after_the_task_ended_shows_static_output(ip: Any) -> None:
    from holon_nb.notebook import current_session

    _session = current_session()

    with capture_output() as cap:
        ip.run_line_magic("exec", "--yield-ms 0 sleep 0.1; seq -f 'n-%g' 1 5000")
        wait_and_report(10)
        assert _session is not None
        (task_id,) = _session.live.tracks()
        assert _session.live.show_live(task_id, None, origin=True) is None  # nothing live left to show
    # the final receipt was displayed directly (the task had already ended)
    assert cap.outputs[-1].data[RESULT]["tool_name"] == "TaskOutput" and not cap.outputs[-1].update
    with capture_output() as cap:
        assert _session.live.show_live(task_id, None, origin=False) is None
    (static,) = [o.data for o in cap.outputs]
    assert WIDGET not in static and static["text/plain"].splitlines()[-1] == "n-5000"
    assert "earlier characters not shown" in static["text/plain"]


def test_a_task_stopped_with_task_stop_keeps_its_real_duration(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The view's clock (``live.time``) is the test's: it moves 1.5 s while the task runs, and on after the stop;
    the view shows the 1.5 s the task ran, frozen at its end, not "cancelled 0.0 s" nor the time since."""
    from holon_nb.notebook import _live as live
    from holon_nb.notebook import current_session

    _session = current_session()

    now = [1000.0]
    monkeypatch.setattr(live, "time", SimpleNamespace(monotonic=lambda: now[0], sleep=time.sleep))
    with capture_output() as cap:
        ip.run_line_magic("exec", "--no-login --yield-ms 0 sleep 30")
        task_id = cap.outputs[0].data[RESULT]["result"]["task_handle"]["task_id"]
    with capture_output() as cap:
        ip.run_line_magic("task", task_id)
    widget = _widget([o.data for o in cap.outputs])
    view_id = _display_id(_own(cap.outputs)[1])
    assert _session is not None
    eventually(lambda: task_id in _session.live.tracks(), timeout=60)  # its start is on the view's clock
    now[0] += 1.5
    with capture_output() as cap:
        ip.run_line_magic("task_stop", task_id)
        assert wait_and_report(60) == []
    eventually(lambda: widget.status == "cancelled", timeout=60)
    now[0] += 30  # after the end: the view stays frozen at it
    (static,) = [o.data for o in _own(cap.outputs) if _display_id(o) == view_id][-1:]
    assert static["text/plain"].startswith(f"{task_id} · cancelled · 1.5 s")
    assert widget.elapsed_s == 1.5


def _placed(task_id: str, on_stop: Any, initial_output: str | None = None) -> tuple[Any, TaskWidget]:
    """``TaskViews.show_in`` from a thread of its own (as the ``%holon mcp serve`` cockpit calls it, from the
    server's thread, outside any cell): ``(the slot, the view's widget)``."""
    from ipywidgets import Output

    from holon_nb.notebook import current_session

    session = current_session()
    assert session is not None
    slot = Output()
    shown: list[Any] = []
    thread = threading.Thread(target=lambda: shown.append(session.live.show_in(task_id, initial_output, slot, on_stop)))
    thread.start()
    thread.join(30)
    (widget,) = shown
    assert isinstance(widget, TaskWidget)
    return slot, widget


def test_a_view_placed_in_a_widget_follows_its_task_then_holds_its_final_receipt(ip: Any, tmp_path: Path) -> None:
    """The one live hub draws a view its caller placed (``LiveHub.place``): the task's output reaches the
    widget while it runs, then its final receipt becomes the slot's one output and the widget is closed;
    nothing goes to the current cell, and ``%holon wait`` does not show that receipt again."""
    rt = holon_nb.get_runtime()
    gates = [tmp_path / "go-1", tmp_path / "go-2"]  # the task waits for each: it is seen live, whatever the load
    cmd = "; ".join(f"echo tick-{i + 1}; until [ -e {g} ]; do sleep 0.05; done" for i, g in enumerate(gates))
    cmd += "; echo tick-3"
    with capture_output() as cap:
        started = rt.call("ExecCommand", {"cmd": cmd, "yield_time_ms": 0, "login": False}).result
        task_id = started["task_handle"]["task_id"]
        # what it printed before its promotion comes with the promotion's receipt, as for a cell's view
        slot, widget = _placed(task_id, lambda _: "unused", started.get("initial_output_preview"))
        (placed,) = slot.outputs
        assert placed["data"][WIDGET]["model_id"] == widget.model_id  # the live view, in the slot
        eventually(lambda: "tick-1" in widget.children[1].value, timeout=60)
        gates[0].touch()
        eventually(lambda: "tick-2" in widget.children[1].value, timeout=60)  # output since, drawn as it comes
        assert widget.status == "running" and "tick-3" not in widget.output
        gates[1].touch()
        eventually(lambda: RESULT in slot.outputs[0]["data"], timeout=60)
        assert wait_and_report(10) == []
    assert cap.outputs == []  # nothing in the cell: not the view, not the final receipt
    (final,) = slot.outputs
    receipt = final["data"][RESULT]
    assert receipt["tool_name"] == "TaskOutput" and receipt["result"]["task"]["exit_status"] == 0
    assert "tick-3" in final["data"]["text/plain"]
    assert widget.status == "completed" and "tick-3" in widget.output
    assert widget.comm is None  # closed once replaced


def test_a_placed_views_stop_calls_its_callers_stop(ip: Any) -> None:
    rt = holon_nb.get_runtime()
    stopped: list[str] = []

    def stop(task_id: str) -> str:  # as the cockpit's: TaskStop as the agent that owns the task
        stopped.append(task_id)
        return rt.call("TaskStop", {"task_id": task_id}, agent="default").display_envelope["summary_text"]

    with capture_output():
        task_id = rt.call("ExecCommand", {"cmd": "sleep 30", "yield_time_ms": 0, "login": False}).result["task_handle"][
            "task_id"
        ]
        slot, widget = _placed(task_id, stop)
        widget._stop.click()
        eventually(lambda: RESULT in slot.outputs[0]["data"], timeout=60)
    assert stopped == [task_id] and widget.status == "cancelled"
    assert slot.outputs[0]["data"][RESULT]["result"]["task"]["status"] == "cancelled"
