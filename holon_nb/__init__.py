"""holon_nb: Holon's agent tool surface inside a Jupyter kernel.

``%load_ext holon_nb`` starts a runtime in the kernel; every tool can then be
called from a magic, from Python (``holon_nb.get_runtime().call(...)``) or by
a model, and its receipt renders inline. ``Runtime``, ``RuntimeSettings`` and
``ToolResult`` load on first use, so ``import holon_nb`` stays small.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .runtime.current import get_runtime, set_current

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
        RuntimeError: if the extension is not loaded.
    """
    from .notebook.session import current_session

    _session = current_session()
    if _session is None:
        raise RuntimeError("holon_nb is not loaded: run %load_ext holon_nb first")
    return _session.turns.results()


def clear_home() -> Any:
    """Empty this notebook's own holon home (``.holon/notebooks/<notebook stem>/``) before
    ``%load_ext holon_nb``, so a notebook run top to bottom starts from nothing; unloads holon_nb first
    when it is loaded. A home named by ``$HOLON_NB_HOME``, or the shared ``.holon/`` of a kernel that
    does not know its notebook, is left alone.

    Returns:
        The emptied home (a ``Path``), or None when nothing was cleared.
    """
    from .notebook.home import clear_home as _clear

    return _clear()


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
