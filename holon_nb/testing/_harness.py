"""Headless notebook runs: ``holon-nb run`` (notebook-tests spec §1 and §4).

A run executes the notebook with nbclient in a fresh kernel
(:mod:`holon_nb.testing._kernels` chooses it) whose ``HOLON_NB_HOME`` is a
temporary directory of its own unless the variable is already set. Before the
first cell the kernel runs ``%load_ext holon_nb`` (outputs discarded) when the
notebook may use holon_nb (:func:`~holon_nb.testing._kernel_code.needs_holon`); the
notebook's own ``%load_ext holon_nb`` then loads nothing twice and prints
nothing. A notebook that never names holon_nb runs without it, as in a plain
kernel. Every cell runs with ``allow_errors`` so the executed copy is always
saved; a cell that raises outside a ``raises-exception`` cell fails the run.
Before saving, secret values (D6) are replaced in every output and in the
widget state (D12); cell sources are left as written.

Other tools' notebook settings are read as they mean them: nbclient's
``metadata.execution`` (``timeout``: the per-cell timeout of the notebook's
cells, over the configured one; ``allow_errors: true``: a cell that raises neither
stops nor fails the run; its error is compared with the saved outputs like
any output), its ``skip-execution``
cell tag, and nbmake's cell metadata ``nbmake.mock`` (names assigned after the
cell) and ``nbmake.post_cell_execute`` (code run after the cell; if it raises,
the cell fails).

After the last cell the kernel runs
``holon_nb.notebook.wait_and_report(<timeout>)``; its outputs (final receipts
of tasks that ended meanwhile, late output included) are appended to the last
code cell, whose metadata records where they start
(``metadata.holon_nb.trailing_outputs_from``). Tasks still running after that
wait are stopped and listed in the summary. Then the extension is unloaded (the
runtime stops its tasks and closes its store) and, that done, the kernel is
stopped at once rather than through ipykernel's slower graceful exit.

Example::

    summary = run_notebook("notebooks/01-commands-and-tasks.ipynb", timeout=60)
    print(format_summary(summary)); raise SystemExit(summary.exit_code)
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbformat import NotebookNode

from ..render._scrubbing import Scrubber
from ..tools._errors import HolonNBError
from ._kernel_code import (
    DOCUMENT_DRAIN,
    FINISH,
    FINISH_PLAIN,
    FREEZE,
    LOAD,
    PRELOAD,
    SECRETS,
    STOP,
    TRAILING,
    UNLOAD,
    agent_inserted,
    apply_document_ops,
    carry_drain,
    document_load,
    drained_ops,
    needs_holon,
)
from ._kernels import NoSuchKernel, kernel_env, kernel_log_tail, kernel_manager, lost_its_ports, reap_tasks
from ._parameters import inject_parameters
from ._saved import save_executed, scrub_secrets
from ._suites._gateway import CLEAN, boot, gateway_env, gateway_kernel_manager
from ._summary import (
    TIMEOUT_ENAME,
    CellReport,
    RunSummary,
    count_receipts,
    first_line,
    format_summary,
    keep_pages,
    late_error,
    progress_line,
    say_timeout,
)
from ._tags import RESTART_TAG, execution_settings, has_tag, nbmake_code
from ._widget_state import drop_unshown_widget_state

__all__ = [
    "run_notebook",
    "read_notebook",
    "RunSummary",
    "CellReport",
    "format_summary",
    "HarnessUsageError",
    "OVERALL_FACTOR",
    "PreparedRun",
]

#: ``--cassettes`` modes (notebook-tests spec §1, §5).
CASSETTE_MODES = ("replay", "record", "auto", "off")
#: The whole run stops at this many times the per-cell timeout (notebook-tests spec §1.4).
OVERALL_FACTOR = 10
_GRACE_S = 30.0  # slack (s) for the final wait and the silent stop request beyond their own timeouts
# nbclient logs timeouts and kernel deaths as errors; the summary reports them, so its log
# stays quiet unless the application configures logging (then records propagate as usual).
_NBCLIENT_LOG = logging.getLogger("holon_nb.testing.nbclient")
_NBCLIENT_LOG.addHandler(logging.NullHandler())


class HarnessUsageError(HolonNBError, ValueError):
    """Raised by :func:`run_notebook` for a usage mistake (``holon-nb run`` exits 2).

    When: the notebook is missing or unreadable, it declares a kernel that is not
    Python (and no ``--kernel`` was chosen), OUT would overwrite it, the timeout
    is not positive, a parameter name is not an identifier, or the kernel name is
    unknown.
    """


def _tags(cell: NotebookNode) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


class _Run:
    """One execution: the client, the deadlines and the summary being filled."""

    def __init__(
        self,
        nb: NotebookNode,
        client: NotebookClient,
        summary: RunSummary,
        timeout: float,
        progress: Callable[[str], None] | None,
        keep_going: bool = False,
        final_wait: float | None = None,
        preload: bool = True,
    ):
        self.nb, self.client, self.summary, self.timeout = nb, client, summary, timeout
        self.preload = preload  # holon_nb is loaded before the first cell (the notebook may use it)
        settings = execution_settings(nb)
        # the notebook's own per-cell timeout and allow_errors (nbclient's metadata.execution, as nbmake
        # reads it) apply to its cells; the harness's own requests keep the configured timeout
        self.cell_limit: float = settings.get("timeout", timeout)
        self.allow_errors: bool = settings.get("allow_errors", False)
        self.final_wait_s = timeout if final_wait is None else final_wait
        self.progress = progress
        self.keep_going = keep_going
        self.deadline = time.monotonic() + OVERALL_FACTOR * timeout
        self.cell_timeout = timeout
        self.replies: dict[int, dict[str, Any]] = {}
        self.kernel_secrets: set[str] = set()
        # agents' document edits the replies brought (carry_drain), and whether the last reply brought them
        self.ops: list[dict[str, Any]] = []
        self.drained = False
        self.gateway: str | None = None  # the URL of the Jupyter gateway running the kernel (issue 30)
        self.on_ready: Callable[[], Awaitable[None]] | None = None  # awaited before the first cell
        client.timeout = None
        # nbclient annotates timeout_func as returning int | None; it passes the value on as seconds, floats included
        client.timeout_func = lambda cell: self.cell_timeout  # type: ignore[assignment]
        client.on_cell_executed = self._on_executed

    def _on_executed(self, cell: NotebookNode, cell_index: int, execute_reply: dict[str, Any]) -> None:
        self.replies[id(cell)] = execute_reply

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    async def execute(self, cell: NotebookNode, index: int, limit: float, count: int | None) -> dict[str, Any]:
        """Execute ``cell`` as cell ``index``; return the execute-reply content.

        Past ``limit`` seconds nbclient interrupts the kernel and answers with
        the synthetic ``error_on_timeout`` reply (ename ``CellTimeoutError``),
        at most its ``iopub_timeout`` (4 s) later, so this call is bounded.

        Raises:
            DeadKernelError: when the kernel died.
        """
        self.cell_timeout = max(limit, 0.001)
        await self.client.async_execute_cell(cell, index, execution_count=count, store_history=count is not None)
        content = (self.replies.pop(id(cell), None) or {}).get("content", {})
        keep_pages(cell, content)
        self.take_ops(content)
        return content

    def take_ops(self, content: dict[str, Any]) -> None:
        """Queue the document edits an execute reply brought (:func:`carry_drain`); note whether it brought them."""
        ops = drained_ops(content)
        self.drained = ops is not None
        self.ops.extend(ops or [])

    async def synthetic(self, code: str, limit: float) -> tuple[NotebookNode, dict[str, Any]]:
        """Execute ``code`` as a throwaway cell appended (then removed) at the end of the notebook."""
        cell = nbformat.v4.new_code_cell(code)
        self.nb.cells.append(cell)
        try:
            content = await self.execute(cell, len(self.nb.cells) - 1, limit, None)
        finally:
            self.nb.cells.pop()
        return cell, content

    async def silent(self, code: str, expr: str, limit: float) -> Any:
        """Run ``code`` silently and return the JSON value of ``expr`` (None if it failed)."""
        kc = self.client.kc
        assert kc is not None
        msg_id = await ensure_async(
            kc.execute(
                code,
                silent=True,
                store_history=False,
                stop_on_error=False,
                user_expressions={"v": f"__import__('json').dumps({expr})"},
            )
        )
        reply = await asyncio.wait_for(self.client.async_wait_for_reply(msg_id), limit)
        value = ((reply or {}).get("content", {}).get("user_expressions") or {}).get("v", {})
        if value.get("status") != "ok":
            return None
        return json.loads(ast.literal_eval(value["data"]["text/plain"]))

    async def after_cell(self, cell: NotebookNode, content: dict[str, Any]) -> dict[str, Any]:
        """Run the code nbmake's cell metadata asks for after a cell that raised nothing, silently:
        ``metadata.nbmake.mock`` (``{name: value}`` assigned in the kernel) then
        ``metadata.nbmake.post_cell_execute`` (lines of code). Returns ``content``, or an error reply
        (also shown as an ``error`` output of the cell) when that code failed, which fails the cell as
        it fails nbmake's run."""
        code = nbmake_code(cell)
        if not code:
            return content
        kc = self.client.kc
        assert kc is not None
        msg_id = await ensure_async(kc.execute(code, silent=True, store_history=False, stop_on_error=False))
        reply = await asyncio.wait_for(self.client.async_wait_for_reply(msg_id), min(self.cell_limit, self.remaining()))
        done = (reply or {}).get("content", {})
        self.take_ops(done)  # edits the post-cell code made come with its reply
        if done.get("status") == "ok":
            return content
        ename = done.get("ename") or "Error"
        evalue = f"nbmake's post-cell code failed ({done.get('evalue', '')}):\n{code}"
        cell.outputs.append(nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[]))
        return {**content, "status": "error", "ename": ename, "evalue": evalue}

    async def cells(self) -> bool:
        """Run every code cell; return False when the kernel can no longer be used."""
        code_cells = [(i, c) for i, c in enumerate(self.nb.cells) if c.cell_type == "code"]
        count, usable = 0, True
        for _, cell in code_cells:
            index = next((i for i, c in enumerate(self.nb.cells) if c is cell), -1)  # agents may move cells
            if index < 0:  # an agent deleted it (the Notebook tools, issue 28)
                continue
            report = CellReport(index=index, first_line=first_line(cell.source))
            self.summary.cells.append(report)
            if not usable or has_tag(cell, "skip") or not cell.source.strip():
                continue
            if self.summary.stopped_after is not None:  # an earlier cell failed: later ones build on it
                continue
            if self.remaining() <= 0:
                self.summary.timed_out = True
                continue
            if self.progress:
                self.progress(progress_line(report, len(self.nb.cells), done=False))
            count += 1
            started = time.monotonic()
            try:
                if RESTART_TAG in _tags(cell):
                    await self.restart()
                content = await self.execute(cell, index, min(self.cell_limit, self.remaining()), count)
                if content.get("status") == "ok" and late_error(cell, content) is content:
                    content = await self.after_cell(cell, content)
            except DeadKernelError:
                report.status, report.ename = "error", "DeadKernelError"
                self.summary.kernel_died, usable = True, False
            else:
                report.status, report.ename = "ok", None
                content = late_error(cell, content)
                if content.get("status") == "error":
                    report.ename, report.evalue = content.get("ename"), content.get("evalue")
                    if report.ename == TIMEOUT_ENAME:
                        report.status = "timeout"
                        say_timeout(cell, self.cell_timeout, self.cell_limit != self.timeout)
                    else:
                        expected = has_tag(cell, "raises") or self.allow_errors
                        report.status = "expected-error" if expected else "error"
            report.duration_s = time.monotonic() - started
            if self.progress:
                self.progress(progress_line(report, len(self.nb.cells), done=True))
            if report.status == "timeout" and self.remaining() <= 0:
                self.summary.timed_out = True
            if report.status in ("error", "timeout") and not self.keep_going and usable:
                self.summary.stopped_after = index
            if usable:
                await self.sync_document()
        return usable

    async def sync_document(self) -> None:
        """Apply the edits agents made to the notebook in the kernel since the last cell (issue 28): the last
        reply brought them (:func:`carry_drain`) unless its code raised or timed out; then they are asked for."""
        if not self.preload:
            return
        if not self.drained:
            try:
                ops = await self.silent("", DOCUMENT_DRAIN, _GRACE_S)
            except (asyncio.TimeoutError, DeadKernelError):
                ops = None
            if isinstance(ops, str):
                self.ops.extend(json.loads(ops))
        self.drained = False
        ops, self.ops = self.ops, []
        if ops:
            apply_document_ops(self.nb, ops)

    async def restart(self) -> None:
        """Restart the kernel the way JupyterLab's *Restart Kernel* does, then preload holon_nb again.

        Live ``%workitems`` boards are frozen first (:data:`FREEZE`): drawn a last time, saying so. The kernel
        then gets a ``shutdown_request`` with ``restart=True`` (its runtime closes), a new kernel
        process starts on the same connection, and the next cell runs in it.

        Raises:
            DeadKernelError: when the new kernel does not answer.
        """
        km, kc = self.client.km, self.client.kc
        assert km is not None and kc is not None
        try:  # the old kernel's live boards say they stopped: nothing updates them after it
            await self.synthetic(FREEZE, _GRACE_S)
        except (asyncio.TimeoutError, DeadKernelError):
            pass
        await self.collect_secrets()
        await ensure_async(km.restart_kernel(now=False))
        try:
            # nbclient types kc as jupyter_client's base KernelClient; its blocking and async clients both have it
            timeout = max(1.0, min(self.timeout, self.remaining()))
            await ensure_async(kc.wait_for_ready(timeout=timeout))  # type: ignore[attr-defined]
        except RuntimeError as exc:
            raise DeadKernelError(f"the kernel did not come back after a restart: {exc}") from exc
        self.summary.restarts += 1
        if self.gateway:
            await boot(self)
        _, content = await self.synthetic(PRELOAD, self.timeout)
        if content.get("status") == "error":
            self.summary.problems.append(
                f"holon_nb did not load after a kernel restart: {content.get('ename')}: {content.get('evalue')}"
            )

    async def collect_secrets(self) -> None:
        """Remember the secret values the kernel knows now (set in cells too), to scrub the saved file."""
        try:
            values = await self.silent(SECRETS, "_holon_nb_secrets()", _GRACE_S)
        except (asyncio.TimeoutError, DeadKernelError):
            return
        self.kernel_secrets.update(v for v in values or [] if isinstance(v, str))

    async def final_wait(self) -> None:
        """Run the trailing wait into the last code cell, then stop and list what still runs."""
        wait_s = max(0.0, min(self.final_wait_s, self.remaining()))
        cell, content = await self.synthetic(TRAILING.format(timeout=wait_s), wait_s + _GRACE_S)
        self._append_trailing(cell)
        await self.sync_document()  # edits of turns that ended during the final wait
        if content.get("status") == "error":
            self.summary.problems.append(f"final wait failed: {content.get('ename')}: {content.get('evalue')}")
            return
        finish = await self.silent(FINISH if self.preload else FINISH_PLAIN, "_holon_nb_finish", _GRACE_S)
        if isinstance(finish, dict):  # holon_nb never came into the kernel: its environment's secrets, as the
            self.kernel_secrets.update(Scrubber(finish).values)  # runtime's scrubber would have found them
            self.client.shutdown_kernel = "immediate"  # nothing of holon_nb to close; as after an unload
            return
        if not self.preload:  # it came after all, or may be configured to name secrets: ask a loaded runtime
            await self.silent(LOAD, "True", _GRACE_S)
            finish = await self.silent(FINISH, "_holon_nb_finish", _GRACE_S)
        if isinstance(finish, list) and len(finish) == 3:
            secrets, left, unloaded = finish
            self.kernel_secrets.update(v for v in secrets or [] if isinstance(v, str))
        else:  # FINISH failed in the kernel: ask the plain way
            await self.collect_secrets()
            left, unloaded = await self.silent("", "_holon_nb_left", _GRACE_S), False
        self.summary.tasks_left_running = [str(t) for t in left or []]
        if left:  # stop them, and let their cells say so (a saved "running" would never change)
            cell, _ = await self.synthetic(STOP, 15 + _GRACE_S)
            self._append_trailing(cell)
        if not unloaded:
            unloaded = await self.silent(UNLOAD, "True", _GRACE_S) is True
        if unloaded:  # the runtime has closed its store and stopped its tasks: nothing left to end gracefully
            self.client.shutdown_kernel = "immediate"

    def _append_trailing(self, cell: NotebookNode) -> None:
        """Append a synthetic cell's outputs to the last code cell (marking where they start)."""
        targets = [c for c in self.nb.cells if c.cell_type == "code"]
        if targets and cell.outputs:
            last = targets[-1]
            last.metadata.setdefault("holon_nb", {}).setdefault("trailing_outputs_from", len(last.outputs))
            last.outputs.extend(cell.outputs)

    async def run(self, env: dict[str, str], cwd: Path, log: BinaryIO) -> None:
        """Start the kernel, preload holon_nb, run the cells and the final wait, stop the kernel.

        The kernel process's own stdout and stderr (its log, not cell output)
        go to ``log``, so they never mix with the summary.
        """
        started = False
        try:
            async with self.client.async_setup_kernel(env=env, cwd=str(cwd), cleanup_kc=True, stdout=log, stderr=log):
                started = True
                kc = self.client.kc
                assert kc is not None
                if self.preload:  # each request brings the agents' document edits back with its reply
                    carry_drain(kc)
                info = await self.client.async_wait_for_reply(await ensure_async(kc.kernel_info()))
                if info and "language_info" in info["content"]:
                    self.nb.metadata["language_info"] = info["content"]["language_info"]
                await boot(self)  # where the kernel runs; on a gateway, its settings and holon home
                if self.preload:
                    _, content = await self.synthetic(PRELOAD, self.timeout)
                    if content.get("status") == "error":
                        self.summary.problems.append(
                            f"holon_nb did not load in the kernel: {content.get('ename')}: {content.get('evalue')}"
                        )
                    # the cells agents inserted in an earlier run are made again by this one (issue 28)
                    self.nb.cells = [c for c in self.nb.cells if not agent_inserted(c)]
                    await self.silent(document_load(self.nb, None), "True", self.timeout)
                if self.on_ready is not None:
                    await self.on_ready()
                usable = await self.cells()
                if usable and not self.summary.kernel_died:
                    await self.final_wait()
                if self.gateway:  # the holon home lives with the kernel: removed there
                    await self.silent(CLEAN, "True", _GRACE_S)
                self.client.set_widgets_metadata()
                drop_unshown_widget_state(self.nb)
        except DeadKernelError:
            self.summary.kernel_died = True
        except asyncio.TimeoutError:
            self.summary.problems.append("the kernel stopped answering after the last cell")
        except Exception as exc:  # kernel start failures surface as assorted exception types
            if started:
                raise
            self.summary.kernel_died = True
            self.summary.problems.append(f"the kernel did not start: {type(exc).__name__}: {exc}")


def _resolve_paths(
    path: str | os.PathLike[str], output: str | os.PathLike[str] | None, cwd: str | os.PathLike[str] | None
) -> tuple[Path, Path, Path]:
    src = Path(path)
    if src.is_dir():
        found = sorted(p.name for p in src.glob("*.ipynb") if not p.name.endswith(".executed.ipynb"))[:3]
        hint = f" (for example {src / found[0]})" if found else ""
        raise HarnessUsageError(f"{src} is a directory: give one notebook file{hint}")
    if not src.is_file():
        raise HarnessUsageError(f"no such notebook: {src}")
    out = Path(output) if output is not None else src.with_name(f"{src.stem}.executed.ipynb")
    with contextlib.suppress(OSError):  # (a name too long to stat: _check_writable says so)
        if out.is_dir():  # -o DIR: the default name inside it
            out = out / f"{src.stem}.executed.ipynb"
    if out.resolve() == src.resolve():
        raise HarnessUsageError(f"refusing to overwrite the input notebook {src}; choose another -o")
    _check_writable(out)
    kernel_cwd = Path(cwd) if cwd is not None else src.resolve().parent
    if not kernel_cwd.is_dir():
        raise HarnessUsageError(f"--cwd is not a directory: {kernel_cwd}")
    return src, out, kernel_cwd.resolve()


def _check_writable(out: Path) -> None:
    """Raise :class:`HarnessUsageError` now, before anything runs, when ``out`` cannot be written
    (its directory cannot be made, the name is too long, no permission): after a run, the results
    would be lost. Creates ``out``'s missing directories; leaves no file behind."""
    blocking = next((p for p in out.parents if p.exists()), None)
    if blocking is not None and not blocking.is_dir():
        raise HarnessUsageError(
            f"cannot save the executed notebook to {out}: {blocking} is a file, not a directory; choose another -o"
        )
    try:
        existed = out.exists()
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "ab"):
            pass
    except OSError as exc:
        raise HarnessUsageError(
            f"cannot save the executed notebook to {out}: {exc.strerror or exc}; choose another -o"
        ) from exc
    if not existed:
        out.unlink(missing_ok=True)


def _structure_problem(value: object) -> str | None:
    """Why decoded JSON is not a notebook nbformat can read (None when its top level looks like one)."""
    if not isinstance(value, dict):
        return f"the file holds a JSON {type(value).__name__}, not a notebook object"
    if not isinstance(value.get("nbformat"), int):
        return "the notebook object has no integer `nbformat` field"
    if value["nbformat"] >= 4 and not isinstance(value.get("cells"), list):
        return "the notebook object has no `cells` list"
    if "cells" in value and any(not isinstance(c, dict) for c in value["cells"]):
        return "a cell of the notebook is not an object"
    return None


def _read(src: Path) -> NotebookNode:
    """Read and validate a notebook; any file that is not one is a usage error with a one-line reason."""
    try:
        text = src.read_text(encoding="utf-8")
        problem = _structure_problem(json.loads(text))
        if problem is None:
            nb = nbformat.reads(text, as_version=4)
            try:
                nbformat.validate(nb)
            except nbformat.ValidationError as exc:
                # metadata (a kernelspec without `name`, as nbclient's own test notebooks have: the run
                # picks its kernel) and saved outputs (replaced when their cell runs) may break the schema
                # without making the file something else than a notebook; nbclient runs such notebooks too
                where = [str(p) for p in getattr(exc, "absolute_path", ())]
                if not where or (where[0] != "metadata" and "outputs" not in where):
                    raise
            return nb
    except Exception as exc:  # nbformat raises ValueError, KeyError, TypeError, AttributeError, ValidationError…
        lines = str(exc).strip().splitlines()
        problem = lines[0] if lines else type(exc).__name__
    raise HarnessUsageError(f"cannot read {src} as a notebook: {problem}")


def _declared_language(nb: NotebookNode) -> tuple[str, str] | None:
    """``(kernel, language)`` a notebook declares when its language is not Python, else None.

    The language is ``metadata.kernelspec.language`` or ``metadata.language_info.name``; a notebook
    that names neither, or names Python, passes (a custom kernelspec name such as ``myenv`` may run Python).
    """
    meta = nb.get("metadata") or {}
    spec = meta.get("kernelspec")
    spec = spec if isinstance(spec, dict) else {}
    info = meta.get("language_info")
    info = info if isinstance(info, dict) else {}
    language = spec.get("language") or info.get("name")
    if not isinstance(language, str) or not language.strip() or language.strip().lower() == "python":
        return None
    name = spec.get("display_name") or spec.get("name") or language
    return str(name), language.strip()


def read_notebook(path: str | os.PathLike[str], kernel_name: str | None = None) -> NotebookNode:
    """Read and validate the notebook at ``path`` as ``holon-nb run`` and ``holon-nb test`` do.

    Args:
        path: The notebook file.
        kernel_name: The kernelspec chosen for the run (``--kernel``); None means holon_nb's Python
            kernel, and then a notebook declaring another language is refused.

    Returns:
        The notebook (nbformat 4).

    Raises:
        HarnessUsageError: with a one-line reason, when the file is not a readable notebook, or when it
            declares a kernel that is not Python and ``kernel_name`` is None.
    """
    src = Path(path)
    nb = _read(src)
    declared = _declared_language(nb) if kernel_name is None else None
    if declared is not None:
        kernel, language = declared
        raise HarnessUsageError(
            f"{src} declares the {kernel} kernel (language {language}); holon_nb runs Python notebooks "
            f"only (its magics live in an IPython kernel)"
        )
    return nb


def _write_stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def run_notebook(
    path: str | os.PathLike[str],
    *,
    output: str | os.PathLike[str] | None = None,
    timeout: float = 120,
    kernel_name: str | None = None,
    parameters: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    keep_going: bool = False,
    cassettes: str | None = None,
    final_wait: float | None = None,
    notebook_home: bool = False,
    gateway: tuple[str, str | None] | None = None,
) -> RunSummary:
    """Execute a notebook headless, save the executed copy and summarise the run.

    Args:
        path: The notebook; never modified.
        output: Where to save the executed copy; default ``<stem>.executed.ipynb`` beside ``path``.
        timeout: Per-cell timeout in seconds; the whole run stops at ``10 × timeout``,
            and the final wait for background tasks lasts at most ``timeout``.
        final_wait: Seconds the final wait for background tasks lasts at most, when not ``timeout``
            (0: stop what still runs at once; its final receipts are saved all the same).
        kernel_name: Kernelspec name; None runs a kernel on this interpreter.
        parameters: ``{name: raw text}`` injected after the ``parameters`` cell
            (each value parsed as JSON when it parses, else kept as a string).
        cwd: The kernel's working directory; default the notebook's directory.
        progress: One line per cell on stderr; None means only when stderr is a TTY.
        keep_going: Run every cell even after one failed; by default the run stops at the first cell
            that raised outside a ``raises-exception`` cell (or timed out), as nbclient does, so the
            summary names the cause rather than what followed from it.
        cassettes: Model-call cassette mode of ``%%agent`` turns (notebook-tests spec §5): ``replay``, ``record``,
            ``auto`` or ``off``; None leaves the notebook's own setting. Given, the kernel gets
            ``HOLON_NB_CASSETTE_MODE`` and ``HOLON_NB_NOTEBOOK``, and a turn without ``--cassette``
            uses ``<stem>.holon/cassettes/agent-<n>.jsonl``.
        notebook_home: Run the kernel as a Jupyter server does (``JPY_SESSION_NAME`` names the notebook,
            no ``HOLON_NB_HOME``), so ``%load_ext holon_nb`` opens the notebook's own home,
            ``<cwd>/.holon/notebooks/<stem>/`` (:func:`holon_nb.runtime.core._settings.kernel_home`), kept after the run: a
            second run in the folder finds the first one's state there, as in JupyterLab.
        gateway: ``(URL, token or None)`` of a Jupyter Kernel or Enterprise Gateway that runs the kernel
            (:mod:`holon_nb.testing._suites._gateway`: the holon home lives with the kernel there).

    Returns:
        The :class:`RunSummary`; ``summary.exit_code`` is what ``holon-nb run`` exits with.

    Raises:
        HarnessUsageError: for a usage mistake (see the class); nothing has run then.
    """
    return PreparedRun(
        path,
        output=output,
        timeout=timeout,
        kernel_name=kernel_name,
        parameters=parameters,
        cwd=cwd,
        progress=progress,
        keep_going=keep_going,
        cassettes=cassettes,
        final_wait=final_wait,
        notebook_home=notebook_home,
        gateway=gateway,
    ).execute()


class PreparedRun:
    """One run of a notebook made ready with :func:`run_notebook`'s arguments (its notebook read, its folders,
    holon home, kernel environment and kernel manager chosen; a usage mistake raises :class:`HarnessUsageError`
    here, before anything starts): :meth:`execute` runs it as :func:`run_notebook` does; :meth:`start_kernel`
    starts its kernel ahead of that (the pytest plugin, issue 30)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        output: str | os.PathLike[str] | None = None,
        timeout: float = 120,
        kernel_name: str | None = None,
        parameters: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        progress: bool | None = None,
        keep_going: bool = False,
        cassettes: str | None = None,
        final_wait: float | None = None,
        notebook_home: bool = False,
        gateway: tuple[str, str | None] | None = None,
    ):
        started = time.monotonic()
        if not timeout or timeout <= 0:
            raise HarnessUsageError(f"--timeout must be positive, got {timeout}")
        if final_wait is not None and final_wait < 0:
            raise HarnessUsageError(f"final_wait must be 0 or more, got {final_wait}")
        if cassettes is not None and cassettes not in CASSETTE_MODES:
            raise HarnessUsageError(f"--cassettes must be one of {', '.join(CASSETTE_MODES)}, got {cassettes!r}")
        src, out, kernel_cwd = _resolve_paths(path, output, cwd)
        nb = read_notebook(src, kernel_name)
        preload = needs_holon(nb)  # (before the saved outputs are dropped: holon_nb's receipts among them count)
        for cell in nb.cells:  # the saved copy shows this run only: a cell not run here has no old outputs
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        try:
            inject_parameters(nb, dict(parameters or {}))
        except ValueError as exc:
            raise HarnessUsageError(str(exc)) from exc
        try:
            km = gateway_kernel_manager(*gateway, kernel_name) if gateway else kernel_manager(kernel_name)
        except NoSuchKernel as exc:
            raise HarnessUsageError(f"no such kernel: {kernel_name}") from exc
        except ImportError as exc:  # jupyter_server, for a gateway
            raise HarnessUsageError(f"a gateway needs jupyter_server (pip install 'holon_nb[gateway]'): {exc}") from exc

        scratch = Path(tempfile.mkdtemp(prefix="holon-nb-run-"))
        own_home = not os.environ.get("HOLON_NB_HOME") and not notebook_home
        if notebook_home:  # where kernel_home puts a kernel that knows its notebook
            home = str(Path(kernel_cwd).resolve() / ".holon" / "notebooks" / src.stem)
        else:
            home = str(scratch / "home") if own_home else os.environ["HOLON_NB_HOME"]
        summary = RunSummary(notebook=src, output=None, holon_home=home, holon_home_removed=own_home, preloaded=preload)
        if progress is None:
            progress = sys.stderr.isatty()
        client = NotebookClient(
            nb,
            km=km,
            log=_NBCLIENT_LOG,
            allow_errors=True,
            store_widget_state=True,
            interrupt_on_timeout=True,
            error_on_timeout={"ename": TIMEOUT_ENAME, "evalue": "the cell exceeded its timeout", "traceback": []},
            resources={"metadata": {"path": str(kernel_cwd)}},
        )
        runner = _Run(
            nb, client, summary, float(timeout), _write_stderr if progress else None, keep_going, final_wait, preload
        )
        env = kernel_env(home, kernel_name)
        if notebook_home:
            del env["HOLON_NB_HOME"]
            env["JPY_SESSION_NAME"] = str(src)
        if cassettes is not None:
            env["HOLON_NB_CASSETTE_MODE"] = cassettes
            env["HOLON_NB_NOTEBOOK"] = str(src.resolve())
        runner.gateway = gateway[0] if gateway else None
        self.started, self.kernel_started = started, False
        self.log: BinaryIO | None = None  # a kernel started ahead's log (start_kernel)
        self.src, self.out, self.kernel_cwd, self.nb, self.kernel_name = src, out, kernel_cwd, nb, kernel_name
        self.client, self.runner, self.summary, self.scratch, self.gateway = client, runner, summary, scratch, gateway
        self.env, self.home = env, home
        self.start_env = gateway_env(env) if gateway else env  # what the kernel is started with

    async def start_kernel(self) -> None:
        """Start the run's kernel now (a local kernel: its environment, working directory and log as
        :meth:`execute` would give it), so that :meth:`execute`, later, finds it running. A gateway's kernel
        is started by :meth:`execute`."""
        if self.gateway or self.kernel_started:
            return
        # kept open for the run: a holon-restart-kernel restart starts the new kernel with the same log
        self.log = open(self.scratch / "kernel.log", "wb")  # noqa: SIM115 - closed by execute or stop_kernel
        self.kernel_started = True
        await self.client.async_start_new_kernel(
            env=self.start_env, cwd=str(self.kernel_cwd), stdout=self.log, stderr=self.log
        )

    async def stop_kernel(self) -> None:
        """Shut down a kernel started ahead (:meth:`start_kernel`) that will not be used (best effort)."""
        km = self.client.km
        if km is not None and km.has_kernel:
            with contextlib.suppress(Exception):
                await ensure_async(km.shutdown_kernel(now=True))
            with contextlib.suppress(Exception):
                await ensure_async(km.cleanup_resources())
        self.kernel_started = False
        if self.log is not None:
            self.log.close()

    def discard(self) -> None:
        """End the run unused: its kernel shut down (:meth:`stop_kernel`; call this where no event loop runs),
        its folders removed."""
        run_sync(self.stop_kernel)()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def execute(self, on_ready: Callable[[], Awaitable[None]] | None = None) -> RunSummary:
        """Run it: start the kernel (unless :meth:`start_kernel` did), preload holon_nb, run the cells and the
        final wait, save the executed copy; ``on_ready`` is awaited once the kernel is ready, before the first
        cell. Returns the :class:`RunSummary` (:func:`run_notebook`)."""
        nb, summary, runner, client, scratch = self.nb, self.summary, self.runner, self.client, self.scratch
        env, kernel_cwd, out, kernel_name, home = self.env, self.kernel_cwd, self.out, self.kernel_name, self.home
        started = time.monotonic() if self.kernel_started else self.started
        runner.on_ready = on_ready
        try:
            for attempt in (1, 2):
                ahead = self.log if attempt == 1 and self.log is not None else None  # the kernel started ahead's
                with contextlib.nullcontext(ahead) if ahead else open(scratch / "kernel.log", "wb") as log:
                    run_sync(runner.run)(self.start_env, kernel_cwd, log)
                if attempt == 2 or not lost_its_ports(summary, scratch / "kernel.log"):
                    break
                # jupyter_client picks free ports, then the kernel binds them: another process (a second kernel
                # starting on a busy machine) can take one in between. Nothing ran yet: start a new kernel once.
                summary.kernel_died = False
                summary.problems = [p for p in summary.problems if not p.startswith("the kernel did not start")]
                client.km = kernel_manager(kernel_name)
        finally:
            if self.log is not None:
                self.log.close()
            if summary.kernel_died:
                summary.tasks_left_running = reap_tasks(home, kernel_cwd)
                summary.problems.extend(kernel_log_tail(scratch / "kernel.log"))
            scrub_secrets(nb, env, runner.kernel_secrets)
            summary.receipts_by_status, summary.error_kinds = count_receipts(nb)
            out.parent.mkdir(parents=True, exist_ok=True)
            summary.output = save_executed(nb, out, summary)
            shutil.rmtree(scratch, ignore_errors=True)
            summary.wall_time_s = time.monotonic() - started
        return summary
