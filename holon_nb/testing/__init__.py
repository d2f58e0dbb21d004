"""Notebook regression harness: run notebooks headless with holon_nb loaded.

Example::

    from holon_nb.testing import run_notebook
    summary = run_notebook("notebooks/01-commands-and-tasks.ipynb")
    assert summary.exit_code == 0, summary.failed_cells
"""

from .harness import HarnessUsageError, run_notebook
from .summary import CellReport, RunSummary, format_summary

__all__ = ["run_notebook", "RunSummary", "CellReport", "format_summary", "HarnessUsageError"]
