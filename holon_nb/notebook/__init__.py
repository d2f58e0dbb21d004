"""The IPython/Jupyter skin of holon_nb: load/unload, magics, receipts, live views.

``%load_ext holon_nb`` calls :func:`load`: it creates the ``HolonNB`` config
object, starts a :class:`~holon_nb.runtime.Runtime` in the kernel's working
directory (the notebook's directory), registers the magics and starts the
live hub. ``%reload_ext holon_nb`` first calls :func:`unload`, which shuts
all of that down, so exactly one runtime thread exists afterwards.

Example::

    %load_ext holon_nb
    %exec --yield-ms 0 sleep 2; echo done
    %holon wait
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

from ..runtime import Runtime
from .agent_magics import AgentMagics, TurnHub
from .board import BoardHub
from .config import SETTINGS_INPUTS, HolonNB
from .live import LiveHub
from .magics import HolonMagics
from .work_magics import WorkMagics
from .workspace_magics import WorkspaceMagics

__all__ = ["AgentMagics", "HolonMagics", "HolonNB", "WorkMagics", "WorkspaceMagics", "load", "unload", "wait_and_report"]

log = logging.getLogger("holon_nb.notebook")


@dataclass
class _Session:
    """Everything one ``%load_ext holon_nb`` created (unload undoes it)."""

    shell: Any
    rt: Runtime
    config: HolonNB
    live: LiveHub
    boards: Any = None
    turns: Any = None
    magics: list[Any] = field(default_factory=list)

    def push_settings(self, change: Any = None) -> None:
        """Apply the config traits to the runtime; takes effect on the next call."""
        self.rt.settings = self.config.to_settings(self.rt.settings)

    def initial_output(self, task_id: str) -> str | None:
        """Output a task printed before its promotion (read-only store lookup), or None."""
        rec = self.rt.store.task(task_id)
        return None if rec is None else (rec.get("detail") or {}).get("initial_output")


_session: _Session | None = None


def load(ip: Any) -> None:
    """Load the extension into ``ip``: config, runtime, magics, live hub.

    A session already loaded (a second ``load`` without ``unload``) is shut
    down first, so a kernel never holds two runtimes.

    Args:
        ip: The IPython shell.

    Raises:
        RuntimeStartupError: when the runtime cannot start.
    """
    global _session
    if _session is not None:
        unload(ip)
    config = HolonNB(parent=ip)
    rt = Runtime(workspace=os.getcwd(), settings=config.to_settings())
    try:
        session = _Session(ip, rt, config, LiveHub(rt, lambda: config.update_period_s))
        session.boards = BoardHub(rt)
        session.turns = TurnHub(session)
        session.magics = [cls(ip, session) for cls in (HolonMagics, WorkspaceMagics, WorkMagics, AgentMagics)]
        for magics in session.magics:
            ip.register_magics(magics)
        ip.configurables.append(config)
        config.observe(session.push_settings, names=list(SETTINGS_INPUTS))
        session.live.start()
    except BaseException:
        rt.close()
        raise
    _session = session
    import holon_nb

    holon_nb._set_runtime(rt)


def unload(ip: Any) -> None:
    """Unload the extension: stop the live hub, close the runtime, remove magics and config. Idempotent."""
    global _session
    session, _session = _session, None
    if session is None:
        return
    session.config.unobserve(session.push_settings, names=list(SETTINGS_INPUTS))
    if session.config in ip.configurables:
        ip.configurables.remove(session.config)
    for magics in session.magics:
        _unregister_magics(ip, magics)
    session.live.close()
    if session.turns is not None:
        session.turns.close()
    if session.boards is not None:
        session.boards.close()
    session.rt.close()
    session.live.detach("the runtime was closed (extension unloaded or reloaded)")
    import holon_nb

    if getattr(holon_nb, "_current", None) is session.rt:
        holon_nb._set_runtime(None)


def _unregister_magics(ip: Any, magics: Any) -> None:
    manager = ip.magics_manager
    for kind, table in manager.magics.items():
        for name in list(magics.magics.get(kind, {})):
            if getattr(table.get(name), "__self__", None) is magics:
                del table[name]
    for key, value in list(manager.registry.items()):
        if value is magics:
            del manager.registry[key]


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
        RuntimeError: if the extension is not loaded.
    """
    if _session is None:
        raise RuntimeError("holon_nb is not loaded: run %load_ext holon_nb first")
    still = _session.live.wait(timeout)
    if _session.turns is not None:
        still = still + [f"turn of {a}" for a in _session.turns.wait(timeout)]
    _session.live.report()
    if _session.turns is not None:
        _session.turns.report()
    if _session.boards is not None:
        _session.boards.flush()
    return still
