"""The IPython/Jupyter skin of holon_nb: load/unload, magics, receipts, live views.

``%load_ext holon_nb`` calls :func:`load`: it creates the ``HolonNB`` config
object, starts a :class:`~holon_nb.runtime.Runtime` in the kernel's working
directory (the notebook's directory) on the notebook's own holon home
(:func:`~holon_nb.runtime.core._settings.kernel_home`), registers the magics and starts the
live hub. ``%reload_ext holon_nb`` first calls :func:`unload`, which shuts
all of that down, so exactly one runtime thread exists afterwards.

Example::

    %load_ext holon_nb
    %exec --yield-ms 0 sleep 2; echo done
    %holon wait
"""

from __future__ import annotations

import atexit
import logging
import os
from typing import Any

from ..runtime import Runtime
from ..runtime._current import current, set_current
from ..runtime.core._settings import kernel_home
from ._agent_magics import AgentMagics, TurnHub
from ._board import Boards
from ._config import SETTINGS_INPUTS, HolonNB
from ._image_magics import ImageMagics
from ._live import TaskViews
from ._liveness import LiveHub
from ._magics import HolonMagics
from ._session import _Session, current_session, freeze_live_boards, set_session, wait_and_report
from ._work_magics import WorkMagics
from ._workspace_magics import WorkspaceMagics
from .web import WebMagics

__all__ = [
    "AgentMagics",
    "HolonMagics",
    "HolonNB",
    "WebMagics",
    "WorkMagics",
    "WorkspaceMagics",
    "freeze_live_boards",
    "load",
    "unload",
    "wait_and_report",
]

log = logging.getLogger("holon_nb.notebook")


def load(ip: Any) -> None:
    """Load the extension into ``ip``: config, runtime, magics, live hub.

    A session already loaded (a second ``load`` without ``unload``) is shut
    down first, so a kernel never holds two runtimes.

    Args:
        ip: The IPython shell.

    Raises:
        RuntimeStartupError: when the runtime cannot start.
    """
    if current_session() is not None:
        unload(ip)
    config = HolonNB(parent=ip)
    rt = Runtime(
        home=kernel_home(getattr(ip, "user_ns", None))[0], workspace=os.getcwd(), settings=config.to_settings()
    )
    hub = LiveHub(rt, lambda: config.update_period_s)  # the one live-view mechanism (liveness.py)
    try:
        session = _Session(ip, rt, config, hub, TaskViews(rt, hub))
        session.boards = Boards(rt, hub)
        session.turns = TurnHub(session)
        session.magics = [
            cls(ip, session) for cls in (HolonMagics, WorkspaceMagics, WorkMagics, AgentMagics, ImageMagics, WebMagics)
        ]
        for magics in session.magics:
            ip.register_magics(magics)
        ip.configurables.append(config)
        config.observe(session.push_settings, names=list(SETTINGS_INPUTS))
        hub.start()
        ip.events.register("post_run_cell", session.after_cell)
        from ._kernel._port import KernelNotebook  # the Notebook tools' kernel port (issue 28; off by default)

        rt.notebook = KernelNotebook(ip, lambda: bool(rt.settings.notebook_tools or rt.settings.notebook_tools_agents))
        rt.notebook.install()
    except BaseException:
        hub.close()
        rt.close()
        raise
    set_session(session)
    set_current(rt)
    _freeze_boards_before_shutdown(ip)
    global _atexit_registered
    if not _atexit_registered:
        atexit.register(_close_at_exit)
        _atexit_registered = True


_atexit_registered = False


def _freeze_boards_before_shutdown(ip: Any) -> None:
    """Freeze live ``%workitems`` boards when the kernel is asked to shut down or restart (issue 11, item 4).

    A front end's Restart Kernel sends ``shutdown_request``; ipykernel answers it in ``do_shutdown``
    while IOPub is still open, so a front end that still listens (a headless client, the harness's
    restart) gets each board's last state with a note that it stopped updating. (JupyterLab drops the
    old kernel's display routes before it asks for the restart; there a board, being display output,
    stays as last drawn. At interpreter exit, :func:`_close_at_exit`, IOPub may already be closed.)
    Installed once per kernel.
    """
    kernel = getattr(ip, "kernel", None)
    original = getattr(kernel, "do_shutdown", None)
    if kernel is None or original is None or getattr(kernel, "_holon_nb_freezes_boards", False):
        return

    def do_shutdown(restart: bool) -> Any:
        try:
            freeze_live_boards("no longer updated: the kernel was " + ("restarted" if restart else "shut down"))
        except Exception:  # the kernel must shut down whatever happens here
            log.debug("freezing live boards before shutdown failed", exc_info=True)
        return original(restart)

    kernel.do_shutdown = do_shutdown
    kernel._holon_nb_freezes_boards = True


def _close_at_exit() -> None:
    """At interpreter exit (a kernel's shutdown_request ends there), close the runtime as
    ``%unload_ext`` would: running tasks stop and the SQLite store closes (its WAL checkpointed,
    so no ``-wal``/``-shm`` files stay beside ``holon.sqlite3``)."""
    session = current_session()
    if session is None:
        return
    try:
        unload(session.shell)
    except Exception:  # exiting anyway; a failed close must not hide the kernel's own exit
        log.debug("closing holon_nb at exit failed", exc_info=True)


def unload(ip: Any, note: str = "the runtime was closed (extension unloaded or reloaded)") -> None:
    """Unload the extension: stop the live hub, close the runtime, remove magics and config. Idempotent.

    Args:
        ip: The IPython shell.
        note: Why, as the live views of tasks the closing runtime interrupted say it.
    """
    session = current_session()
    set_session(None)
    if session is None:
        return
    session.config.unobserve(session.push_settings, names=list(SETTINGS_INPUTS))
    try:
        ip.events.unregister("post_run_cell", session.after_cell)
    except ValueError:
        pass
    if session.config in ip.configurables:
        ip.configurables.remove(session.config)
    for magics in session.magics:
        _unregister_magics(ip, magics)
    session.live.close()
    if session.turns is not None:
        session.turns.close()
    if session.boards is not None:
        session.boards.close()
    session.hub.close()
    from ._kernel._port import KernelNotebook

    port = session.rt.notebook
    if isinstance(port, KernelNotebook):
        port.uninstall()
        session.rt.notebook = None
    session.rt.close()
    session.live.detach(note)
    if current() is session.rt:
        set_current(None)


def _unregister_magics(ip: Any, magics: Any) -> None:
    manager = ip.magics_manager
    for kind, table in manager.magics.items():
        for name in list(magics.magics.get(kind, {})):
            if getattr(table.get(name), "__self__", None) is magics:
                del table[name]
    for key, value in list(manager.registry.items()):
        if value is magics:
            del manager.registry[key]
    # IPython's Magics.__init__ appends each instance to the shell's configurables: left there, it would
    # keep the unloaded session, and its closed runtime, alive for the kernel's life
    ip.configurables[:] = [c for c in ip.configurables if c is not magics]
