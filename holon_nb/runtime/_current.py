"""The kernel's runtime: the one ``%load_ext holon_nb`` started, for ``holon_nb.get_runtime()``.

The notebook layer sets it when the extension loads and clears it when it unloads; this module
imports nothing, so the notebook layer reaches it without importing the top-level package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._facade import Runtime

__all__ = ["get_runtime", "set_current", "current"]

_current: Runtime | None = None


def get_runtime() -> Runtime:
    """Return the kernel's runtime started by ``%load_ext holon_nb``.

    Raises:
        NotLoaded: if the extension is not loaded (also a ``RuntimeError``).
    """
    if _current is None or _current.closed:
        from ..tools._errors import NotLoaded  # on the error path only: this module imports nothing

        raise NotLoaded("holon_nb is not loaded: run %load_ext holon_nb first")
    return _current


def current() -> Runtime | None:
    """The runtime last set (maybe closed), or None."""
    return _current


def set_current(rt: Runtime | None) -> None:
    """Make ``rt`` the kernel's runtime (None: no runtime loaded)."""
    global _current
    _current = rt
