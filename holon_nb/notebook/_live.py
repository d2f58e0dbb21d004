"""Live task views: runtime task events → task views drawn by the live hub, and final receipts.

The views are kept current by the notebook's one live-view mechanism,
:class:`~holon_nb.notebook._liveness.LiveHub`; :class:`TaskViews` is its task feed.
Threads and who calls what:

- the **runtime thread** calls :meth:`TaskViews._on_event` (through the hub's
  one subscription); it only records the event in the task's track and marks
  its views — it never touches a widget or the display;
- the **pump thread** (the hub's ``holon-nb-live``) runs :meth:`TaskViews._prepare`
  first in each cycle: it coalesces output chunks, and the hub then assigns whole
  values to the task views at most ``live_update_hz`` times a second; when a task ends it fetches the final
  receipt (``TaskOutput`` with ``block=false`` through ``Runtime.call``) and
  replaces each live view's display with static output (``update_display_data``
  is routed by display id, so it lands in that cell whatever cell runs now):
  the view in the cell where the task started becomes the final receipt, a
  view shown by ``%task`` becomes its final state; the widget is then closed,
  so a saved, reopened or restarted notebook holds no widget of an ended task;
  each live view is displayed right after its standby fallback (its state as
  interrupted, at most a second old), which CSS shows instead of the view once
  the kernel restarts under the page or the notebook is reopened without the
  view's widget model (:mod:`holon_nb.notebook._liveness`); the fallback is spent
  (hidden) when the view is replaced;
- the **kernel thread** (magics) calls :meth:`TaskViews.show_live`,
  :meth:`TaskViews.wait`, :meth:`TaskViews.report` and :meth:`TaskViews.detach`;
- **any thread** may call :meth:`TaskViews.show_in`: a live view placed in a widget of its caller's instead
  of the current cell (the ``%holon mcp serve`` cockpit shows a served call's background task from the
  server's thread), drawn by the same hub and replaced by the final receipt in that widget.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from IPython.display import display

from ..render._scrubbing import Scrubber
from ..runtime import Runtime, ToolResult
from ..runtime.core._events import RuntimeEvent
from ..tools._errors import HolonNBError
from ._liveness import LiveHub, LiveView, Standby

if TYPE_CHECKING:  # the widget module loads ipywidgets: imported when a view is shown
    from ._widgets import TaskWidget

__all__ = ["TaskView", "TaskViews"]

log = logging.getLogger("holon_nb.notebook")

_KEEP_CHARS = 64_000  # output characters kept per task for its views
_CALL_ERRORS = (HolonNBError, RuntimeError, concurrent.futures.CancelledError)
_FALLBACK_PERIOD_S = 1.0  # a live view's standby fallback lags it by at most this


class TaskView(LiveView):
    """One displayed live view of a task (a :class:`~holon_nb.notebook._widgets.TaskWidget` after its standby
    fallback): drawn every pump cycle while its task runs, replaced by static output once it ended.

    Args:
        views: The task feed that draws it.
        track: Its task's track.
        widget: The widget shown.
        origin: The promotion cell's view: replaced by the final receipt (else by its final state).
    """

    def __init__(self, views: TaskViews, track: _Track, widget: TaskWidget, origin: bool) -> None:
        super().__init__(track.task_id)
        self.widget = widget
        self.origin = origin
        self._views = views
        self._track = track

    def every_s(self) -> float | None:
        return None if self._track.ended else 0.0  # its elapsed time moves every cycle

    def draw(self, stale: bool) -> None:
        self.widget.apply(**self._views._scrubbed_state(self._track))

    def close(self) -> None:
        self.widget.close()


@dataclass
class _Track:
    """What the hub knows of one task promoted in this kernel (guarded by the hub's lock)."""

    task_id: str
    summary: str
    started: float
    prefix: str | None = None  # output captured before promotion
    text: str = ""  # output since promotion (its last _KEEP_CHARS characters)
    dropped: int = 0  # characters cut from the front of ``text``
    pending: list[str] = field(default_factory=list)
    pending_chars: int = 0  # characters in ``pending`` (bounded: a flood keeps only its tail)
    status: str = "queued"
    exit_status: int | None = None
    ended_at: float | None = None
    final: ToolResult | None = None
    finalized: bool = False  # final receipt fetched (or fetching it failed)
    reported: bool = False  # final receipt shown in a cell (origin or a wait)
    waited: bool = False  # named as ended by a %holon wait note
    shown: list[TaskView] = field(default_factory=list)  # every view displayed
    dirty: bool = True

    @property
    def has_origin(self) -> bool:
        return any(s.origin for s in self.shown)

    @property
    def ended(self) -> bool:
        return self.ended_at is not None

    def elapsed(self) -> float:
        return (self.ended_at or time.monotonic()) - self.started

    def keep(self, text: str, limit: int) -> None:
        """Set ``text`` to its last ``limit`` characters, counting what is cut."""
        cut = max(0, len(text) - limit)
        if cut:
            self.dropped += cut + len(self.prefix or "")
            self.prefix = None  # the kept text alone is longer than any view's tail
            text = text[cut:]
        self.text = text

    def output(self) -> str:
        prefix = self.prefix or ""
        if prefix and self.text and not prefix.endswith("\n") and not self.text.startswith("\n"):
            prefix += "\n"  # the promotion preview is stripped of its final newline
        return prefix + self.text


class TaskViews:
    """The task feed of the live hub: tracks promoted tasks, shows their live views and final receipts.

    Args:
        rt: The kernel's runtime.
        hub: The live hub that draws the views (this registers itself as a feed).
    """

    def __init__(self, rt: Runtime, hub: LiveHub):
        self._rt = rt
        self._hub = hub
        self._cond = threading.Condition()
        self._tracks: dict[str, _Track] = {}
        self._closed = False
        hub.feed(self._on_event, self._prepare)

    def close(self) -> None:
        """Stop waiting (a :meth:`wait` returns); the hub's own close stops the events."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def detach(self, note: str) -> None:
        """Replace the live views of unfinished tasks by their last state, marked ``note`` (after the runtime closed).

        ``Runtime.close()`` ends live tasks ``interrupted`` (reason ``runtime_closed``), and so do their
        views; a view in the cell that started its task also says why no final receipt will come.
        """
        with self._cond:
            pending = [t for t in self._tracks.values() if not t.finalized]
            shown = [(v, t) for t in pending for v in t.shown if not v.retired]
        for view, track in shown:
            if not track.ended:
                view.widget.apply(status="interrupted", elapsed_s=track.elapsed(), note=note)
            if view.origin:
                view.widget.apply(note=f"{note}; no final receipt: TaskOutput shows what it printed")
            self._hub.retire(view, view.widget.static_bundle(), raw=True, confirmed=True)

    # ------------------------------------------------------------ runtime thread
    def _on_event(self, ev: RuntimeEvent) -> None:
        """Record one runtime event (runtime thread; returns at once)."""
        if ev.task_id is None:
            return
        with self._cond:
            track = self._tracks.get(ev.task_id)
            if ev.kind == "task_promoted" and track is None:
                track = _Track(ev.task_id, ev.data.get("cmd") or ev.data.get("summary") or "", time.monotonic())
                self._tracks[ev.task_id] = track
            if track is None:
                return
            if ev.kind == "task_output":
                track.pending.append(ev.data.get("text", ""))
                track.pending_chars += len(track.pending[-1])
                if track.pending_chars > 2 * _KEEP_CHARS:  # a flood between two flushes: keep only the tail
                    track.keep(track.text + "".join(track.pending), _KEEP_CHARS)
                    track.pending, track.pending_chars = [], 0
            elif ev.kind in ("task_status", "task_ended"):
                track.status = ev.data.get("status", track.status)
                track.exit_status = ev.data.get("exit_status")
                if ev.kind == "task_ended" and track.ended_at is None:
                    track.ended_at = time.monotonic()
            track.dirty = True
            self._cond.notify_all()
            self._hub.mark()

    # ------------------------------------------------------------ pump thread
    def _prepare(self) -> None:
        """First in each pump cycle: coalesce output, mark views of changed tasks, fetch final receipts."""
        marked, to_finalize = [], []
        with self._cond:
            for track in self._tracks.values():
                if track.pending:
                    track.keep(track.text + "".join(track.pending), _KEEP_CHARS)
                    track.pending, track.pending_chars = [], 0
                if track.dirty:
                    marked += [v for v in track.shown if not v.retired]
                track.dirty = False
                if track.ended and not track.finalized:
                    to_finalize.append(track)
        self._hub.mark(*marked, wake=False)
        for track in to_finalize:
            self._finalize(track)

    def _finalize(self, track: _Track) -> None:
        final = self._fetch_final(track.task_id)
        with self._cond:
            track.final, track.finalized = final, True
            from ._widgets import VIEW_CHARS

            if track.pending:  # output the pump has not drawn yet (a kernel-thread report got here first)
                track.keep(track.text + "".join(track.pending), _KEEP_CHARS)
                track.pending, track.pending_chars = [], 0
            track.keep(track.text, VIEW_CHARS)  # a later view only needs the tail
            if final is not None and track.has_origin:
                track.reported = True
            self._cond.notify_all()
        self._replace(track)

    def _replace(self, track: _Track, confirmed: bool = False) -> None:
        """Replace every live view of a finalized track: the cell that started the task gets the final receipt,
        other views their final state (even when the pump has not drawn it yet). ``confirmed``: kernel thread,
        inside a cell."""
        with self._cond:
            views = [v for v in track.shown if not v.retired]
            final = track.final
        if not views:
            return
        state = self._scrubbed_state(track)
        for view in views:
            view.widget.apply(**state)
            if view.origin and final is not None:
                self._hub.retire(view, final, confirmed=confirmed)
            else:
                self._hub.retire(view, view.widget.static_bundle(), raw=True, confirmed=confirmed)

    def _fetch_final(self, task_id: str) -> ToolResult | None:
        try:
            result = self._rt.call("TaskOutput", {"task_id": task_id, "block": False})
        except _CALL_ERRORS:
            log.debug("final receipt of %s unavailable (runtime closing)", task_id)
            return None
        return result.as_final_receipt(self._ran_ms(task_id))

    def _ran_ms(self, task_id: str) -> int | None:
        """How long the ended task ran (its record's creation to its last update), in ms; None if unknown."""
        from datetime import datetime

        try:
            rec = self._rt.store.task(task_id)
            if rec is None:
                return None
            start, end = (
                datetime.fromisoformat(str(rec[k]).replace("Z", "+00:00")) for k in ("created_at", "updated_at")
            )
        except (*_CALL_ERRORS, KeyError, ValueError):
            return None
        return max(0, round((end - start).total_seconds() * 1000))

    def _scrubber(self) -> Scrubber:
        return self._rt.scrubber()

    @staticmethod
    def _view_state(track: _Track) -> dict[str, Any]:
        return {
            "status": track.status,
            "exit_status": track.exit_status,
            "elapsed_s": track.elapsed(),
            "output": track.output(),
            "omitted_before": track.dropped,
        }

    def _scrubbed_state(self, track: _Track) -> dict[str, Any]:
        with self._cond:
            state = self._view_state(track)
        state["output"] = self._scrubber().text(state["output"])
        return state

    # ------------------------------------------------------------ kernel thread
    def show_live(self, task_id: str, initial_output: str | None, origin: bool = True) -> TaskWidget | None:
        """Display a live view of a task in the current cell; it is replaced by static output when the task ends.

        Args:
            task_id: A task promoted in this kernel.
            initial_output: Output captured before promotion (the promotion
                receipt's ``initial_output_preview``); None when unknown.
            origin: The cell that started the task: its view is replaced by the
                final receipt (TaskOutput); otherwise by the view's final state.

        Returns:
            The view's widget, or None when the task was not promoted in this kernel or has
            already ended (its static output is displayed at once).
        """
        return self._open(task_id, initial_output, origin, None, self._stop_task)

    def show_in(
        self, task_id: str, initial_output: str | None, slot: Any, on_stop: Callable[[str], str]
    ) -> TaskWidget | None:
        """Show a live view of a task in ``slot``, an ipywidgets ``Output`` its caller placed, from any thread.

        For a task started outside any cell: the ``%holon mcp serve`` cockpit shows a served call's background
        task under that call, from the server's thread, after its own cell ended. The hub keeps the view
        current like a cell's (:meth:`LiveHub.place`); the served call started the task, so when it ends its
        final receipt becomes the slot's one output (and ``%holon wait`` does not show it again) and the widget
        is closed. No standby fallback: the cockpit is a widget itself, dead after a restart anyway.

        Args:
            task_id: A task promoted in this kernel.
            initial_output: Output captured before promotion, as for :meth:`show_live`.
            slot: An ``ipywidgets.Output``; its outputs are replaced (by the view, then the final receipt).
            on_stop: Called with the task id by the view's Stop (kernel thread), e.g. TaskStop as the agent
                that owns the task; returns the note the view shows.

        Returns:
            The view's widget, or None when the task was not promoted in this kernel (the slot is left as it
            is) or was finalized already (its final receipt is put in the slot at once).
        """
        return self._open(task_id, initial_output, True, _slot_filler(slot), on_stop)

    def _open(
        self,
        task_id: str,
        initial_output: str | None,
        origin: bool,
        put: Callable[[Any, bool], None] | None,
        on_stop: Callable[[str], str],
    ) -> TaskWidget | None:
        """Show a live view of ``task_id``: displayed in the current cell (``put`` None), else ``put(obj, raw)``
        places it and later its replacement (see :meth:`show_live`, :meth:`show_in`)."""
        with self._cond:
            track = self._tracks.get(task_id)
            if track is None:
                return None
            if track.prefix is None and initial_output:
                track.prefix = initial_output
            summary = track.summary
            state = self._view_state(track)
            finalized, final = track.finalized, track.final
            if finalized and origin and final is not None:
                track.reported = True
        scrub = self._scrubber()
        summary, state["output"] = scrub.text(summary), scrub.text(state["output"])
        from ._widgets import TaskWidget, static_task_view

        if finalized:  # nothing live to show: the final receipt, or the task's final state
            obj: Any
            if origin and final is not None:
                obj, raw = final, False
            else:
                obj, raw = (
                    static_task_view(
                        task_id,
                        summary,
                        state["status"],
                        state["exit_status"],
                        state["elapsed_s"],
                        state["output"],
                        state["omitted_before"],
                        "",
                    ),
                    True,
                )
            if put is None:
                display(obj, raw=raw)
            else:
                put(obj, raw)
            return None
        widget = TaskWidget(
            task_id,
            summary=summary,
            on_stop=on_stop,
            replaced_by="its final receipt" if origin else "its final state",
        )
        widget.apply(**state)
        view = TaskView(self, track, widget, origin)
        if put is None:
            # first its standby fallback (hidden while the view lives), then the view: see liveness.py
            view.standby = Standby(task_id, widget.fallback_bundle, _FALLBACK_PERIOD_S)
            self._hub.show(view, widget)
        else:
            put(widget, False)
            self._hub.place(view, put)
        with self._cond:  # (the widget opens its comm outside the lock the runtime thread needs)
            track.shown.append(view)
            finalized = track.finalized
            if finalized and origin and track.final is not None:  # ended between the two locks
                track.reported = True
        if finalized:
            self._replace(track)
        else:
            self._hub.mark(view)
        return widget

    def tracks(self) -> list[str]:
        """Ids of the tasks promoted since the extension loaded, oldest first."""
        with self._cond:
            return list(self._tracks)

    def ended_since_last_wait(self) -> list[tuple[str, str]]:
        """``(task id, status)`` of tracked tasks that ended since the last call (``%holon wait`` names each once)."""
        with self._cond:
            ended = [t for t in self._tracks.values() if t.ended and not t.waited]
            for track in ended:
                track.waited = True
            return [(t.task_id, t.status or "ended") for t in ended]

    def pending(self) -> list[str]:
        """Ids of tracked tasks whose final receipt was not fetched yet (running, or just ended)."""
        with self._cond:
            return [t.task_id for t in self._tracks.values() if not t.finalized]

    def status(self, task_id: str) -> str | None:
        """The last known status of a tracked task (``completed``, ``failed``, …), or None."""
        with self._cond:
            track = self._tracks.get(task_id)
            return None if track is None else track.status

    def ended(self, task_id: str) -> bool:
        """True when ``task_id`` is tracked here and has ended (False for a running or unknown task)."""
        with self._cond:
            track = self._tracks.get(task_id)
            return track is not None and track.ended

    def knows(self, task_id: str) -> bool:
        """True when ``task_id`` was promoted in this kernel since the extension loaded."""
        with self._cond:
            return task_id in self._tracks

    def _stop_task(self, task_id: str) -> str:
        try:
            result = self._rt.call("TaskStop", {"task_id": task_id})
        except _CALL_ERRORS as exc:
            return f"stop failed: {exc}"
        return result.display_envelope.get("summary_text") or ("stop requested" if result.ok else "stop failed")

    def wait(self, timeout_s: float | None = None) -> list[str]:
        """Block until every tracked task ended and its final receipt was fetched.

        Args:
            timeout_s: Longest wait in seconds; None waits without limit.

        Returns:
            Ids of tracked tasks still running afterwards.
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._cond:
            while not self._closed and any(not t.finalized for t in self._tracks.values()):
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    break
                self._cond.wait(0.2 if remaining is None else min(remaining, 0.2))  # stays interruptible
            return [t.task_id for t in self._tracks.values() if not t.ended]

    def report(self, unslotted: bool = True) -> list[ToolResult]:
        """Show final receipts of ended tasks from the current cell (kernel thread).

        Every live view of an ended task has its display replaced again from
        inside this cell's execution (the final receipt in the cell that started
        the task, the final state elsewhere): the pump thread's own update goes
        out between or under other requests, and a headless client (nbclient)
        drops every message whose parent is not the cell it is executing, which
        left the live widget in saved notebooks. With ``unslotted``, a task
        displayed by no magic (started from Python) has its final receipt
        displayed here, once.

        Args:
            unslotted: Also display final receipts of tasks without a view in the cell
                that started them (``%holon wait``); False only re-sends replacements (the after-cell hook).

        Returns:
            The receipts newly displayed in the current cell.
        """
        with self._cond:  # ended, view waiting, final not fetched yet by the pump: fetch it now, here
            late = [t for t in self._tracks.values() if t.ended and not t.finalized and t.shown]
        for track in late:
            self._finalize(track)
        shown, finalized = [], []
        with self._cond:
            for track in self._tracks.values():
                if not track.finalized:
                    continue
                finalized.append(track)
                if unslotted and track.final is not None and not track.has_origin and not track.reported:
                    shown.append(track.final)
                    track.reported = True
        for track in finalized:
            self._replace(track, confirmed=True)
            self._hub.confirm(list(track.shown))
        for final in shown:
            display(final)
        return shown


def _display_item(obj: Any, raw: bool) -> dict[str, Any]:
    """``obj`` as an ipywidgets ``Output``'s ``display_data`` item, formatted as ``display`` would (``raw``: ``obj``
    is a mimebundle already)."""
    data: dict[str, Any] = obj if raw else {"text/plain": repr(obj)}
    metadata: dict[str, Any] = {}
    if not raw:
        from IPython.core.interactiveshell import InteractiveShell

        formatter = InteractiveShell.instance().display_formatter
        if formatter is not None:
            data, metadata = formatter.format(obj)
    return {"output_type": "display_data", "data": data, "metadata": metadata}


def _slot_filler(slot: Any) -> Callable[[Any, bool], None]:
    """``put(obj, raw)`` making ``obj`` (see :func:`_display_item`) the one output of ``slot``, an ipywidgets
    ``Output``, by one whole-value assignment (any thread; a comm message)."""
    lock = threading.Lock()

    def put(obj: Any, raw: bool) -> None:
        item = _display_item(obj, raw)
        with lock:
            slot.outputs = (item,)

    return put
