"""What a headless run reports: :class:`RunSummary`, receipt counts, the summary text; and what a cell's execute
reply means for its report and its saved outputs (:func:`late_error`, :func:`keep_pages`, :func:`say_timeout`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from ..render import RESULT_MIMETYPE
from ..render._ansi import strip_ansi

__all__ = [
    "CellReport",
    "RunSummary",
    "TIMEOUT_ENAME",
    "count_receipts",
    "first_line",
    "format_summary",
    "keep_pages",
    "late_error",
    "progress_line",
    "say_timeout",
]

#: The ename of a cell that ran past its timeout (the harness's nbclient ``error_on_timeout``).
TIMEOUT_ENAME = "CellTimeoutError"


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


def late_error(cell: NotebookNode, content: dict[str, Any]) -> dict[str, Any]:
    """The reply of a cell whose body ran but which still shows an ``error`` output (issue 24, B1).

    IPython reports an exception raised outside the cell body's own frames (a ``_repr_*_`` method of
    a displayed object, ``showtraceback()`` in an ``except``) as an ``error`` output while the execute
    reply says ``ok`` (or ``error`` with ename ``NoneType``, for an execute result's repr); such a cell
    failed all the same. Returns ``content``, or an error reply naming the first error output.
    """
    if content.get("status") == "error" and content.get("ename") not in (None, "NoneType"):
        return content
    for out in cell.outputs:
        if out.get("output_type") == "error":
            return {**content, "status": "error", "ename": out.get("ename"), "evalue": out.get("evalue")}
    return content


def keep_pages(cell: NotebookNode, content: dict[str, Any]) -> None:
    """Save what the kernel sent to the pager (``%exec?``, ``obj??``) as a display output of the cell.

    Jupyter front ends show a ``page`` payload of the execute reply; nbclient drops it, so a
    headless run kept nothing of ``%exec?``.
    """
    for payload in content.get("payload") or []:
        data = payload.get("data") if isinstance(payload, dict) and payload.get("source") == "page" else None
        if isinstance(data, dict) and data.get("text/plain"):
            text = strip_ansi(data["text/plain"])  # IPython colours its help for a terminal
            cell.outputs.append(nbformat.v4.new_output("display_data", data={"text/plain": text}))


def say_timeout(cell: NotebookNode, limit: float, notebooks_own: bool = False) -> None:
    """Make the saved cell say it timed out: the ``KeyboardInterrupt`` the interrupt raised becomes a
    ``CellTimeoutError`` naming the timeout and where it was set (``notebooks_own``: the notebook's
    ``metadata.execution.timeout``), so a reader of the saved notebook sees why it stopped."""
    where = "the notebook's metadata.execution.timeout" if notebooks_own else "holon-nb run --timeout"
    text = f"the cell ran past its timeout of {limit:g} s and was interrupted ({where})"
    error = nbformat.v4.new_output("error", ename=TIMEOUT_ENAME, evalue=text, traceback=[f"{TIMEOUT_ENAME}: {text}"])
    for i, out in enumerate(cell.outputs):
        if out.get("output_type") == "error" and out.get("ename") == "KeyboardInterrupt":
            cell.outputs[i] = error
            return
    cell.outputs.append(error)


def first_line(source: str) -> str:
    """The first non-empty line of ``source``, at most 60 characters (:attr:`CellReport.first_line`)."""
    line = next((ln.strip() for ln in source.splitlines() if ln.strip()), "")
    return line if len(line) <= 60 else line[:59] + "…"


def progress_line(report: CellReport, total: int, done: bool) -> str:
    """The progress line of a cell on a terminal: rewritten in place while it runs, kept when done."""
    status = f"{report.status:<14} {report.duration_s:7.2f}s" if done else f"{'running':<14} {'':>8}"
    return f"\r\x1b[K[{report.index + 1:>3}/{total}] {status}  {report.first_line}" + ("\n" if done else "")
