"""The notebook's one live-view mechanism (:class:`LiveHub`), and what a live view shows once its kernel is gone.

**One mechanism.** Every live thing the notebook shows (a background task's view, a ``%workitems`` board,
an ``%%agent`` turn's view) is a :class:`LiveView` kept current by one :class:`LiveHub` per loaded
extension: it subscribes to runtime events once and hands each event to its feeds (task views in
:mod:`~holon_nb.notebook._live`, boards in :mod:`~holon_nb.notebook._board`, turns in
:mod:`~holon_nb.notebook._agent_magics`), which fold it into their state and mark views dirty on the
runtime thread; one pump thread (:data:`PUMP_THREAD_NAME`) draws dirty or due views at most once a
``HolonNB.live_update_hz`` period, then their standby owners (at most once a second, a held-back send
later); :meth:`LiveHub.retire` replaces a view by static output, spends its standby owner or beacon and
closes its widget (a task's end, a turn's end, a frozen board, an unload); :meth:`LiveHub.confirm`
re-sends replacements from a cell for headless clients; :meth:`LiveHub.place` keeps a view current that its
caller placed itself rather than displayed in the current cell (a served call's task view in the
``%holon mcp serve`` cockpit, from a server thread). Why one: three hubs, each with its own
subscription, pump, throttle, freeze and teardown, drifted apart (the kernel-restart standby had to be
added to the agent view separately); one mechanism is one place to fix update cadence, restart
standby, freezing and teardown.

**After the kernel is gone:** static fallbacks switched on by CSS alone.

A front end gives the kernel no chance to change old outputs at a restart: JupyterLab's
``KernelConnection.restart`` drops the old kernel's comms and display routes before it asks the
server to restart, so no ``update_display_data`` of the old kernel lands any more. What is left:

- a widget view whose kernel restarted stays on the page with the class
  ``jupyter-widgets-disconnected`` (the widget manager sets ``comm_live`` false on ``restarting``);
- after a save and a reload (the widget state is not saved by default), the widget's output is
  ``Error displaying widget: model not found``: the renderer node, ``.jp-OutputArea-output``, gets
  the class ``jupyter-widgets`` and holds only that text. (jupyterlab-manager never falls back to
  a ``text/html`` sibling of the widget view in the same bundle: once its widgets are restored it
  shows that error, and for a trusted output it always prefers the widget view.)

So a live thing is shown as two outputs in a row: first its *owner*, a display output (text and
HTML) the hub keeps current by display id, then a *beacon*, a widget. Rules of :data:`CSS` (the
owner's HTML carries them; ``:has()`` needs Chromium 105, Firefox 121, Safari 15.4) switch on
elements marked :data:`WHEN_DEAD` inside the owner, show an owner marked :data:`STANDBY` (hidden
while its beacon lives) and hide the dead beacon, when the beacon that follows is disconnected or
missing. A live task view is its own beacon (its Stop button needs a widget) and follows a standby
owner, its static last state saying the task was interrupted; a ``%workitems`` board is the owner and
a hidden empty widget its beacon. When the live thing ends normally, the hub replaces the beacon (and
a standby owner) by :func:`spent_bundle`, which hides itself. An ``%%agent`` turn's view is a beacon too,
after a standby owner: its transcript so far, as interrupted. :class:`Standby` displays a standby owner; the
hub keeps it current for both kinds of view.

In a saved notebook outside Jupyter (nbconvert, GitHub) the rules do not apply: a standby owner
reads as the task's interrupted state, the right reading of a notebook saved while its task ran.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

__all__ = [
    "PUMP_THREAD_NAME",
    "BEACON",
    "BEACON_HIDDEN",
    "CSS",
    "FALLBACK_MIMETYPE",
    "LiveHub",
    "LiveView",
    "OWNER",
    "SPENT",
    "STANDBY",
    "STYLE",
    "Standby",
    "WHEN_DEAD",
    "hidden_beacon",
    "spent_bundle",
]

log = logging.getLogger("holon_nb.notebook")

#: Name of the one pump thread that draws every live view.
PUMP_THREAD_NAME = "holon-nb-live"
#: Class of a beacon widget (the live task view's box, or a hidden board beacon).
BEACON = "holon-beacon"
#: Class of a beacon that is never shown (the board's).
BEACON_HIDDEN = "holon-beacon-hidden"
#: Class of the owner output's root: the output right before a beacon.
OWNER = "holon-beacon-owner"
#: Class of an owner shown only once its beacon is dead (a live task view's static fallback).
STANDBY = "holon-standby"
#: Class of elements inside an owner shown only once its beacon is dead (a board's "no longer updated").
WHEN_DEAD = "holon-when-dead"
#: Class of a spent owner or beacon (the live thing ended; nothing to show).
SPENT = "holon-spent"
#: Marks the extra outputs of live views (fallbacks and spent markers); notebook comparisons skip them.
FALLBACK_MIMETYPE = "application/vnd.holon.live-fallback+json"

_CHILD = ".jp-OutputArea-child"
_DEAD_NEXT = (
    f"+ {_CHILD} .{BEACON}.jupyter-widgets-disconnected",  # the kernel restarted (or died) under the page
    f"+ {_CHILD} > .jp-OutputArea-output.jupyter-widgets",  # reopened: "Error displaying widget: model not found"
)
_OWNER_DEAD = [f"{_CHILD}:has(.{OWNER}):has({d})" for d in _DEAD_NEXT]
#: The rules (no ``<style>`` tags); scoped to the classes above and to JupyterLab's output area.
CSS = (
    f".{WHEN_DEAD}{{display:none}}"
    + ",".join(f"{o} .{WHEN_DEAD}" for o in _OWNER_DEAD)
    + "{display:block}"
    + f"{_CHILD}:has(.{STANDBY})"
    + "".join(f":not(:has({d}))" for d in _DEAD_NEXT)
    + "{display:none}"
    + ",".join(
        [
            f"{_CHILD}:has(.{OWNER}) + {_CHILD}:has(.{BEACON}.jupyter-widgets-disconnected)",
            f"{_CHILD}:has(.{OWNER}) + {_CHILD}:has(> .jp-OutputArea-output.jupyter-widgets)",
            f"{_CHILD}:has(.{BEACON_HIDDEN})",
            f"{_CHILD}:has(.{SPENT})",
        ]
    )
    + "{display:none}"
)
#: :data:`CSS` in a ``<style>`` element, as owner outputs embed it.
STYLE = f"<style>{CSS}</style>"


def spent_bundle(what: str) -> dict[str, Any]:
    """The bundle that replaces a fallback or beacon once its live thing ended: empty, hidden in JupyterLab.

    Args:
        what: The live thing's id (e.g. a task id), kept in the marker.
    """
    return {
        "text/plain": "",
        "text/html": f"{STYLE}<div class='{SPENT}'></div>",
        FALLBACK_MIMETYPE: {"of": what, "state": "spent"},
    }


def hidden_beacon() -> Any:
    """A new hidden, empty widget to display right after an owner output (imports ipywidgets).

    Its bundle carries :data:`FALLBACK_MIMETYPE` (notebook comparisons skip it) and an empty ``text/plain``.
    """
    from ipywidgets import HTML, Layout

    class _Beacon(HTML):
        def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
            data = super()._repr_mimebundle_(**kwargs) or {}
            data["text/plain"] = ""
            data[FALLBACK_MIMETYPE] = {"of": "beacon", "state": "live"}
            return data

    beacon = _Beacon(layout=Layout(display="none"))
    beacon.add_class(BEACON)
    beacon.add_class(BEACON_HIDDEN)
    return beacon


def _stamp() -> str:
    """The local time, as a standby owner dates the state it shows."""
    return datetime.now().strftime("%Y-%m-%d %H:%M:%S")


class Standby:
    """The standby owner of one live view: displayed right before the view (its beacon), kept current.

    The owner shows the view's state as interrupted (a kernel restart or shutdown interrupts what the view
    follows); CSS (:data:`CSS`) shows it instead of the view once the view is dead or missing. The
    :class:`LiveHub` sends it after each draw of its view, at most once a ``period_s``, and a send held back
    later from its pump; when the live thing ends, :meth:`spend` replaces it by :func:`spent_bundle`.
    Thread-safe: any thread may :meth:`send` and :meth:`spend`; after :meth:`spend` nothing else is sent.

    Args:
        of: The live thing's id (a task id, an agent id), kept in the spent marker.
        bundle: Returns the owner's bundle for the state now, given when that is (local time, as text); its
            HTML root carries :data:`OWNER` and :data:`STANDBY` and embeds :data:`STYLE`.
        period_s: Shortest interval between two updates, in seconds.
    """

    def __init__(self, of: str, bundle: Callable[[str], dict[str, Any]], period_s: float = 1.0) -> None:
        self.of = of
        self._bundle = bundle
        self._period_s = period_s
        self._lock = threading.RLock()
        self._handle: Any = None
        self._at = 0.0
        self._spent = False

    def show(self) -> None:
        """Display the owner in the current cell (kernel thread): call right before displaying the view."""
        from IPython.display import display

        with self._lock:
            self._handle = display(self._bundle(_stamp()), raw=True, display_id=True)
            self._at = time.monotonic()

    def send(self, force: bool = False) -> float:
        """Update the owner to the view's state now (at most once a ``period_s`` unless ``force``).

        Returns:
            Seconds until a send held back by ``period_s`` may go (0.0 when sent, spent or not shown).
        """
        with self._lock:
            if self._handle is None or self._spent:
                return 0.0
            wait = self._at + self._period_s - time.monotonic()
            if wait > 0 and not force:
                return wait
            self._at = time.monotonic()
            self._handle.update(self._bundle(_stamp()), raw=True)
            return 0.0

    def spend(self) -> None:
        """The view was replaced by static output: replace the owner by the spent marker (again when called
        again, e.g. from a cell's own execution for a headless client)."""
        with self._lock:
            self._spent = True
            if self._handle is not None:
                self._handle.update(spent_bundle(self.of), raw=True)


class LiveView:
    """One live thing displayed in a cell and kept current by the :class:`LiveHub` (base class).

    A subclass says how to draw itself (:meth:`draw`, on the pump thread) and, by :meth:`every_s`, how often
    it wants a redraw when nothing changed; everything else (display, standby owner or beacon, cadence,
    replacement by static output, re-sending from a cell, closing) is the hub's. State is guarded by the
    hub's lock; a subclass guards its own.

    Attributes:
        of: The live thing's id (task id, agent id, ``board``), kept in spent markers.
        standby: Its standby owner, displayed right before it (task and agent views), or None.
        beacon: A hidden widget displayed right after it (a board's), or None.
        handle: Its display handle while live (None before it is shown and once it is replaced).
    """

    def __init__(self, of: str) -> None:
        self.of = of
        self.standby: Standby | None = None
        self.beacon: Any = None
        self.beacon_handle: Any = None
        self.handle: Any = None
        self.dirty = True  # redraw on the next pump cycle
        self.drawn_at = 0.0  # time.monotonic() of the last draw
        self.standby_due: float | None = None  # a standby send held back until then
        self.retired = False  # replaced by static output (from any thread)
        self.confirmed = False  # the replacement was sent from the kernel thread inside a cell
        self.replacement: tuple[Any, bool] | None = None  # (object or bundle, raw) that replaced it
        self.replaced_handle: Any = None  # the display the replacement went to
        self.replace: Callable[[Any, bool], None] | None = None  # a placed view's own replacement (LiveHub.place)

    def draw(self, stale: bool) -> None:
        """Bring the displayed view up to its state (pump thread); ``stale``: drawn because :meth:`every_s`
        passed with no change (a board's heartbeat)."""
        raise NotImplementedError

    def every_s(self) -> float | None:
        """Seconds between two redraws when nothing changed (0: every pump cycle); None: only when marked."""
        return None

    def close(self) -> None:
        """Close what the view is built of (a widget: its frontend model goes); called once it is replaced."""

    def confirm_live(self) -> None:
        """Re-send the live view's state from a cell's own execution, if a headless client may have missed it
        (kernel thread; a display-output view, e.g. a board; a widget view needs nothing)."""


class LiveHub:
    """The notebook's one live-view mechanism: one runtime subscription, one pump thread, one period.

    Feeds (task views, boards, ``%%agent`` turns) register with :meth:`feed`: the hub calls their
    ``on_event`` on the runtime thread (fold the event into their state and :meth:`mark` views, or the hub
    alone for a cycle; never draw) and their ``prepare`` first in every pump cycle. Lock order: a feed's
    lock, then the hub's (the hub calls no feed under its lock). Views join by :meth:`show` (displayed in the
    current cell) or :meth:`place` (placed by their caller, e.g. in a widget, from any thread). The pump
    thread (:data:`PUMP_THREAD_NAME`) runs at most one cycle a ``period_s()`` and draws every view marked
    dirty or due by its :meth:`LiveView.every_s`, then its standby owner (at most once a second, a held-back
    send later). :meth:`retire` replaces a view by static output from any thread (its standby owner and beacon
    spent, its widget closed); :meth:`confirm` re-sends replacements from a cell (kernel thread).

    Args:
        rt: The runtime whose events are followed.
        period_s: Returns the shortest interval between two pump cycles, in seconds (read every cycle, so a
            config change applies at once).
    """

    def __init__(self, rt: Any, period_s: Callable[[], float]) -> None:
        self._rt = rt
        self._period_s = period_s
        self._cond = threading.Condition()
        self._views: list[LiveView] = []
        self._feeds: list[tuple[Callable[[Any], None], Callable[[], None] | None]] = []
        self._kick = False
        self._stopping = False
        self._unsubscribe: Callable[[], None] | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ lifetime (kernel thread)
    def feed(self, on_event: Callable[[Any], None], prepare: Callable[[], None] | None = None) -> None:
        """Register a feed (before :meth:`start`): ``on_event(RuntimeEvent)`` on the runtime thread (it calls
        :meth:`mark` when it needs a cycle), ``prepare()`` on the pump thread before each cycle's draws."""
        self._feeds.append((on_event, prepare))

    def start(self) -> None:
        """Subscribe to the runtime (once, for every feed) and start the pump thread."""
        self._unsubscribe = self._rt.subscribe(self._on_event)
        self._thread = threading.Thread(target=self._pump, name=PUMP_THREAD_NAME, daemon=True)
        self._thread.start()

    def close(self, timeout_s: float = 5.0) -> None:
        """Unsubscribe, stop and join the pump thread (views stay as last drawn). Idempotent."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)
        self._thread = None

    # ------------------------------------------------------------ any thread
    def show(self, view: LiveView, obj: Any) -> None:
        """Display ``view`` in the current cell (kernel thread) and keep it current: its standby owner first,
        then ``obj`` (the widget or display object) with a display id, then its beacon."""
        from IPython.display import display

        if view.standby is not None:
            view.standby.show()
        view.handle = display(obj, display_id=True)
        if view.beacon is not None:
            view.beacon_handle = display(view.beacon, display_id=True)
        view.drawn_at = time.monotonic()
        with self._cond:
            self._views.append(view)
            self._cond.notify_all()

    def place(self, view: LiveView, replace: Callable[[Any, bool], None]) -> None:
        """Keep ``view`` current where its caller placed it (any thread), instead of displaying it in the current
        cell: e.g. in an ipywidgets ``Output`` filled from a server thread (the ``%holon mcp serve`` cockpit,
        whose calls arrive after its cell ended). The hub draws it as any view; :meth:`retire` hands its static
        replacement to ``replace(obj, raw)`` (again on :meth:`confirm`: keep it idempotent) instead of updating
        a display. It has no standby owner and no beacon: what holds it (a widget) is dead after a restart anyway.
        """
        view.replace = replace
        view.drawn_at = time.monotonic()
        with self._cond:
            self._views.append(view)
            self._cond.notify_all()

    def mark(self, *views: LiveView, wake: bool = True) -> None:
        """Mark ``views`` for a redraw on the next cycle (none: just wake the pump for the feeds); ``wake``
        False from a feed's ``prepare`` (this cycle draws them)."""
        with self._cond:
            for view in views:
                view.dirty = True
            if wake:
                self._kick = True
                self._cond.notify_all()

    def retire(self, view: LiveView, obj: Any, raw: bool = False, confirmed: bool = False) -> bool:
        """Replace ``view``'s display by static output ``obj`` and stop keeping it current; never raises.

        Its standby owner and beacon are spent, its widget closed. Kernel thread inside a cell:
        ``confirmed`` (a headless client keeps the message). Returns False when it was retired already.
        """
        with self._cond:
            if view.retired:
                return False
            view.retired, view.confirmed = True, confirmed
            view.replacement, view.replaced_handle, view.handle = (obj, raw), view.handle, None
            if view in self._views:
                self._views.remove(view)
        self._send_replacement(view)
        try:
            if view.beacon is not None:
                view.beacon.close()
            view.close()  # its display no longer shows it: the frontend drops the model
        except Exception:  # a closed kernel channel must not break an unload
            log.debug("closing a live view failed", exc_info=True)
        return True

    def confirm(self, views: Sequence[LiveView]) -> None:
        """Re-send, from the current cell (kernel thread), the replacement of each retired, unconfirmed view
        of ``views`` (once); a live one re-sends its state if it needs to (:meth:`LiveView.confirm_live`).

        The pump thread's updates reach JupyterLab, but a headless client (nbclient) keeps only messages
        of the cell it is executing, so a saved notebook could keep an older state.
        """
        with self._cond:
            todo = [v for v in views if v.retired and not v.confirmed]
            live = [v for v in views if not v.retired and v in self._views]
            for view in todo:
                view.confirmed = True
        for view in todo:
            self._send_replacement(view)
        for view in live:
            view.confirm_live()

    def draw_now(self, views: Sequence[LiveView]) -> None:
        """Draw each marked, live view of ``views`` now, in the calling thread (before a final save or unload)."""
        with self._cond:
            due = [v for v in views if v.dirty and not v.retired]
            for view in due:
                view.dirty, view.drawn_at = False, time.monotonic()
        for view in due:
            try:
                view.draw(False)
            except Exception:  # a closed runtime or a closed comm must not break a wait
                log.debug("live view refresh failed", exc_info=True)

    @staticmethod
    def _send_replacement(view: LiveView) -> None:
        obj, raw = view.replacement or (None, False)
        try:
            if view.replace is not None:
                view.replace(obj, raw)
            if view.replaced_handle is not None:
                view.replaced_handle.update(obj, raw=raw)
            if view.standby is not None:
                view.standby.spend()
            if view.beacon_handle is not None:
                view.beacon_handle.update(spent_bundle(view.of), raw=True)
        except Exception:  # a closed kernel channel must not break an unload or a wait
            log.debug("replacing a live view failed", exc_info=True)

    # ------------------------------------------------------------ runtime thread
    def _on_event(self, ev: Any) -> None:
        for on_event, _ in self._feeds:
            try:
                on_event(ev)
            except Exception:  # one feed must not break the others, nor the runtime
                log.exception("live view event failed")

    # ------------------------------------------------------------ pump thread
    def _wait_s(self, now: float) -> float | None:
        """Seconds until a cycle is wanted (0: now), None: nothing to do (call under the lock)."""
        if self._kick:
            return 0.0
        waits = []
        for view in self._views:
            every = view.every_s()
            if view.dirty:
                return 0.0
            if every is not None:
                waits.append(view.drawn_at + every - now)
            if view.standby_due is not None:
                waits.append(view.standby_due - now)
        return max(0.0, min(waits)) if waits else None

    def _pump(self) -> None:
        last = 0.0
        while True:
            with self._cond:
                while not self._stopping and (wait := self._wait_s(time.monotonic())) != 0.0:
                    self._cond.wait(wait)
                if self._stopping:
                    return
            delay = last + self._period_s() - time.monotonic()
            if delay > 0:
                time.sleep(delay)  # throttle: events arriving meanwhile are coalesced
            last = time.monotonic()
            try:
                self._cycle()
            except Exception:  # the pump must survive a broken view or frontend
                log.exception("live view update failed")

    def _cycle(self) -> None:
        """One pump cycle: the feeds' ``prepare``, then every due view drawn, then due standby owners."""
        with self._cond:
            self._kick = False
        for _, prepare in self._feeds:
            if prepare is not None:
                try:
                    prepare()
                except Exception:
                    log.exception("live view update failed")
        now = time.monotonic()
        with self._cond:
            due = []
            for view in self._views:
                every = view.every_s()
                if view.dirty or (every is not None and now >= view.drawn_at + every):
                    due.append((view, not view.dirty))
                    view.dirty = False
                    view.drawn_at = now
            standbys = [v for v in self._views if v.standby_due is not None and now >= v.standby_due]
        for view, stale in due:
            try:
                view.draw(stale)
            except Exception:  # a closed runtime or a closed comm must not end the pump
                log.debug("live view refresh failed", exc_info=True)
                continue
            standbys.append(view)
        for view in dict.fromkeys(standbys):
            if view.standby is not None and not view.retired:
                try:
                    wait = view.standby.send()
                except Exception:
                    log.debug("standby update failed", exc_info=True)
                    wait = 0.0
                with self._cond:
                    view.standby_due = time.monotonic() + wait if wait > 0 else None
