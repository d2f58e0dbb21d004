"""Which holon home a kernel uses: one per notebook by default (issue 26 item 2).

``%load_ext holon_nb`` opens the runtime on :func:`kernel_home`:

1. ``$HOLON_NB_HOME`` when it is set (an explicit home, shared by whatever sets it: ``holon-nb run`` gives
   each run a temporary one);
2. else ``.holon/notebooks/<notebook stem>/`` in the kernel's working directory (the notebook's folder)
   when the kernel knows its notebook: Jupyter Server and JupyterLab set ``JPY_SESSION_NAME`` (ipykernel
   also puts it in ``__session__``), VS Code sets ``__vsc_ipynb_file__``. Two notebooks of one folder
   then never see each other's tasks, work items, messages or token counts;
3. else ``.holon/`` in the working directory (a console, a kernel started by hand).

:func:`clear_home` empties the notebook's own home (case 2 only), so a notebook that starts with it is
re-runnable top to bottom and shows only that run's state; an explicit or shared home is never cleared.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from ..runtime.core.settings import resolve_home

__all__ = ["clear_home", "kernel_home", "notebook_name"]

#: Folder of the per-notebook homes inside ``.holon/`` (so a notebook called ``agents`` or ``spool`` cannot
#: land inside the shared home's own folders).
NOTEBOOKS_DIR = "notebooks"


def notebook_name(ip: Any = None) -> str | None:
    """The path (or name) of the notebook this kernel runs, when its front end said so; else None."""
    ns = getattr(ip, "user_ns", None) or {}
    for value in (os.environ.get("JPY_SESSION_NAME"), ns.get("__session__"), ns.get("__vsc_ipynb_file__")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _stem(name: str) -> str | None:
    stem = Path(name.replace("\\", "/")).stem.strip()
    return stem if stem and stem not in (".", "..") and not stem.startswith(".") else None


def kernel_home(ip: Any = None, cwd: str | os.PathLike[str] | None = None) -> tuple[Path, str]:
    """The holon home ``%load_ext holon_nb`` opens in this kernel, and why (see the module docstring).

    Args:
        ip: The IPython shell (its namespace may name the notebook); None: only the environment is read.
        cwd: The kernel's working directory; None: the current one.

    Returns:
        ``(absolute home path, source)`` with source ``"env"``, ``"notebook"`` or ``"folder"``.
    """
    if os.environ.get("HOLON_NB_HOME"):
        return resolve_home(), "env"
    base = Path(cwd if cwd is not None else os.getcwd()).resolve() / ".holon"
    name = notebook_name(ip)
    stem = _stem(name) if name else None
    if stem is not None:
        return base / NOTEBOOKS_DIR / stem, "notebook"
    return base, "folder"


def clear_home(ip: Any = None) -> Path | None:
    """Empty this notebook's own holon home, so what follows starts from nothing.

    When holon_nb is loaded in this kernel it is unloaded first (its tasks stop); the next
    ``%load_ext holon_nb`` then opens the emptied home. Only a per-notebook home
    (``.holon/notebooks/<stem>/``) is cleared: with ``$HOLON_NB_HOME`` set, or when the kernel does not
    know its notebook (the shared ``.holon/``), nothing happens.

    Args:
        ip: The IPython shell; None: the running one (``get_ipython()``), if any.

    Returns:
        The home that was emptied, or None when it was left alone.

    Example::

        import holon_nb
        holon_nb.clear_home()  # this notebook's .holon/notebooks/<stem>/ starts empty
        %load_ext holon_nb
    """
    if ip is None:
        from IPython import get_ipython

        ip = get_ipython()
    home, source = kernel_home(ip)
    if source != "notebook":
        return None
    manager = getattr(ip, "extension_manager", None)
    if manager is not None and "holon_nb" in getattr(manager, "loaded", ()):
        manager.unload_extension("holon_nb")  # IPython forgets it too: the next %load_ext loads afresh
    else:
        from .session import current_session

        if current_session() is not None:
            from . import unload

            unload(ip)
    shutil.rmtree(home, ignore_errors=True)
    return home
