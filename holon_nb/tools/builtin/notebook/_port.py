"""The port the notebook tools reach the kernel through (issue 28): :class:`NotebookPort`.

The tools layer never imports IPython (design.md, "Layers"): the notebook layer implements this protocol
(:class:`holon_nb.notebook._kernel._port.KernelNotebook`) and installs it on the runtime
(``rt.notebook = …``); a call's ``ToolContext`` hands it to the handlers as ``ctx.notebook``. A runtime
outside a kernel has none, and every Notebook tool then answers ``notebook_unavailable``.

Every method is synchronous, may block (the handlers call it in a worker thread, never on the runtime's
loop), returns the plain payload of its tool's result model, and raises
:class:`~holon_nb.tools._errors.ToolFailure` for a typed error (``variable_not_found``, ``cell_not_found``,
``notebook_edit_unsupported``, ``invalid_tool_input``).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["NotebookPort"]


@runtime_checkable
class NotebookPort(Protocol):
    """What the Notebook tool family asks of the kernel it lives in."""

    def variables(self, pattern: str | None, limit: int) -> dict[str, Any]:
        """``ListVariablesResult``: the user namespace's variables (hidden names, modules and IPython's own
        names left out), each summarised with bounded cost; ``pattern`` is an ``fnmatch`` pattern."""

    def inspect(self, name: str, max_chars: int) -> dict[str, Any]:
        """``InspectVariableResult``: one variable in depth, its text at most ``max_chars`` characters."""

    def history(self, last: int, max_chars: int) -> dict[str, Any]:
        """``KernelHistoryResult``: the last ``last`` executed cells with their outputs (text cut to
        ``max_chars`` per cell; images described, never sent)."""

    def run_code(self, code: str, timeout_s: float) -> tuple[dict[str, Any], list[tuple[str, bytes]]]:
        """``(RunCodeResult, images)``: run ``code`` in the user namespace; stdout, stderr and display outputs
        captured; a timeout interrupts it (KeyboardInterrupt); ``sys.exit``, ``os._exit`` and ``input()``
        are refused without harming the kernel. ``images`` are the ``(label, bytes)`` of the PNG and JPEG
        images the code displayed, shown beside the receipt as thumbnails (never sent to the model)."""

    def read_cells(self, start: int | None, end: int | None, cell_id: str | None) -> dict[str, Any]:
        """``ReadNotebookResult``: the notebook's cells (source, type, outputs summarised)."""

    def edit(self, op: str, target: dict[str, Any], source: str | None, cell_type: str) -> dict[str, Any]:
        """``EditNotebookResult``: ``op`` (``insert``, ``replace``, ``delete``, ``move``) applied to the
        document; ``target`` holds ``index``, ``cell_id`` and ``to_index`` (None when not given)."""

    def execute_cell(self, index: int | None, cell_id: str | None, timeout_s: float) -> dict[str, Any]:
        """``ExecuteCellResult``: run one cell's source as ``run_code`` does and record its outputs."""
