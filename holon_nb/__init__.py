"""holon_nb: Holon's agent tool surface inside a Jupyter kernel.

``%load_ext holon_nb`` starts a runtime in the kernel; every tool can then be
called from a magic, from Python (``holon_nb.get_runtime().call(...)``) or by
a model, and its receipt renders inline. ``Runtime``, ``RuntimeSettings`` and
``ToolResult`` load on first use, so ``import holon_nb`` stays small.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .runtime._current import get_runtime, set_current

if TYPE_CHECKING:  # pragma: no cover
    from .runtime import Runtime, RuntimeSettings, ToolResult

__version__ = "0.1.0"
__all__ = [
    "Runtime",
    "RuntimeSettings",
    "ToolResult",
    "agent_turns",
    "clear_home",
    "get_runtime",
    "load_ipython_extension",
    "unload_ipython_extension",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name in ("Runtime", "RuntimeSettings", "ToolResult"):
        from . import runtime

        value = getattr(runtime, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def agent_turns() -> list[Any]:
    """The ``TurnResult`` of every ``%%agent`` turn that ended in this kernel session, oldest first.

    Each has ``final_text``, ``terminal``, ``rounds`` (each round's ``tool_calls`` with ``name``,
    ``input`` and ``envelope``) and ``usage``. Turns still running are not included.

    Raises:
        NotLoaded: if the extension is not loaded (also a ``RuntimeError``).
    """
    from .notebook._session import current_session

    _session = current_session()
    if _session is None:
        from .tools._errors import NotLoaded

        raise NotLoaded("holon_nb is not loaded: run %load_ext holon_nb first")
    return _session.turns.results()


def clear_home(ip: Any = None) -> Any:
    """Empty this notebook's own holon home, so what follows starts from nothing (issue 26 item 2).

    Call it before ``%load_ext holon_nb``: a notebook that starts with it can be run top to bottom any
    number of times and shows only that run's state. When holon_nb is loaded in this kernel it is
    unloaded first (its tasks stop); the next ``%load_ext holon_nb`` opens the emptied home. Only a
    per-notebook home, ``.holon/notebooks/<notebook stem>/``
    (:func:`~holon_nb.runtime.core._settings.kernel_home`), is cleared: with ``$HOLON_NB_HOME`` set, or
    in a kernel that does not know its notebook (the shared ``.holon/``), nothing happens.

    Args:
        ip: The IPython shell; None: the running one, if any.

    Returns:
        The emptied home (a ``Path``), or None when nothing was cleared.

    Example::

        import holon_nb
        holon_nb.clear_home()
        %load_ext holon_nb
    """
    import shutil

    from .runtime.core._settings import kernel_home

    if ip is None:
        from IPython import get_ipython

        ip = get_ipython()
    home, source = kernel_home(getattr(ip, "user_ns", None))
    if source != "notebook":
        return None
    manager = getattr(ip, "extension_manager", None)
    if manager is not None and "holon_nb" in getattr(manager, "loaded", ()):
        manager.unload_extension("holon_nb")  # IPython forgets it too: the next %load_ext loads afresh
    elif ip is not None:
        from .notebook import unload

        unload(ip)  # loaded without the extension manager (idempotent when not loaded)
    shutil.rmtree(home, ignore_errors=True)
    return home


def _set_runtime(rt: Runtime | None) -> None:
    set_current(rt)


def load_ipython_extension(ipython: Any) -> None:
    """IPython entry point of ``%load_ext holon_nb``."""
    from .notebook import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """IPython entry point of ``%unload_ext holon_nb`` (and the first half of ``%reload_ext``)."""
    from .notebook import unload

    unload(ipython)
