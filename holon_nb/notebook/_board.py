"""The live work-item board of ``%workitems``.

A board shows one agent's work items in scheduler order (objective, state,
readiness, focus, todos, blocker, active waits) and its active timers. It is
display output (text and HTML) kept current by the notebook's one live-view
mechanism (:class:`~holon_nb.notebook._liveness.LiveHub`): the runtime publishes an
event after every committed work-plane transition (a timer firing, a wait
triggered by a task result, a work item written by a magic or a model);
:class:`Boards`, the hub's board feed, marks the boards stale and the hub's pump
thread re-renders them at most ``live_update_hz`` times a second, so the board
changes without re-running its cell. The cell
output is displayed with a display id and updated in place, so a saved or
headless notebook, or a page whose kernel restarted, holds the board as it
last was (D12: scrubbed). A board that stops following (a newer board beyond
:data:`MAX_LIVE_BOARDS`, the extension unloaded, a kernel restart) is drawn a
last time with a note saying why. A front end that restarts the kernel drops
its display routes first, so a board can never be told its kernel is gone: a
hidden beacon widget follows each live board, and CSS alone shows the board's
"no longer updated since …" note once that beacon is disconnected or missing
(:mod:`holon_nb.notebook._liveness`); an unchanged board is redrawn every
:data:`HEARTBEAT_S` seconds to keep that time current.

Reading the board changes no state: it reads the work service directly
(no tool execution is recorded per refresh).
"""

from __future__ import annotations

import html
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from IPython.display import display

from ..render._card import card_root
from ..render._palette import fg, muted_style
from ..runtime import Runtime
from ..runtime.core._events import RuntimeEvent
from ..tools._context import CallContext
from ._liveness import OWNER, STYLE, WHEN_DEAD, LiveHub, LiveView, hidden_beacon

if TYPE_CHECKING:  # pragma: no cover
    from ._session import _Session

__all__ = [
    "BOARD_EVENTS",
    "DEFAULT_LIMIT",
    "HEARTBEAT_S",
    "MAX_LIVE_BOARDS",
    "Boards",
    "WorkBoard",
    "render_board_text",
    "show_board",
]

log = logging.getLogger("holon_nb.notebook")

#: Runtime event kinds after which a board re-reads its state.
BOARD_EVENTS = frozenset(
    {
        "work_item_changed",
        "focus_changed",
        "wait_changed",
        "timer_changed",
        "timer_fired",
        "message_enqueued",
        "message_processed",
        "brief_published",
        "task_ended",
    }
)
#: Seconds between two redraws of an unchanged live board, which date its "no longer updated since" note.
HEARTBEAT_S = 30.0
#: Rows a board shows unless ``--limit`` says otherwise (ListWorkItems' default).
DEFAULT_LIMIT = 20
#: Boards kept live at once; an older one freezes (says so) when a newer one is displayed.
MAX_LIVE_BOARDS = 5
_BOX = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}
_READINESS_COLOURS = {
    "runnable": "#1a7f37",
    "blocked": "#cf222e",
    "waiting_for_operator": "#9a6700",
    "yielded": "#8250df",
    "completed": "#57606a",
    "completing": "#57606a",
}


def _wait_text(w: dict[str, Any]) -> str:
    subject = f" {w['subject_ref']}" if w.get("subject_ref") else ""
    return f"{w.get('kind', '?')}{subject}: {w.get('waiting_for') or w.get('reason') or ''} ({w.get('status', '?')})"


def _timer_text(t: dict[str, Any]) -> str:
    repeat = f", every {t['interval_ms']} ms" if t.get("interval_ms") else ""
    summary = f"  {t['summary']}" if t.get("summary") else ""
    return f"{t['id']}  next {t.get('next_fire_at')}{repeat}  fired {t.get('fire_count', 0)}x{summary}"


def render_board_text(
    agent_id: str, items: list[dict[str, Any]], timers: list[dict[str, Any]], total: int | None = None, note: str = ""
) -> str:
    """The board as plain text (what a saved notebook shows).

    Args:
        agent_id: The agent shown.
        items: ``WorkService.board`` rows (already limited).
        timers: Active ``TimerRecord`` dicts.
        total: How many items matched before the limit (default ``len(items)``).
        note: A last line (e.g. why the board stopped updating).
    """
    total = len(items) if total is None else total
    shown = f" (the first {len(items)} shown; --limit N for more)" if total > len(items) else ""
    lines = [f"work items of agent {agent_id}: {total}{shown}"]
    for item in items:
        focus = "* " if item.get("is_current") else "  "
        lines.append(f"{focus}{item['id']}  [{item['state']}/{item['readiness']}]  {item['objective']}")
        if item.get("blocked_by"):
            lines.append(f"      blocked by: {item['blocked_by']}")
        for w in item.get("waits") or []:
            lines.append(f"      waits for {_wait_text(w)}")
        for todo in item.get("todo_list") or []:
            lines.append(f"      {_BOX.get(todo.get('state'), '[?]')} {todo.get('text')}")
    if timers:
        lines.append(f"active timers: {len(timers)}")
        lines.extend(f"  {_timer_text(t)}" for t in timers)
    if note:
        lines.append(f"[{note}]")
    return "\n".join(lines)


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def render_board_html(
    agent_id: str,
    items: list[dict[str, Any]],
    timers: list[dict[str, Any]],
    total: int | None = None,
    note: str = "",
    drawn_at: str | None = None,
) -> str:
    """The board as an HTML table (every value escaped); arguments as :func:`render_board_text`.

    Args:
        drawn_at: For a live board (followed by its beacon, :mod:`holon_nb.notebook._liveness`): when it was
            last drawn; a note saying it is no longer updated since then shows once its kernel is gone.
    """
    total = len(items) if total is None else total
    rows = []
    for item in items:
        colour = _READINESS_COLOURS.get(str(item.get("readiness")), "#57606a")
        todos = "".join(
            f"<div>{_e(_BOX.get(t.get('state'), '[?]'))} {_e(t.get('text'))}</div>" for t in item.get("todo_list") or []
        )
        waits = "".join(f"<div>waits for {_e(_wait_text(w))}</div>" for w in item.get("waits") or [])
        blocker = (
            f"<div style='color:{fg('error')}'>blocked by: {_e(item['blocked_by'])}</div>"
            if item.get("blocked_by")
            else ""
        )
        focus = "★ " if item.get("is_current") else ""
        rows.append(
            f"<tr style='vertical-align:top'><td>{focus}<b>{_e(item['objective'])}</b>"
            f"<div style='{muted_style()};font-size:85%'><code>{_e(item['id'])}</code></div></td>"
            f"<td>{_e(item['state'])}</td>"
            f"<td><span style='background:{colour};color:#fff;border-radius:8px;padding:0 6px'>"
            f"{_e(item['readiness'])}</span></td><td>{_e(item.get('focus'))}</td>"
            f"<td style='text-align:left'>{todos}</td><td style='text-align:left'>{blocker}{waits}</td></tr>"
        )
    head = (
        "<tr><th style='text-align:left'>objective</th><th>state</th><th>readiness</th><th>focus</th>"
        "<th style='text-align:left'>todos</th><th style='text-align:left'>blockers and waits</th></tr>"
    )
    table = (
        f"<table class='holon-board'>{head}{''.join(rows)}</table>"
        if rows
        else f"<div style='{muted_style()}'>(no work items)</div>"
    )
    timer_rows = "".join(f"<li>{_e(_timer_text(t))}</li>" for t in timers)
    timers_html = f"<div><b>active timers</b><ul style='margin:2px 0'>{timer_rows}</ul></div>" if timers else ""
    shown = f" (the first {len(items)} shown; --limit N for more)" if total > len(items) else ""
    note_html = f"<div style='color:{fg('warn')};font-style:italic'>{_e(note)}</div>" if note else ""
    if drawn_at is not None:  # shown by CSS alone once the kernel is gone (the page cannot be told any more)
        note_html += (
            f"<div class='{WHEN_DEAD}' style='color:{fg('warn')};font-style:italic'>"
            f"no longer updated since {_e(drawn_at)}: its kernel restarted or shut down; "
            f"re-run this cell to refresh it</div>{STYLE}"
        )
    return card_root(
        f"<b>work items of agent {_e(agent_id)}</b>: {total}{_e(shown)}{table}{timers_html}{note_html}",
        classes="holon-board-view" + (f" {OWNER}" if drawn_at is not None else ""),
    )


class WorkBoard(LiveView):
    """One displayed board: its last text and HTML, and the display handle the live hub updates.

    A board is display output, not a widget: it is re-rendered with ``update_display_data`` by its
    display id, so nothing of it depends on a comm. JupyterLab drops an old kernel's comms and display
    routes before it asks for a restart (``KernelConnection.restart`` clears its kernel state first), so a
    widget could not be replaced then and stayed a broken-link icon; a display keeps the board as it was
    last drawn, in the page, the saved file and a reopened notebook.

    Args:
        agent_id: The agent shown.
        filter_name: A ListWorkItems filter (``None``: every item).
        limit: Rows shown (1..100).
    """

    def __init__(self, agent_id: str, filter_name: str | None = None, limit: int = DEFAULT_LIMIT):
        super().__init__("board")
        self.agent_id = agent_id
        self.filter_name = filter_name
        self.limit = limit
        self.note = ""
        self.text = ""
        self.value = ""  # the HTML
        self.confirmed_text: str | None = None  # the text last sent from a cell's own execution
        self.drawn: str | None = None  # the HTML without its time stamp, to see whether anything changed
        self.frozen = False  # drawn a last time (with its note): no "no longer updated since" stamp
        self.boards: Boards | None = None  # the feed that renders it while it is live

    def every_s(self) -> float | None:
        return HEARTBEAT_S  # an unchanged board is redrawn to date its "no longer updated since" note

    def draw(self, stale: bool) -> None:
        if self.boards is not None:
            self.boards.render(self, restamp=stale)

    def confirm_live(self) -> None:
        if self.handle is not None and self.text != self.confirmed_text:
            self.confirmed_text = self.text
            self.handle.update(self)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return {"text/plain": self.text, "text/html": self.value}


class Boards:
    """The board feed of the live hub: marks every live board stale after a work-plane transition.

    Args:
        rt: The runtime whose work service is read.
        hub: The live hub that draws the boards (this registers itself as a feed).
    """

    def __init__(self, rt: Runtime, hub: LiveHub):
        self._rt = rt
        self._hub = hub
        self._lock = threading.Lock()
        self._boards: list[WorkBoard] = []
        hub.feed(self._on_event)

    def _on_event(self, ev: RuntimeEvent) -> None:
        if ev.kind in BOARD_EVENTS:
            with self._lock:
                boards = list(self._boards)
            if boards:
                self._hub.mark(*boards)

    def snapshot(self, agent_id: str, filter_name: str | None = None) -> tuple[list[dict[str, Any]], list[dict]]:
        """Board rows and active timers of ``agent_id`` (read-only)."""
        items = self._rt.work.board(agent_id)
        if filter_name and filter_name != "all":
            items = [i for i in items if _matches(i, filter_name)]
        view = self._rt.work.bind(CallContext(agent_id=agent_id))
        timers = view.list_timers("active", 100).get("timers", [])
        return items, timers

    def render(self, board: WorkBoard, restamp: bool = False) -> None:
        """Re-read and redraw one board (and send it to its display while it is live).

        Args:
            board: The board.
            restamp: Send it even when nothing changed, with a new "drawn at" time (the heartbeat that
                dates its "no longer updated since" note).
        """
        items, timers = self.snapshot(board.agent_id, board.filter_name)
        total, items = len(items), items[: board.limit]
        scrub = self._rt.scrubber()
        text = scrub.text(render_board_text(board.agent_id, items, timers, total, board.note))
        drawn = scrub.text(render_board_html(board.agent_id, items, timers, total, board.note))
        if text != board.text or drawn != board.drawn or restamp:
            live = board.beacon is not None and not board.frozen
            stamp = time.strftime("%Y-%m-%d %H:%M:%S") if live else None
            board.text, board.drawn = text, drawn
            board.value = scrub.text(render_board_html(board.agent_id, items, timers, total, board.note, stamp))
            if board.handle is not None and not board.frozen:
                board.handle.update(board)

    def add(self, board: WorkBoard) -> None:
        """Keep ``board`` live (already shown by the hub); the oldest beyond :data:`MAX_LIVE_BOARDS` freezes."""
        board.boards = self
        with self._lock:
            self._boards.append(board)
            frozen = self._boards[:-MAX_LIVE_BOARDS]
            del self._boards[:-MAX_LIVE_BOARDS]
        for old in frozen:
            self._freeze(old, "no longer updated: a newer board was displayed; re-run this cell to refresh")

    def _freeze(self, board: WorkBoard, note: str) -> None:
        """Draw ``board`` a last time with ``note`` and stop updating it; its beacon goes."""
        board.note, board.frozen = note, True
        try:
            self.render(board)
        except Exception:  # the runtime may already be closing: the last drawn state is kept
            log.debug("board freeze failed", exc_info=True)
        self._hub.retire(board, board, confirmed=True)

    def flush(self) -> None:
        """Redraw stale boards now, in the calling thread (before a final save or unload)."""
        with self._lock:
            boards = list(self._boards)
        self._hub.draw_now(boards)

    def confirm(self) -> None:
        """After-cell hook (kernel thread): redraw stale boards, re-send each whose text changed since the last cell.

        The pump thread's updates reach JupyterLab, but a headless client (nbclient) keeps only
        messages of the cell it is executing, so a saved board could keep an older state; sent
        from here, inside a cell's execution, the newest text is what the notebook saves.
        """
        self.flush()
        with self._lock:
            boards = list(self._boards)
        self._hub.confirm(list(boards))

    def freeze_all(self, note: str) -> int:
        """Freeze every live board with ``note`` (each display becomes its static board); return how many.

        A board displayed later is live again.
        """
        with self._lock:
            boards, self._boards = list(self._boards), []
        for board in boards:
            self._freeze(board, note)
        return len(boards)

    def close(self) -> None:
        """Mark every board frozen (drawn a last time with a note); the hub's close stops the events."""
        self.freeze_all("no longer updated: the extension was unloaded or reloaded; re-run this cell")


def _matches(item: dict[str, Any], filter_name: str) -> bool:
    if filter_name in ("open", "completing", "completed"):
        return item["state"] == filter_name
    if filter_name == "current":
        return bool(item.get("is_current"))
    if filter_name == "queued":
        return not item.get("is_current") and item["state"] == "open" and item["readiness"] == "runnable"
    if filter_name == "blocked":
        return not item.get("is_current") and item["readiness"] == "blocked"
    return item["readiness"] == filter_name


def show_board(
    session: _Session, payload: dict[str, Any], agent_id: str | None = None, live: bool = True
) -> WorkBoard | None:
    """Display a board in the current cell (the ``%workitems`` magic).

    Args:
        session: The loaded extension's session (its runtime and board hub).
        payload: ListWorkItems-style options: ``filter``, ``limit`` (1..100, default 20).
        agent_id: The agent (default: the notebook's agent).
        live: Keep it updating; False displays a snapshot that is never updated.

    Returns:
        The live board, or None for a snapshot.
    """
    from ..runtime.core._ids import DEFAULT_AGENT_ID

    boards = session.boards
    limit = max(1, min(100, int(payload.get("limit") or DEFAULT_LIMIT)))
    board = WorkBoard(agent_id or DEFAULT_AGENT_ID, payload.get("filter"), limit)
    if not live:
        boards.render(board)
        display(board)
        return None
    board.beacon = hidden_beacon()  # right after the board: once it is dead, the board says so (liveness.py)
    boards.render(board)
    board.dirty = False  # drawn just now
    session.hub.show(board, board)
    board.confirmed_text = board.text  # shown by this cell itself
    boards.add(board)
    return board
