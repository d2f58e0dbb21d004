"""``TaskWidget``: the live view of one background task, built from stock ipywidgets.

The view is a ``VBox`` of an ``HTML`` header (task id, status pill, elapsed
time), an ``HTML`` ``<pre>`` with the output tail and a Stop button. State is
changed only through :meth:`TaskWidget.apply`, by whole-value trait
assignment, from whichever thread feeds it (the live hub's pump thread);
nothing is ever printed into an ``Output`` widget (style.md §2.13). Text is
escaped; the caller passes output already scrubbed of secrets (D12).
"""

from __future__ import annotations

import html
import logging
import threading
from collections.abc import Callable
from typing import Any

from ipywidgets import HTML, Button, Layout, VBox
from traitlets import Float, Int, Unicode

from ..render._ansi import ansi_to_html, strip_ansi
from ..render._card import card_root
from ..render._palette import muted_style
from ._liveness import BEACON, FALLBACK_MIMETYPE, OWNER, STANDBY, STYLE

__all__ = ["TAIL_FOLLOW", "VIEW_CHARS", "VIEW_LINES", "TaskWidget", "render_task_view", "static_task_view"]

log = logging.getLogger("holon_nb.notebook")

#: Most output lines shown in a live view.
VIEW_LINES = 40
#: Most output characters shown in a live view.
VIEW_CHARS = 8000

_TERMINAL = ("completed", "failed", "cancelled", "interrupted")
_COLOURS = {
    "queued": "#57606a",
    "running": "#0969da",
    "cancelling": "#9a6700",
    "completed": "#1a7f37",
    "failed": "#cf222e",
    "cancelled": "#9a6700",
    "interrupted": "#cf222e",
}


#: Class of the live view's tail widget: the scroll box that follows the newest line (:data:`_LIVE_CSS`).
TAIL_FOLLOW = "holon-tail-follow"
_TAIL_PRE = "margin:0;padding:4px 6px;white-space:pre-wrap;word-break:break-word"
_BOX = "max-height:28em;overflow:auto;display:flex;flex-direction:column-reverse;background:rgba(127,127,127,0.08)"
_STATIC_BOX = _BOX + ";margin:2px 0"
# The live tail: its widget element stays in the page while each update replaces its HTML, so its scroll
# position outlives updates. ``column-reverse`` measures that position from the bottom: at the bottom it
# follows new lines, like a terminal; scrolled up, the reader keeps their distance from the newest line
# (ipywidgets' own rules make the element a row; these win by specificity).
_LIVE_CSS = (
    f"<style>.widget-html.{TAIL_FOLLOW}{{{_BOX};overflow-anchor:none;align-items:stretch;margin:2px 0}}"
    f".widget-html.{TAIL_FOLLOW}:not(:has(.holon-task-output)){{background:none}}</style>"
)


def _tail(text: str) -> tuple[str, int]:
    """Cut ``text`` to its last VIEW_LINES lines and VIEW_CHARS characters; return (tail, chars left out)."""
    lines = text.splitlines(keepends=True)
    tail = "".join(lines[-VIEW_LINES:])[-VIEW_CHARS:]
    return tail, len(text) - len(tail)


def _label(status: str, exit_status: int | None) -> str:
    return status + (f" (exit {exit_status})" if exit_status is not None else "")


def render_task_view(
    task_id: str,
    summary: str,
    status: str,
    exit_status: int | None,
    elapsed_s: float,
    output: str,
    omitted_chars: int,
    note: str,
    live: bool = False,
) -> tuple[str, str]:
    """The header and the tail of a task view as HTML fragments (every value escaped).

    Args:
        live: For the live widget, whose tail widget is the scroll box (:data:`TAIL_FOLLOW`); a static
            view's tail is a box of its own. Both start at the newest line.

    Returns:
        ``(header, body)``, each a card root (:func:`holon_nb.render._card.card_root`).
    """
    ended = status in _TERMINAL
    colour = _COLOURS.get(status, "#57606a")
    parts = [
        f"<b>{html.escape(task_id)}</b>",
        f"<span style='background:{colour};color:#fff;border-radius:8px;padding:0 6px'>"
        f"{html.escape(_label(status, exit_status))}</span>",
        # whole seconds while running, so the header changes about once a second
        f"<span style='{muted_style()}'>{elapsed_s:.1f} s</span>"
        if ended
        else f"<span style='{muted_style()}'>{elapsed_s:.0f} s</span>",
    ]
    if summary:
        parts.append(f"<code>{html.escape(summary)}</code>")
    if note:
        parts.append(f"<i>{html.escape(note)}</i>")
    header = card_root((_LIVE_CSS if live else "") + " ".join(parts), classes="holon-task-header")
    omitted = (
        (
            f"<div style='{muted_style()}'>… {omitted_chars} earlier characters not shown "
            "(TaskOutput or the task log has them)</div>"
        )
        if omitted_chars
        else ""
    )
    if not output:
        tail = f"<i style='{muted_style()}'>{'(no output)' if ended else '(no output yet)'}</i>"
    elif live:  # the tail widget itself scrolls (it outlives each redraw, so a reader's scroll is kept)
        tail = f"<pre class='holon-task-output' style='{_TAIL_PRE}'>{ansi_to_html(output)}</pre>"
    else:  # a capped box of its own, showing its newest lines first (column-reverse starts at the end)
        tail = (
            f"<div class='holon-task-tail-box' style='{_STATIC_BOX}'>"
            f"<pre class='holon-task-output' style='{_TAIL_PRE}'>{ansi_to_html(output)}</pre></div>"
        )
    body = card_root(omitted + tail, classes="holon-task-tail")
    return header, body


def static_task_view(
    task_id: str,
    summary: str,
    status: str,
    exit_status: int | None,
    elapsed_s: float,
    output: str,
    omitted_chars: int,
    note: str,
    classes: str = "",
) -> dict[str, Any]:
    """A task view as a static mimebundle: ``text/plain`` (header line, then the tail) and ``text/html``.

    The HTML root carries the ``holon-task-static`` class (no widget: nothing breaks after a restart)
    and ``classes``.
    """
    header, body = render_task_view(task_id, summary, status, exit_status, elapsed_s, output, omitted_chars, note)
    line = " · ".join(p for p in (task_id, _label(status, exit_status), f"{elapsed_s:.1f} s", summary, note) if p)
    omitted = f"[… {omitted_chars} earlier characters not shown]\n" if omitted_chars else ""
    text = line + ("\n" + omitted + strip_ansi(output).rstrip("\n") if output else "\n(no output)")
    root = card_root(header + body, classes=" ".join(c for c in ("holon-task-static", classes) if c))
    return {"text/plain": text, "text/html": root}


class TaskWidget(VBox):
    """Live view of one background task: status, elapsed time, output tail, Stop.

    Args:
        task_id: The task shown.
        summary: One line describing the task (its command).
        on_stop: Called with the task id when Stop is clicked (kernel thread);
            returns a short note shown in the header (e.g. the TaskStop summary).
        replaced_by: What replaces the view's display when the task ends (said in its ``text/plain``).

    Example::

        w = TaskWidget("task_0123456789abcde", "sleep 5", on_stop=stop)
        w.apply(status="running", elapsed_s=1.2, output="tick-1\\n")
    """

    task_id = Unicode(help="Id of the task shown.")
    status = Unicode("queued", help="Task status (queued, running, cancelling or a terminal status).")
    exit_status = Int(None, allow_none=True, help="Exit status once the task ended; None before or when killed.")
    elapsed_s = Float(0.0, help="Seconds since the task was promoted (frozen when it ends).")
    output = Unicode("", help="Tail of the combined stdout/stderr shown, already scrubbed (D12).")
    omitted_chars = Int(0, help="Characters of earlier output not shown in the view.")
    note = Unicode("", help="Short note after a user action, e.g. 'stop requested'.")

    def __init__(
        self,
        task_id: str,
        summary: str = "",
        on_stop: Callable[[str], str] | None = None,
        replaced_by: str = "its final state",
        **kwargs: Any,
    ):
        self._summary = summary
        self._replaced_by = replaced_by
        self._on_stop = on_stop
        self._lock = threading.RLock()  # the pump thread and the kernel thread (Stop) both apply
        self._header = HTML()
        self._body = HTML()
        self._stop = Button(
            description="Stop",
            button_style="danger",
            tooltip="Stop this task (TaskStop)",
            icon="stop",
            layout=Layout(width="90px"),
        )
        super().__init__(children=(self._header, self._body, self._stop), task_id=task_id, **kwargs)
        self.add_class(BEACON)  # its standby fallback, displayed right before it, shows once it is dead
        self._body.add_class(TAIL_FOLLOW)
        self._stop.on_click(self._clicked)
        self._render()

    @property
    def ended(self) -> bool:
        """True once the task reached a terminal status."""
        return self.status in _TERMINAL

    def apply(
        self,
        *,
        status: str | None = None,
        exit_status: int | None = None,
        elapsed_s: float | None = None,
        output: str | None = None,
        omitted_before: int = 0,
        note: str | None = None,
    ) -> None:
        """Assign new state (whole values) and re-render the children once.

        Args:
            status: New task status, or None to keep it.
            exit_status: Exit status (only applied together with a status).
            elapsed_s: Seconds since promotion, or None to keep it.
            output: The scrubbed output known so far; the view keeps its tail.
            omitted_before: Characters of output dropped before ``output`` began.
            note: A short note, or None to keep it.
        """
        with self._lock:
            with self.hold_trait_notifications():
                if status is not None:
                    self.status = status
                    self.exit_status = exit_status
                if elapsed_s is not None:
                    self.elapsed_s = round(elapsed_s, 1)
                if output is not None:
                    self.output, left_out = _tail(output)
                    self.omitted_chars = left_out + omitted_before
                if note is not None:
                    self.note = note
            self._render()

    def _render(self) -> None:
        header, body = render_task_view(
            self.task_id,
            self._summary,
            self.status,
            self.exit_status,
            self.elapsed_s,
            self.output,
            self.omitted_chars,
            self.note,
            live=True,
        )
        if self._header.value != header:
            self._header.value = header
        if self._body.value != body:
            self._body.value = body
        if self._stop.disabled != self.ended:
            self._stop.disabled = self.ended
            self._stop.layout.display = "none" if self.ended else None  # nothing left to stop

    def static_bundle(self) -> dict[str, Any]:
        """The view as it is now, as a static mimebundle (``text/plain`` and ``text/html``, no widget).

        What replaces the live view's display once the task ended: a saved or reopened notebook (or a
        restarted kernel, whose widget models are gone) shows this instead of a broken widget.
        """
        with self._lock:
            return static_task_view(
                self.task_id,
                self._summary,
                self.status,
                self.exit_status,
                self.elapsed_s,
                self.output,
                self.omitted_chars,
                self.note,
            )

    def fallback_bundle(self, when: str) -> dict[str, Any]:
        """The standby fallback displayed right before the view: its state as of ``when``, as interrupted.

        Hidden in JupyterLab and Notebook 7 while the view is live; shown (and the view hidden) once the
        kernel restarted under the page or the notebook was reopened without the view's widget model
        (:mod:`holon_nb.notebook._liveness`). A kernel restart or shutdown interrupts every task it ran.

        Args:
            when: When the state shown was last updated (local time, as text).
        """
        with self._lock:
            data = static_task_view(
                self.task_id,
                self._summary,
                "interrupted",
                None,
                self.elapsed_s,
                self.output,
                self.omitted_chars,
                f"interrupted by a kernel restart or shutdown; last updated {when}; "
                "TaskOutput in the new kernel shows what it printed",
                classes=f"{OWNER} {STANDBY}",
            )
        data["text/html"] += STYLE
        data[FALLBACK_MIMETYPE] = {"of": self.task_id, "state": "standby"}
        return data

    def close(self) -> None:
        """Close the view and the widgets it is built of (their frontend models go too)."""
        for child in (self._header, self._body, self._stop):
            child.close()
        super().close()

    def _clicked(self, _button: Button) -> None:
        if self._on_stop is None or self.ended:
            return
        self.apply(note=self._on_stop(self.task_id))

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = super()._repr_mimebundle_(**kwargs) or {}
        data["text/plain"] = f"[live view of {self.task_id}; {self._replaced_by} replaces it when the task ends]"
        return data
