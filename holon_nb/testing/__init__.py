"""Notebook regression harness: run notebooks headless with holon_nb loaded.

Example::

    from holon_nb.testing import run_notebook
    summary = run_notebook("notebooks/01-commands-and-tasks.ipynb")
    assert summary.exit_code == 0, summary.failed_cells

The names below load on first use: the pytest plugin (:mod:`holon_nb.testing.plugin`) is imported by every
pytest run in an environment where holon_nb is installed, and must not pull in nbclient and the runtime
unless notebooks are collected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ._harness import HarnessUsageError, run_notebook
    from ._summary import CellReport, RunSummary, format_summary

__all__ = ["run_notebook", "RunSummary", "CellReport", "format_summary", "HarnessUsageError"]

_HOMES = {
    "run_notebook": "_harness",
    "HarnessUsageError": "_harness",
    "RunSummary": "_summary",
    "CellReport": "_summary",
    "format_summary": "_summary",
}


def __getattr__(name: str) -> Any:
    module = _HOMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
