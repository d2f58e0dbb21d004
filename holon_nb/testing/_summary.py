"""What a headless run reports: :class:`RunSummary`, receipt counts, the summary text."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nbformat import NotebookNode

from ..render import RESULT_MIMETYPE

__all__ = ["CellReport", "RunSummary", "count_receipts", "format_summary"]


@dataclass
class CellReport:
    """One code cell of a run.

    Attributes:
        index: Cell index in the executed notebook (parameters cell included).
        first_line: First non-empty line of the source (≤ 60 characters).
        duration_s: Execution wall time in seconds (0 when skipped).
        status: ``ok``, ``error`` (raised unexpectedly), ``expected-error``
            (raised in a ``raises-exception`` cell), ``timeout`` (hit the
            per-cell timeout, counts as an error) or ``skipped`` (``holon-skip``
            or not reached).
        ename: Exception class name when the cell raised, else None.
        evalue: The exception's message when the cell raised (as the kernel sent it), else None.
    """

    index: int
    first_line: str
    duration_s: float = 0.0
    status: str = "skipped"
    ename: str | None = None
    evalue: str | None = None


@dataclass
class RunSummary:
    """The outcome of :func:`~holon_nb.testing._harness.run_notebook`.

    Attributes:
        notebook: The input notebook.
        output: Where the executed notebook was saved (None if nothing was saved).
        cells: One report per code cell, in order.
        receipts_by_status: ``{status: count}`` over outputs of mimetype
            ``application/vnd.holon.tool-result+json`` (cells and trailing output).
        error_kinds: ``{error.kind: count}`` over those receipts with status ``error``.
        tasks_left_running: Task ids still running after the final wait (then
            stopped); after a kernel death, the orphaned tasks whose process
            groups the harness killed.
        wall_time_s: Whole run, kernel start to save, in seconds.
        holon_home: The kernel's ``HOLON_NB_HOME``.
        holon_home_removed: True when that home was a temporary one, deleted after the run.
        kernel_died: True when the kernel died (exit status 3).
        timed_out: True when the run hit its overall limit (10 × the cell timeout).
        restarts: Kernel restarts asked for by cells tagged ``holon-restart-kernel``.
        problems: Harness-level failures (extension did not load, final wait
            failed, kernel start failed), each one line.
        stopped_after: Index of the failed cell after which the run stopped (later cells not run), or
            None (no failure, or ``keep_going``).
        preloaded: True when holon_nb was loaded before the first cell: the notebook may use it
            (:func:`~holon_nb.testing._kernel_code.needs_holon`); False for a notebook that never names it.
        ran_on: Where the kernel ran, one line: ``local kernel (pid N)``, or ``gateway URL kernel ID on HOST
            (pid N)`` for a kernel on a Jupyter gateway (:mod:`holon_nb.testing._suites._gateway`).
    """

    notebook: Path
    output: Path | None
    cells: list[CellReport] = field(default_factory=list)
    receipts_by_status: dict[str, int] = field(default_factory=dict)
    error_kinds: dict[str, int] = field(default_factory=dict)
    tasks_left_running: list[str] = field(default_factory=list)
    wall_time_s: float = 0.0
    holon_home: str = ""
    holon_home_removed: bool = False
    kernel_died: bool = False
    timed_out: bool = False
    restarts: int = 0
    problems: list[str] = field(default_factory=list)
    stopped_after: int | None = None
    preloaded: bool = True
    ran_on: str = ""

    @property
    def cells_run(self) -> int:
        """Code cells that were executed."""
        return sum(1 for c in self.cells if c.status != "skipped")

    @property
    def failed_cells(self) -> list[int]:
        """Indexes of cells that raised outside a ``raises-exception`` cell (or timed out)."""
        return [c.index for c in self.cells if c.status in ("error", "timeout")]

    @property
    def cells_failed(self) -> int:
        """Number of :attr:`failed_cells`."""
        return len(self.failed_cells)

    @property
    def exit_code(self) -> int:
        """3 when the kernel died; 1 on a failed cell, an overall timeout or a problem; else 0."""
        if self.kernel_died:
            return 3
        if self.failed_cells or self.timed_out or self.problems:
            return 1
        return 0


def _receipts(outputs: Iterable[Any]) -> Iterable[dict[str, Any]]:
    for out in outputs:
        data = out.get("data") if out.get("output_type") in ("display_data", "execute_result") else None
        env = data.get(RESULT_MIMETYPE) if data else None
        if isinstance(env, dict):
            yield env


def count_receipts(nb: NotebookNode) -> tuple[dict[str, int], dict[str, int]]:
    """Count receipt outputs of an executed notebook.

    Returns:
        ``(by status, error receipts by error.kind)``, each sorted by key.
    """
    statuses: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for cell in nb.cells:
        for env in _receipts(cell.get("outputs", [])):
            statuses[str(env.get("status"))] += 1
            if env.get("status") == "error":
                kinds[str((env.get("error") or {}).get("kind"))] += 1
    return dict(sorted(statuses.items())), dict(sorted(kinds.items()))


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"


def format_summary(summary: RunSummary) -> str:
    """Render the end-of-run summary printed by ``holon-nb run`` (several lines, no trailing newline)."""
    verdict = {0: "passed", 1: "FAILED", 3: "KERNEL DIED"}.get(summary.exit_code, "FAILED")
    lines = [f"holon-nb run: {summary.notebook} {verdict}"]
    if summary.output is not None:
        lines.append(f"  executed copy:   {summary.output}")
    failed = ", ".join(f"#{c.index} ({c.ename or c.status})" for c in summary.cells if c.index in summary.failed_cells)
    lines.append(f"  cells run:       {summary.cells_run}")
    lines.append(f"  cells failed:    {summary.cells_failed}" + (f"  [{failed}]" if failed else ""))
    lines.append(f"  receipts:        {_counts(summary.receipts_by_status)}")
    lines.append(f"  error kinds:     {_counts(summary.error_kinds)}")
    left = summary.tasks_left_running
    lines.append(f"  tasks left running (stopped): {len(left)}" + (f"  [{', '.join(left)}]" if left else ""))
    if summary.restarts:
        lines.append(f"  kernel restarts: {summary.restarts} (cells tagged holon-restart-kernel)")
    lines.append(f"  wall time:       {summary.wall_time_s:.2f} s")
    if summary.holon_home_removed:
        lines.append(
            "  holon home:      a temporary one, removed after the run (task logs and artifacts "
            "named in receipts with it); set HOLON_NB_HOME to keep them"
        )
    elif summary.holon_home:
        lines.append(f"  holon home:      {summary.holon_home}")
    if summary.timed_out:
        lines.append(
            "  overall time limit (10 x --timeout) reached: the cell running then was interrupted "
            "and later cells were skipped"
        )
    if summary.stopped_after is not None:
        lines.append(
            f"  stopped after cell #{summary.stopped_after} failed: later cells were not run "
            "(--keep-going runs them all)"
        )
    for c in summary.cells:
        if c.index in summary.failed_cells:
            lines.append(f"  cell #{c.index} failed: {c.first_line}")
            message = (c.evalue or "").strip().splitlines()[:3]
            lines.append(f"    {c.ename or c.status}" + (f": {message[0]}" if message else ""))
            lines.extend(f"    {m}" for m in message[1:])
    lines.extend(f"  problem: {p}" for p in summary.problems)
    return "\n".join(lines)
