"""What a live view shows once its kernel is gone: static fallbacks switched on by CSS alone.

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
after a standby owner: its transcript so far, as interrupted. :class:`Standby` displays a standby owner and
keeps it current for both kinds of view.

In a saved notebook outside Jupyter (nbconvert, GitHub) the rules do not apply: a standby owner
reads as the task's interrupted state, the right reading of a notebook saved while its task ran.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

__all__ = [
    "BEACON",
    "BEACON_HIDDEN",
    "CSS",
    "FALLBACK_MIMETYPE",
    "OWNER",
    "SPENT",
    "STANDBY",
    "STYLE",
    "Standby",
    "WHEN_DEAD",
    "hidden_beacon",
    "spent_bundle",
]

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
    follows); CSS (:data:`CSS`) shows it instead of the view once the view is dead or missing. It lags the
    view by at most ``period_s``; when the live thing ends, :meth:`spend` replaces it by :func:`spent_bundle`.
    Thread-safe: any thread may :meth:`send` and :meth:`spend`; after :meth:`spend` nothing else is sent.

    Args:
        of: The live thing's id (a task id, an agent id), kept in the spent marker.
        bundle: Returns the owner's bundle for the state now, given when that is (local time, as text); its
            HTML root carries :data:`OWNER` and :data:`STANDBY` and embeds :data:`STYLE`.
        period_s: Shortest interval between two updates, in seconds.
        trailing: Send an update held back by ``period_s`` later, from a timer thread: for a view nothing
            redraws periodically (an agent turn waiting on a tool call sends no event to redraw it on).
    """

    def __init__(
        self, of: str, bundle: Callable[[str], dict[str, Any]], period_s: float = 1.0, trailing: bool = False
    ) -> None:
        self.of = of
        self._bundle = bundle
        self._period_s = period_s
        self._trailing = trailing
        self._lock = threading.RLock()
        self._handle: Any = None
        self._at = 0.0
        self._timer: threading.Timer | None = None
        self._spent = False

    def show(self) -> None:
        """Display the owner in the current cell (kernel thread): call right before displaying the view."""
        from IPython.display import display

        with self._lock:
            self._handle = display(self._bundle(_stamp()), raw=True, display_id=True)
            self._at = time.monotonic()

    def send(self, force: bool = False) -> None:
        """Update the owner to the view's state now (at most once a ``period_s`` unless ``force``)."""
        with self._lock:
            if self._handle is None or self._spent:
                return
            wait = self._at + self._period_s - time.monotonic()
            if wait > 0 and not force:
                if self._trailing and self._timer is None:
                    self._timer = threading.Timer(wait, self._late)
                    self._timer.daemon = True
                    self._timer.start()
                return
            self._at = time.monotonic()
            self._handle.update(self._bundle(_stamp()), raw=True)

    def _late(self) -> None:
        with self._lock:
            self._timer = None
            self.send(force=True)

    def spend(self) -> None:
        """The view was replaced by static output: replace the owner by the spent marker (again when called
        again, e.g. from a cell's own execution for a headless client)."""
        with self._lock:
            self._spent = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._handle is not None:
                self._handle.update(spent_bundle(self.of), raw=True)
