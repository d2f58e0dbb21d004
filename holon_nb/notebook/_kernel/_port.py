"""``KernelNotebook``: the kernel port of the Notebook tool family (issue 28), over the IPython shell.

Installed on the runtime by ``%load_ext holon_nb`` (``rt.notebook``) and removed on unload. Reads the user
namespace with bounded cost (:mod:`._values`), runs code there (:mod:`._runner`), keeps a short history of
executed cells (a ``post_run_cell`` hook: source, result, error) and reads or edits the document
(:mod:`._document`).
"""

from __future__ import annotations

import collections
import fnmatch
import threading
import time
import types
from collections.abc import Callable
from typing import Any

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure
from ._collab import current_document
from ._runner import CodeRunner, output_entry
from ._values import describe, safe_repr, summarise, type_name

__all__ = ["KernelNotebook"]

#: Names IPython and holon_nb put in the user namespace that are not the user's variables.
_SHELL_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})
#: Seconds ListVariables spends summarising in all (each repr has its own 1 s bound as well).
LIST_BUDGET_S = 5.0
#: Executed cells the history keeps.
HISTORY_CELLS = 50


_REPR_METHODS = {"image/png": "_repr_png_", "image/jpeg": "_repr_jpeg_", "image/svg+xml": "_repr_svg_"}


def _has_repr(value: Any, mime: str) -> bool:
    """Whether ``value``'s class renders as ``mime`` (looked up on the type: a hostile ``__getattr__`` is not
    called)."""
    return callable(getattr(type(value), _REPR_METHODS[mime], None))


class KernelNotebook:
    """Implements :class:`holon_nb.tools.builtin.notebook._port.NotebookPort` for ``shell``.

    Args:
        shell: The IPython shell (``user_ns``, ``user_ns_hidden``, ``events``, ``display_formatter``).
    """

    def __init__(self, shell: Any, enabled: Callable[[], bool] = lambda: True):
        self._shell = shell
        self._enabled = enabled
        self.runner = CodeRunner(shell)
        self._history: collections.deque[dict[str, Any]] = collections.deque(maxlen=HISTORY_CELLS)
        self._lock = threading.Lock()
        self._hooked = False

    # ------------------------------------------------------------ lifecycle (kernel thread)
    def install(self) -> None:
        """Start keeping the cell history (``post_run_cell``)."""
        if not self._hooked:
            self._shell.events.register("post_run_cell", self._after_cell)
            self._hooked = True

    def uninstall(self) -> None:
        """Stop keeping it."""
        if self._hooked:
            try:
                self._shell.events.unregister("post_run_cell", self._after_cell)
            except ValueError:
                pass
            self._hooked = False

    def _after_cell(self, result: Any) -> None:
        try:
            info = getattr(result, "info", None)
            source = getattr(info, "raw_cell", "") or ""
            if not source.strip() or getattr(info, "silent", False) or not self._enabled():
                return  # kept only while the Notebook tools are on: no cost to a notebook that does not use them
            entry: dict[str, Any] = {"execution_count": result.execution_count, "source": source[:4000], "outputs": []}
            if result.result is not None:
                text, _ = safe_repr(result.result, 2000)
                images = [m for m in ("image/png", "image/jpeg", "image/svg+xml") if _has_repr(result.result, m)]
                bundle = {"text/plain": text, **{m: "" for m in images[:1]}}
                entry["outputs"].append(output_entry(bundle, "result"))
            error = result.error_in_exec or result.error_before_exec
            if error is not None:
                entry["outputs"].append(
                    {"kind": "error", "mime": "text/plain", "text": f"{type(error).__name__}: {error}"[:1000]}
                )
            with self._lock:
                self._history.append(entry)
        except Exception:  # noqa: BLE001 - a hook must never break the user's cell
            pass

    # ------------------------------------------------------------ the port (worker threads)
    def _user_names(self) -> list[str]:
        ns = self._shell.user_ns
        hidden = getattr(self._shell, "user_ns_hidden", {}) or {}
        names = []
        for name in list(ns):
            if not isinstance(name, str) or name.startswith("_") or name in _SHELL_NAMES:
                continue
            if name in hidden and hidden[name] is ns[name]:
                continue
            if isinstance(ns[name], types.ModuleType):
                continue
            names.append(name)
        return sorted(names)

    def variables(self, pattern: str | None, limit: int) -> dict[str, Any]:
        names = [n for n in self._user_names() if pattern is None or fnmatch.fnmatchcase(n, pattern)]
        ns = self._shell.user_ns
        deadline = time.monotonic() + LIST_BUDGET_S
        shown = []
        for name in names[:limit]:
            if name not in ns:
                continue
            if time.monotonic() > deadline:  # many slow reprs: the rest by name and type only
                kind = type_name(type(ns[name]))
                shown.append(
                    {"name": name, "type": kind, "repr": f"<not summarised: the {LIST_BUDGET_S:g} s budget was spent>"}
                )
                continue
            shown.append(summarise(name, ns[name]))
        return {"variables": shown, "total": len(names), "truncated": len(names) > limit}

    def inspect(self, name: str, max_chars: int) -> dict[str, Any]:
        ns = self._shell.user_ns
        if name not in ns:
            close = [n for n in self._user_names() if n.lower().startswith(name[:2].lower())][:5]
            raise ToolFailure(
                ToolError(
                    kind="variable_not_found",
                    message=f"no variable {name!r} in the kernel's namespace",
                    details={"tool_name": "InspectVariable", "name": name, "similar": close},
                    recovery_hint="List the variables (ListVariables) and use one of their names.",
                )
            )
        value = ns[name]
        text, truncated = describe(value, max_chars)
        summary = summarise(name, value)
        return {"name": name, "type": summary["type"], "text": text, "summary": summary, "truncated": truncated}

    def history(self, last: int, max_chars: int) -> dict[str, Any]:
        with self._lock:
            cells = list(self._history)[-last:]
        out = []
        for cell in cells:
            budget, outputs = max_chars, []
            for item in cell["outputs"]:
                text = item["text"][:budget]
                budget -= len(text)
                outputs.append({**item, "text": text})
            out.append({**cell, "outputs": outputs})
        return {"cells": out}

    def run_code(self, code: str, timeout_s: float) -> tuple[dict[str, Any], list[tuple[str, bytes]]]:
        return self.runner.run(code, timeout_s)

    def interrupt_code(self) -> bool:
        """Interrupt the agent code running in this kernel (RunCode, ExecuteCell), if any: a stopped or
        interrupted turn must not leave its code running until the timeout. True when some was."""
        return self.runner.interrupt()

    def read_cells(self, start: int | None, end: int | None, cell_id: str | None) -> dict[str, Any]:
        return current_document(self._shell).read(start, end, cell_id)

    def edit(self, op: str, target: dict[str, Any], source: str | None, cell_type: str) -> dict[str, Any]:
        return current_document(self._shell).edit(op, target, source, cell_type)

    def execute_cell(self, index: int | None, cell_id: str | None, timeout_s: float) -> dict[str, Any]:
        document = current_document(self._shell)
        i, ident, cell_type, source = document.cell_source(index, cell_id)
        if cell_type != "code":
            raise ToolFailure(
                ToolError(
                    kind="invalid_tool_input",
                    message=f"cell {i} is a {cell_type} cell, not code",
                    details={"tool_name": "ExecuteCell", "field": "index", "validation_error": "not a code cell"},
                    recovery_hint="Execute a code cell.",
                )
            )
        payload, outputs = self.runner.run_cell(source, timeout_s)
        document.record_outputs(ident, i, outputs)
        out: dict[str, Any] = {} if i is None else {"index": i}
        out.update(payload)
        if i is None:
            out["note"] = "the cell offered to the front end ran here: its outputs are in this receipt, not in the cell"
        if ident is not None:
            out["cell_id"] = ident
        return out
