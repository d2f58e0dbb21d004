"""One notebook as a regression test: run it, compare with its saved outputs, update, repeat.

This is what the pytest plugin (:mod:`holon_nb.testing.plugin`) does for each
notebook, without pytest: :func:`check_notebook` runs the notebook with
:func:`~holon_nb.testing._harness.run_notebook` (model calls replayed from its
cassettes by default, notebook-tests spec §5), compares every compared cell with the saved
outputs (:mod:`holon_nb.testing._compare`), and returns a :class:`NotebookCheck`
whose :meth:`~NotebookCheck.report` names the notebook, each failing cell's
index and first line, and what differs. Each run works in a private copy of the
notebook's folder unless the notebook sets ``metadata.holon_nb.shared_dir: true``
(:mod:`holon_nb.testing._workdir`).

Example::

    check = check_notebook("notebooks/01-quickstart.ipynb", CheckOptions(repeat=3))
    if check.failed:
        print(check.report())
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import os
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient.util import run_sync
from nbformat import NotebookNode

from ._compare import CellDiff, CompareOptions, compare_notebooks, compared_cells, receipt_text_differs
from ._harness import PreparedRun, read_notebook
from ._kernel_code import agent_inserted
from ._saved import mask_saved_paths
from ._summary import RunSummary
from ._workdir import folder_lock, private_copy, shared_dir
from .normalize import Normalizer, Roots, UserRule, parse_rules

__all__ = [
    "CellProblem",
    "CheckOptions",
    "NotebookCheck",
    "check_notebook",
    "compare_options",
    "never_executed_note",
    "notebook_masks",
    "notebook_rules",
]


@dataclass
class CheckOptions:
    """How :func:`check_notebook` runs a notebook.

    Attributes:
        timeout: Per-cell timeout in seconds (the run stops at 10x).
        cassettes: ``replay`` (default in tests), ``record``, ``auto`` or ``off`` (notebook-tests spec §5).
        update: Rewrite the saved notebook's mismatching cells with the fresh outputs (never cells
            that raised unexpectedly).
        repeat: Run the notebook this many times; any difference between runs fails (notebook-tests spec §6).
        rules: User normalisers from the pytest configuration, applied after the notebook's own.
        kernel_name: Kernelspec name; None runs a kernel on this interpreter.
        compare: What the comparison looks at (:class:`~holon_nb.testing._compare.CompareOptions`); a
            notebook's ``metadata.holon_nb`` keys of the same names override it (see :func:`compare_options`).
        masks: Mask presets applied to user output too (``timestamps``, ``durations``, ``addresses``,
            ``uuids``, ``tmp``; :data:`~holon_nb.testing.normalize.MASK_PRESETS`), with the notebook's
            ``metadata.holon_nb.masks``; receipts always get every mask.
        compare_ansi: Compare ANSI escape sequences in user output instead of removing them.
        strict_unrun: Compare also the cells saved without running (no outputs, no execution count),
            which are skipped by default as nbval does (:func:`unrun_cells`).
        gateway: ``(URL, token or None)``: run the kernel on that Jupyter Kernel or Enterprise Gateway
            (``--holon-nb-gateway``; :mod:`holon_nb.testing._suites._gateway`); None runs it here.
    """

    timeout: float = 120.0
    cassettes: str | None = "replay"
    update: bool = False
    repeat: int = 1
    rules: Sequence[UserRule] = ()
    kernel_name: str | None = None
    compare: CompareOptions = field(default_factory=CompareOptions)
    masks: Sequence[str] = ()
    compare_ansi: bool = False
    strict_unrun: bool = False
    gateway: tuple[str, str | None] | None = None


def compare_options(nb: NotebookNode, base: CompareOptions) -> CompareOptions:
    """``base`` with a notebook's own settings: ``metadata.holon_nb.mimetypes`` (a list: compare exactly
    these mimetypes) replaces the configured list, ``metadata.holon_nb.ignore_mimetypes`` adds to it.

    Raises:
        ValueError: when either is not a list of strings.
    """
    meta = nb.metadata.get("holon_nb") or {}
    changes: dict[str, object] = {}
    for key in ("mimetypes", "ignore_mimetypes"):
        value = meta.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"metadata.holon_nb.{key} must be a list of mimetypes, got {value!r}")
        changes[key] = tuple(value) if key == "mimetypes" else base.ignore_mimetypes + tuple(value)
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


@dataclass
class CellProblem:
    """Why one cell fails: ``kind`` is ``error`` (raised unexpectedly or timed out), ``mismatch``
    (differs from the saved output) or ``nondeterministic`` (two runs differ)."""

    index: int
    first_line: str
    kind: str
    message: str


@dataclass
class NotebookCheck:
    """The outcome of :func:`check_notebook`.

    Attributes:
        path: The notebook.
        summary: The first run's :class:`~holon_nb.testing._summary.RunSummary`.
        cells: Problems by cell, in cell order.
        problems: Notebook-level problems (kernel died, tasks left running, extension did not load).
        updated_cells: Cells rewritten by ``update`` (indices).
        not_run: Code cells not run because an earlier cell failed.
        unrun: Code cells saved without running (no outputs, no execution count): not compared
            unless ``strict_unrun``.
        not_compared: Outputs left uncompared, a line each (``cell 12 (plt.plot(…)): output 1: image/png saved
            by matplotlib version 2.2.2, …; this run by Matplotlib version3.11.2, …``): an image the saved
            notebook and this run drew with different software (``ImageTolerance.strict`` compares them).
        runs: How many runs were made.
        compare_s: Seconds spent comparing (all runs).
        executed: The first run's executed notebook (what ``holon-nb run`` would have saved).
        never_executed: No code cell had run when the notebook was saved (and ``update`` was off):
            nothing was compared (:func:`never_executed_note` says so; with ``strict_unrun`` it fails).
    """

    path: Path
    summary: RunSummary
    cells: list[CellProblem] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    updated_cells: list[int] = field(default_factory=list)
    not_run: list[int] = field(default_factory=list)
    unrun: list[int] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)
    runs: int = 1
    compare_s: float = 0.0
    executed: NotebookNode | None = None
    never_executed: bool = False

    @property
    def failed(self) -> bool:
        """True when any cell or notebook-level problem was found."""
        return bool(self.cells or self.problems)

    def for_cell(self, index: int) -> list[CellProblem]:
        """The problems of cell ``index``."""
        return [p for p in self.cells if p.index == index]

    def report(self, cells: Sequence[CellProblem] | None = None, notebook_level: bool = True) -> str:
        """Readable failure text: the notebook (and its notebook-level problems unless
        ``notebook_level`` is False), then per cell ``cell N (first line): kind`` and the details."""
        lines = [f"notebook {self.path}"]
        lines += [f"  {p}" for p in self.problems] if notebook_level else []
        for p in self.cells if cells is None else cells:
            lines.append(f"cell {p.index} ({p.first_line}): {p.kind}")
            lines += [f"    {line}" for line in p.message.splitlines()]
        return "\n".join(lines)


def notebook_rules(nb: NotebookNode) -> list[UserRule]:
    """User normalisers of ``metadata.holon_nb.normalize`` (notebook-tests spec §3.5).

    Raises:
        ValueError: for a malformed entry (see :func:`~holon_nb.testing.normalize.parse_rules`).
    """
    return parse_rules((nb.metadata.get("holon_nb") or {}).get("normalize"))


def notebook_masks(nb: NotebookNode) -> list[str]:
    """Mask presets of ``metadata.holon_nb.masks`` (a list, or one comma-separated string).

    Raises:
        ValueError: when it is neither.
    """
    value = (nb.metadata.get("holon_nb") or {}).get("masks") or []
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"metadata.holon_nb.masks must be a list of mask names, got {value!r}")
    return value


def unrun_cells(nb: NotebookNode) -> list[int]:
    """Code cells saved without ever running: no outputs and no execution count (issue 24, A1).

    Their saved outputs say nothing about what they print, so they are not compared by default.
    """
    return [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and not c.get("outputs") and c.get("execution_count") is None
    ]


def never_executed_note(path: Path | str) -> str:
    """The one line said of a notebook none of whose code cells ran when it was saved."""
    return (
        f"{path} was never executed (no code cell has saved outputs): nothing was compared; "
        f"record its outputs with: holon-nb test --holon-nb-update {path}"
    )


def _never_executed(nb: NotebookNode) -> bool:
    """True when the notebook has code cells and every one was saved without running."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    return bool(code) and len(unrun_cells(nb)) == len(code)


def _error_text(cell: NotebookNode) -> str:
    """``ename: evalue`` and the last lines of the traceback (ANSI removed), else the cell's stderr."""
    from .normalize import strip_ansi

    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            head = f"{out.get('ename')}: {out.get('evalue')}"
            tb = strip_ansi("\n".join(out.get("traceback") or [])).strip().splitlines()[-8:]
            return "\n".join([head, *tb]) if tb and tb[-1].strip() != head else head
    err = "".join(
        o.get("text", "")
        for o in cell.get("outputs", [])
        if o.get("output_type") == "stream" and o.get("name") == "stderr"
    )
    return strip_ansi(err).strip()[-2000:]


#: The pytest plugin's ``on_ready`` (kernels started ahead, issue 30): awaited with whether the notebook running
#: works in a private copy of its folder, once its kernel is ready.
Ready = Callable[[bool], Awaitable[None]]


def _prepare(path: Path, options: CheckOptions, out: Path, cwd: Path | None) -> PreparedRun:
    return PreparedRun(
        path,
        output=out,
        timeout=options.timeout,
        kernel_name=options.kernel_name,
        cassettes=options.cassettes,
        gateway=options.gateway,
        progress=False,
        cwd=cwd,
    )


def _private(saved: NotebookNode, options: CheckOptions) -> bool:
    """Whether the runs work in private copies of the notebook's folder (notebook-tests spec §2): unless the
    notebook shares its folder, or records cassettes into it."""
    return not shared_dir(saved.metadata) and options.cassettes not in ("record", "auto")


class FirstRun:
    """The first run of :func:`check_notebook` for one notebook, made ready ahead (its private copy of the
    folder, its holon home and kernel environment, all as the check would make them) so that its kernel can
    start while another notebook runs (the pytest plugin's kernels started ahead, issue 30).

    Made by :meth:`ahead`; :meth:`start` starts the kernel; :func:`check_notebook` (``first=``) runs it, or
    :meth:`discard` ends it unused.
    """

    def __init__(self, path: Path, options: CheckOptions, scratch: Path, cwd: Path | None):
        self.path, self.options, self.scratch, self.cwd = path, options, scratch, cwd
        self.run = _prepare(path, options, scratch / "run-1.ipynb", cwd)

    @classmethod
    def ahead(cls, path: Path, options: CheckOptions, busy: Path | None) -> FirstRun | None:
        """The notebook's first run made ready, or None when it cannot start ahead: its kernel runs on a
        gateway, or the notebook works in a private copy of the folder ``busy``, where the notebook running now
        works itself (the copy would miss what it still writes there). A notebook that works in its own
        folder (``shared_dir``, recording cassettes) gets its kernel started there, and runs in its turn.

        Raises:
            HarnessUsageError, FolderTooLarge: as :func:`check_notebook` would (the caller lets the check say so).
        """
        if options.gateway is not None:
            return None
        private = _private(read_notebook(path, options.kernel_name), options)
        if private and busy is not None and path.resolve().parent == busy.resolve():
            return None
        scratch = Path(tempfile.mkdtemp(prefix="holon-nb-test-"))
        cwd = None
        try:
            cwd = private_copy(path, os.environ.get("HOLON_NB_HOME")) if private else None
            return cls(path, options, scratch, cwd)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            if cwd is not None:
                shutil.rmtree(cwd.parent, ignore_errors=True)
            raise

    async def start(self) -> None:
        """Start its kernel (in the running event loop: the one the notebook running now uses)."""
        await self.run.start_kernel()

    async def aclose(self) -> None:
        """End it unused: its kernel shut down, its folders removed."""
        await self.run.stop_kernel()
        shutil.rmtree(self.run.scratch, ignore_errors=True)
        if self.cwd is not None:
            shutil.rmtree(self.cwd.parent, ignore_errors=True)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def discard(self) -> None:
        """:meth:`aclose`, where no event loop runs."""
        run_sync(self.aclose)()


def _run(
    path: Path,
    options: CheckOptions,
    scratch: Path,
    n: int,
    private: bool,
    first: FirstRun | None = None,
    on_ready: Callable[[], Awaitable[None]] | None = None,
) -> tuple[RunSummary, NotebookNode]:
    """Run ``path`` once; in a fresh copy of its folder when ``private`` (notebook-tests spec §2, :mod:`.workdir`);
    ``first``: this run made ready ahead (its kernel maybe started); ``on_ready``: awaited when its kernel is ready."""
    out = scratch / f"run-{n}.ipynb"
    if first is not None:
        cwd: Path | None = first.cwd
        run = first.run
    else:
        cwd = private_copy(path, os.environ.get("HOLON_NB_HOME")) if private else None
    try:
        if first is None:
            run = _prepare(path, options, out, cwd)
        summary = run.execute(on_ready)
    finally:
        if cwd is not None:
            shutil.rmtree(cwd.parent, ignore_errors=True)
    return summary, nbformat.read(out, as_version=4)


def _roots(saved: NotebookNode, summaries: Sequence[RunSummary], workspace: Path) -> Roots:
    recorded = Roots.from_mapping((saved.metadata.get("holon_nb") or {}).get("recorded_roots"))
    homes = tuple(s.holon_home for s in summaries if s.holon_home)
    return recorded.merged(Roots.current(home=None, workspace=workspace)).merged(Roots(home=homes))


def _update(path: Path, saved: NotebookNode, executed: NotebookNode, cells: Sequence[int], norm: Normalizer) -> None:
    for i in cells:
        fresh = executed.cells[i]
        saved.cells[i].outputs = copy.deepcopy(fresh.outputs)  # masked below; the run keeps its own
        saved.cells[i].execution_count = fresh.get("execution_count")
        meta = fresh.metadata.get("holon_nb")
        if meta is not None:
            saved.cells[i].metadata["holon_nb"] = meta
        else:
            saved.cells[i].metadata.pop("holon_nb", None)
    if "widgets" in executed.metadata:
        saved.metadata["widgets"] = executed.metadata["widgets"]
    else:  # the run left no widget shown: no saved state of older ones either
        saved.metadata.pop("widgets", None)
    # no path of this machine in what is committed (issue 26 item 12): the outputs are saved masked, as a
    # comparison would read them, so the recorded roots that used to stand in for them are not kept
    mask_saved_paths(saved, norm)
    meta = saved.metadata.get("holon_nb")
    if meta is not None:
        meta.pop("recorded_roots", None)
        if not meta:
            del saved.metadata["holon_nb"]
    tmp = path.with_name(path.name + ".tmp")
    nbformat.write(saved, tmp)
    os.replace(tmp, path)


def _agent_cells(nb: NotebookNode) -> list[tuple[int, str]]:
    return [(i, c.source) for i, c in enumerate(nb.cells) if agent_inserted(c)]


def _take_agent_cells(saved: NotebookNode, executed: NotebookNode) -> bool:
    """``--holon-nb-update``: give ``saved`` the cells agents inserted in this run, where they are (issue 28).

    The saved notebook's own cells stay; the agent's cells of an earlier update are replaced by this run's.
    Returns True when ``saved`` changed (it must then be written even if no output changed)."""
    if _agent_cells(saved) == _agent_cells(executed):
        return False
    own = [c for c in saved.cells if not agent_inserted(c)]
    if len(own) != sum(1 for c in executed.cells if not agent_inserted(c)):
        return False  # not the same notebook: the structure check says so
    mine = iter(own)
    saved.cells = [copy.deepcopy(c) if agent_inserted(c) else next(mine) for c in executed.cells]
    return True


def _agent_cell_problems(saved: NotebookNode, executed: NotebookNode) -> list[str]:
    """The cells agents inserted must be the saved ones, at the same places, with the same source."""
    if _agent_cells(saved) == _agent_cells(executed):
        return []
    return [
        "the cells agents inserted differ from the saved ones: saved "
        f"{[i for i, _ in _agent_cells(saved)]}, this run {[i for i, _ in _agent_cells(executed)]} "
        "(indices; or their sources differ)"
    ]


def check_notebook(
    path: str | os.PathLike[str],
    options: CheckOptions | None = None,
    *,
    first: FirstRun | None = None,
    on_ready: Ready | None = None,
) -> NotebookCheck:
    """Run ``path`` ``options.repeat`` times and compare with its saved outputs (notebook-tests spec §2, §3, notebook-tests spec §6).

    ``first`` and ``on_ready`` are the pytest plugin's (kernels started ahead, issue 30): ``first`` is the first run
    made ready ahead by :meth:`FirstRun.ahead` (used when it was made for this path and these options, else
    discarded); ``on_ready`` is awaited once the first run's kernel is ready, with whether the runs work in a
    private copy of the folder.

    Returns:
        The :class:`NotebookCheck`; ``failed`` tells whether the test fails.

    Raises:
        HarnessUsageError: the notebook cannot be read, declares a kernel that is not Python, or a usage
            mistake in ``options``.
        ValueError: a malformed normaliser in the notebook's metadata.
        FolderTooLarge: (a ValueError) the notebook's folder is too large to copy for a private run and
            the notebook does not set ``metadata.holon_nb.shared_dir``.
    """
    options = options or CheckOptions()
    path = Path(path)
    if first is not None and (first.path != path or first.options is not options):
        first.discard()
        first = None
    try:
        return _check(path, options, first, on_ready)
    except BaseException:
        if first is not None:  # (a usage mistake found before it ran: its kernel would run on)
            first.discard()
        raise


def _check(path: Path, options: CheckOptions, first: FirstRun | None, on_ready: Ready | None) -> NotebookCheck:
    saved = read_notebook(path, options.kernel_name)
    rules = notebook_rules(saved) + list(options.rules)
    compare = compare_options(saved, options.compare)
    # notebook-tests spec §2: a private copy of the folder per run, unless the notebook shares its folder (or records
    # cassettes into it); runs in a folder itself never overlap (a lock across xdist workers)
    private = _private(saved, options)
    scratch = first.scratch if first is not None else Path(tempfile.mkdtemp(prefix="holon-nb-test-"))

    async def ready() -> None:
        assert on_ready is not None
        await on_ready(private)

    try:
        with contextlib.nullcontext() if private else folder_lock(path.resolve().parent):
            runs = [
                _run(
                    path,
                    options,
                    scratch,
                    n,
                    private,
                    first if n == 1 else None,
                    ready if n == 1 and on_ready else None,
                )
                for n in range(1, max(1, options.repeat) + 1)
            ]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    summary, executed = runs[0]
    check = NotebookCheck(path=path, summary=summary, runs=len(runs), executed=executed)
    workspace = path.resolve().parent
    norm = Normalizer(
        _roots(saved, [s for s, _ in runs], workspace),
        rules,
        masks=list(options.masks) + notebook_masks(saved),
        keep_ansi=options.compare_ansi,
    )

    errors: set[int] = set()
    for cell in summary.cells:
        if cell.status in ("error", "timeout"):
            errors.add(cell.index)
            what = "timed out" if cell.status == "timeout" else f"raised {cell.ename}"
            detail = _error_text(executed.cells[cell.index]) if cell.index < len(executed.cells) else ""
            check.cells.append(CellProblem(cell.index, cell.first_line, "error", f"{what}\n{detail}".rstrip()))
    if summary.stopped_after is not None:
        check.not_run = [c.index for c in summary.cells if c.index > summary.stopped_after and c.status == "skipped"]
    if summary.kernel_died:
        check.problems.append("the kernel died")
    check.problems += summary.problems
    allow_running = bool((saved.metadata.get("holon_nb") or {}).get("allow_running_tasks"))
    if summary.tasks_left_running and not allow_running and not summary.kernel_died:
        check.problems.append(
            "tasks left running after the final wait (stopped): "
            + ", ".join(summary.tasks_left_running)
            + " (set metadata.holon_nb.allow_running_tasks: true to allow)"
        )

    started = time.perf_counter()
    restructured = options.update and _take_agent_cells(saved, executed)
    agents = _agent_cell_problems(saved, executed)
    if agents or len(saved.cells) != len(executed.cells):
        check.problems += agents or ["the executed notebook does not have the saved notebook's cells"]
        return check
    check.never_executed = not options.update and _never_executed(saved)
    # never executed: nothing to compare, strict or not; strict makes that a failure, in one line (not a
    # JSON dump of every receipt as a mismatch)
    check.unrun = [] if options.strict_unrun and not check.never_executed else unrun_cells(saved)
    if check.never_executed and options.strict_unrun:
        check.problems.append(never_executed_note(path))
    ran = [i for i in compared_cells(saved) if i not in errors and i not in check.not_run]
    # a cell saved without running has nothing to compare with; runs of it are still compared with each other
    compared = [i for i in ran if i not in check.unrun]
    diffs: list[CellDiff] = compare_notebooks(
        saved, executed, norm, cells=compared, options=compare, notes=check.not_compared
    )
    for k, (_, other) in enumerate(runs[1:], start=2):
        for d in compare_notebooks(
            executed,
            other,
            norm,
            labels=("run 1", f"run {k}"),
            cells=[i for i in ran if i not in {p.index for p in check.cells}],
            options=compare,
        ):
            check.cells.append(
                CellProblem(d.index, d.first_line, "nondeterministic", f"run {k} differs from run 1: {d.message}")
            )
    check.compare_s = time.perf_counter() - started

    if options.update:
        # a mismatching cell, or a run cell with no saved outputs that has some now (a first recording), or
        # a cell saved without running that ran silently: recorded with its execution count, so later runs
        # compare it (a cell saved without running is not compared, issue 24 A1)
        empty = [
            i
            for i, c in enumerate(saved.cells)
            if c.cell_type == "code"
            and not c.get("outputs")
            and (
                executed.cells[i].get("outputs")
                or (c.get("execution_count") is None and executed.cells[i].get("execution_count") is not None)
            )
            and i not in errors
            and i not in check.not_run
        ]
        differing = {d.index for d in diffs}
        # a receipt saved with an older renderer's text is rewritten too (its JSON alone compares equal)
        stale_text = {
            i for i in compared if i not in differing and receipt_text_differs(saved.cells[i], executed.cells[i], norm)
        }
        changed = sorted(differing | set(empty) | stale_text)
        stale = "recorded_roots" in (saved.metadata.get("holon_nb") or {})
        if changed or stale or restructured or mask_saved_paths(copy.deepcopy(saved), norm):
            _update(path, saved, executed, changed, norm)
        check.updated_cells = changed
    else:
        check.cells += [CellProblem(d.index, d.first_line, "mismatch", d.message) for d in diffs]
    check.cells.sort(key=lambda p: p.index)
    return check
