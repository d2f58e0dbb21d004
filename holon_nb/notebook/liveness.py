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
a standby owner) by :func:`spent_bundle`, which hides itself.

In a saved notebook outside Jupyter (nbconvert, GitHub) the rules do not apply: a standby owner
reads as the task's interrupted state, the right reading of a notebook saved while its task ran.
"""

from __future__ import annotations

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
