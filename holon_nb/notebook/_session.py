"""One loaded extension: what ``%load_ext holon_nb`` created (:class:`_Session`), and waiting on it.

The magics reach the session through :func:`current_session`; :mod:`holon_nb.notebook` sets it on
load and clears it on unload.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from ..runtime import Runtime
from ._config import HolonNB
from ._live import TaskViews
from ._liveness import LiveHub

__all__ = ["current_session", "freeze_live_boards", "set_session", "wait_and_report"]

log = logging.getLogger("holon_nb.notebook")


@dataclass
class _Session:
    """Everything one ``%load_ext holon_nb`` created (unload undoes it)."""

    shell: Any
    rt: Runtime
    config: HolonNB
    hub: LiveHub  # the one live-view mechanism: draws task views, boards and turn views
    live: TaskViews
    boards: Any = None
    turns: Any = None
    magics: list[Any] = field(default_factory=list)

    def push_settings(self, change: Any = None) -> None:
        """Apply the config traits to the runtime; takes effect on the next call."""
        self.rt.settings = self.config.to_settings(self.rt.settings)

    def after_cell(self, result: Any = None) -> None:
        """``post_run_cell`` hook: fill final-receipt slots of tasks that ended and redraw live work boards,
        from this cell's execution.

        A slot updated only from the pump thread is lost by a headless client
        (see ``TaskViews.report``); refreshing it here, still inside the
        cell's request, makes every saved notebook hold the final receipt.
        """
        try:
            self.live.report(unslotted=False)
            if self.boards is not None:
                self.boards.confirm()
        except Exception:  # a hook must never break the user's cell
            log.exception("refreshing final receipts failed")

    def initial_output(self, task_id: str) -> str | None:
        """Output a task printed before its promotion (read-only store lookup), or None."""
        rec = self.rt.store.task(task_id)
        return None if rec is None else (rec.get("detail") or {}).get("initial_output")


_session: _Session | None = None


def current_session() -> _Session | None:
    """The loaded extension's session, or None when it is not loaded."""
    return _session


def set_session(session: _Session | None) -> None:
    """Record ``session`` as the loaded one (None: unloaded)."""
    global _session
    _session = session


def wait_and_report(timeout: float | None = None) -> list[str]:
    """Block until every task started in this kernel has ended, then show final receipts.

    Call from the kernel thread inside a cell (``%holon wait`` does). Each
    ended task's final receipt (TaskOutput, ``block=false``) reaches the
    notebook once: a task started by a magic has its receipt slot in its own
    cell refreshed from this cell's execution (nothing is added here); a
    task started another way (``Runtime.call`` from Python) has its receipt
    displayed in the current cell, unless an earlier wait already did.

    Args:
        timeout: Longest wait in seconds; None waits without limit.

    Returns:
        Ids of tasks still running afterwards.

    Raises:
        NotLoaded: if the extension is not loaded (also a ``RuntimeError``).
    """
    _session = current_session()
    if _session is None:
        from ..tools._errors import NotLoaded

        raise NotLoaded("holon_nb is not loaded: run %load_ext holon_nb first")
    still = _session.live.wait(timeout)
    if _session.turns is not None:
        still = still + [f"turn of {a}" for a in _session.turns.wait(timeout)]
    _session.live.report()
    if _session.turns is not None:
        _session.turns.report()
    if _session.boards is not None:
        _session.boards.flush()
    return still


def freeze_live_boards(note: str = "no longer updated: the run that displayed it ended") -> int:
    """Draw every live ``%workitems`` board a last time with ``note`` and stop updating it (kernel thread).

    A headless run calls this after its last cell, so each board in the saved notebook says that it
    stopped updating, rather than looking live.

    Args:
        note: The last line of each frozen board.

    Returns:
        How many boards were frozen (0 when the extension is not loaded).
    """
    session = current_session()
    if session is None or session.boards is None:
        return 0
    return session.boards.freeze_all(note)
