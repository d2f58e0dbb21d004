"""The live hub: runtime task events → throttled widget updates and final receipts.

Threads and who calls what:

- the **runtime thread** calls :meth:`LiveHub._on_event` (a runtime
  subscriber); it only records the event in the task's track and wakes the
  pump — it never touches a widget or the display;
- the **pump thread** (``holon-nb-live``), started by :meth:`LiveHub.start`,
  coalesces output chunks and assigns whole values to the task views at most
  ``live_update_hz`` times a second; when a task ends it fetches the final
  receipt (``TaskOutput`` with ``block=false`` through ``Runtime.call``) and
  replaces each live view's display with static output (``update_display_data``
  is routed by display id, so it lands in that cell whatever cell runs now):
  the view in the cell where the task started becomes the final receipt, a
  view shown by ``%task`` becomes its final state; the widget is then closed,
  so a saved, reopened or restarted notebook holds no widget of an ended task;
  each live view is displayed right after its standby fallback (its state as
  interrupted, at most a second old), which CSS shows instead of the view once
  the kernel restarts under the page or the notebook is reopened without the
  view's widget model (:mod:`holon_nb.notebook.liveness`); the fallback is spent
  (hidden) when the view is replaced;
- the **kernel thread** (magics) calls :meth:`LiveHub.show_live`,
  :meth:`LiveHub.add_view`, :meth:`LiveHub.wait` and :meth:`LiveHub.report`.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from IPython.display import DisplayHandle, display

from ..render.scrubbing import Scrubber
from ..runtime import Runtime, ToolResult
from ..runtime.core.events import RuntimeEvent
from ..tools.errors import HolonNBError
from .liveness import Standby

if TYPE_CHECKING:  # the widget module loads ipywidgets: imported when a view is shown
    from .widgets import TaskWidget

__all__ = ["PUMP_THREAD_NAME", "LiveHub"]

log = logging.getLogger("holon_nb.notebook")

PUMP_THREAD_NAME = "holon-nb-live"
_KEEP_CHARS = 64_000  # output characters kept per task for its views
_CALL_ERRORS = (HolonNBError, RuntimeError, concurrent.futures.CancelledError)
_FALLBACK_PERIOD_S = 1.0  # a live view's standby fallback lags it by at most this


@dataclass
class _Shown:
    """One displayed live view of a task: replaced by static output once the task ended."""

    view: TaskWidget
    handle: DisplayHandle
    origin: bool  # the promotion cell's view: replaced by the final receipt
    fallback: Standby | None = None  # its standby fallback, the output before it (liveness.py)
    replaced: bool = False  # static output sent (from any thread)
    confirmed: bool = False  # static output sent from the kernel thread inside a cell

    def send_fallback(self, force: bool = False) -> None:
        """Send the view's state as its standby fallback (at most once a second unless ``force``)."""
        if self.fallback is not None:
            self.fallback.send(force)

    def spend_fallback(self) -> None:
        """The live view is replaced by static output: its fallback is no longer needed (it hides itself)."""
        if self.fallback is not None:
            self.fallback.spend()


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
    views: list[TaskWidget] = field(default_factory=list)  # views still fed
    shown: list[_Shown] = field(default_factory=list)  # every view displayed, until replaced and confirmed
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


class LiveHub:
    """Feeds live task views and final receipts from runtime events.

    Args:
        rt: The kernel's runtime.
        period_s: Returns the shortest interval between two view updates, in
            seconds (read on every pump cycle, so a config change applies at once).
    """

    def __init__(self, rt: Runtime, period_s: Callable[[], float]):
        self._rt = rt
        self._period_s = period_s
        self._cond = threading.Condition()
        self._tracks: dict[str, _Track] = {}
        self._stopping = False
        self._unsubscribe: Callable[[], None] | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ lifetime (kernel thread)
    def start(self) -> None:
        """Subscribe to the runtime and start the pump thread."""
        self._unsubscribe = self._rt.subscribe(self._on_event)
        self._thread = threading.Thread(target=self._pump, name=PUMP_THREAD_NAME, daemon=True)
        self._thread.start()

    def close(self, timeout_s: float = 5.0) -> None:
        """Unsubscribe, stop and join the pump thread. Idempotent."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)
        self._thread = None

    def detach(self, note: str) -> None:
        """Replace the live views of unfinished tasks by their last state, marked ``note`` (after the runtime closed).

        ``Runtime.close()`` ends live tasks ``interrupted`` (reason ``runtime_closed``), and so do their
        views; a view in the cell that started its task also says why no final receipt will come.
        """
        with self._cond:
            pending = [t for t in self._tracks.values() if not t.finalized]
            views = [(v, t) for t in pending if not t.ended for v in t.views]
            shown = [(s, t.task_id) for t in pending for s in t.shown if not s.replaced]
            for s, _ in shown:
                s.replaced = s.confirmed = True
        for view, track in views:
            view.apply(status="interrupted", elapsed_s=track.elapsed(), note=note)
        for s, _task_id in shown:
            if s.origin:
                s.view.apply(note=f"{note}; no final receipt: TaskOutput shows what it printed")
            s.handle.update(s.view.static_bundle(), raw=True)
            s.spend_fallback()
            s.view.close()

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

    # ------------------------------------------------------------ pump thread
    def _pump(self) -> None:
        last = 0.0
        while True:
            with self._cond:
                if not self._stopping and not self._has_work():
                    self._cond.wait(self._period_s() if self._has_running_views() else None)
                if self._stopping:
                    return
            delay = last + self._period_s() - time.monotonic()
            if delay > 0:
                time.sleep(delay)  # throttle: chunks arriving meanwhile are coalesced
            last = time.monotonic()
            try:
                self._flush()
            except Exception:  # the pump must survive a broken view or frontend
                log.exception("live view update failed")

    def _has_work(self) -> bool:
        return any(t.dirty or (t.ended and not t.finalized) for t in self._tracks.values())

    def _has_running_views(self) -> bool:
        return any(t.views and not t.ended for t in self._tracks.values())

    def _flush(self) -> None:
        updates, to_finalize = [], []
        with self._cond:
            for track in self._tracks.values():
                if track.pending:
                    track.keep(track.text + "".join(track.pending), _KEEP_CHARS)
                    track.pending, track.pending_chars = [], 0
                if track.views and (track.dirty or not track.ended):
                    live = [s for s in track.shown if not s.replaced and s.view in track.views]
                    updates.append((list(track.views), live, self._view_state(track)))
                    if track.ended:
                        track.views = []  # final state rendered below; nothing more to feed
                track.dirty = False
                if track.ended and not track.finalized:
                    to_finalize.append(track)
        scrub = self._scrubber()
        for views, live, state in updates:
            state["output"] = scrub.text(state["output"])
            for view in views:
                view.apply(**state)
            for shown in live:
                shown.send_fallback()
        for track in to_finalize:
            self._finalize(track)

    def _finalize(self, track: _Track) -> None:
        final = self._fetch_final(track.task_id)
        with self._cond:
            track.final, track.finalized = final, True
            from .widgets import VIEW_CHARS

            if track.pending:  # output the pump has not drawn yet (a kernel-thread report got here first)
                track.keep(track.text + "".join(track.pending), _KEEP_CHARS)
                track.pending, track.pending_chars = [], 0
            track.keep(track.text, VIEW_CHARS)  # a later view only needs the tail
            if final is not None and track.has_origin:
                track.reported = True
            todo = self._take_replacements(track)
            self._cond.notify_all()
        self._replace(todo)

    def _take_replacements(self, track: _Track, confirm: bool = False) -> list[tuple[_Shown, Any, dict[str, Any]]]:
        """``(shown view, final receipt or None, view state)`` to send for a finalized track (call under the lock).

        The cell that started the task gets the final receipt, other views their final state. With
        ``confirm`` (kernel thread, inside a cell) views already replaced are sent once more.
        """
        todo = []
        for s in track.shown:
            if s.confirmed or (s.replaced and not confirm):
                continue
            s.replaced = True
            s.confirmed = s.confirmed or confirm
            if s.view in track.views:  # replaced: nothing more to feed
                track.views.remove(s.view)
            todo.append((s, track.final if s.origin and track.final is not None else None, self._view_state(track)))
        return todo

    def _replace(self, todo: list[tuple[_Shown, Any, dict[str, Any]]]) -> None:
        for s, final, state in todo:
            if final is not None:
                s.handle.update(final)
            else:  # the task's final state, even when the pump has not drawn it yet (kernel-thread report)
                state["output"] = self._scrubber().text(state["output"])
                s.view.apply(**state)
                s.handle.update(s.view.static_bundle(), raw=True)
            s.spend_fallback()
            s.view.close()  # its display no longer shows it: the frontend drops the model

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
            The view, or None when the task was not promoted in this kernel or has
            already ended (its static output is displayed at once).
        """
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
        from .widgets import TaskWidget, static_task_view

        if finalized:  # nothing live to show: the final receipt, or the task's final state
            if origin and final is not None:
                display(final)
            else:
                display(
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
                    raw=True,
                )
            return None
        view = TaskWidget(
            task_id,
            summary=summary,
            on_stop=self._stop_task,
            replaced_by="its final receipt" if origin else "its final state",
        )
        view.apply(**state)
        # first its standby fallback (hidden while the view lives), then the view: see liveness.py
        fallback = Standby(task_id, view.fallback_bundle, _FALLBACK_PERIOD_S)
        fallback.show()
        handle = display(view, display_id=True)
        shown = _Shown(view, handle, origin, fallback)
        with self._cond:  # (the widget opens its comm outside the lock the runtime thread needs)
            track.shown.append(shown)
            if not track.finalized:
                track.views.append(view)
                track.dirty = True
                self._cond.notify_all()
                return view
            late = self._view_state(track)  # ended between the two locks
            if origin and track.final is not None:
                track.reported = True
            todo = self._take_replacements(track)
        late["output"] = scrub.text(late["output"])
        view.apply(**late)
        self._replace(todo)
        return view

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
            while not self._stopping and any(not t.finalized for t in self._tracks.values()):
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
        shown, refresh = [], []
        with self._cond:
            for track in self._tracks.values():
                if not track.finalized:
                    continue
                refresh += self._take_replacements(track, confirm=True)
                if unslotted and track.final is not None and not track.has_origin and not track.reported:
                    shown.append(track.final)
                    track.reported = True
        self._replace(refresh)
        for final in shown:
            display(final)
        return shown
