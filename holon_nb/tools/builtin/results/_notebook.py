"""Results of the opt-in Notebook family (issue 28): kernel namespace, code runs, the notebook document.

Nested records (a variable's summary, a cell, an output) stay ``dict[str, Any]``: their keys are listed in
each model's docstring and built by the kernel port (:mod:`holon_nb.notebook._kernel`).
"""

from __future__ import annotations

from ._base import Record, Records, ResultModel

__all__ = [
    "ListVariablesResult",
    "InspectVariableResult",
    "KernelHistoryResult",
    "RunCodeResult",
    "ReadNotebookResult",
    "EditNotebookResult",
    "ExecuteCellResult",
]


class ListVariablesResult(ResultModel):
    """``variables``: ``{name, type, repr, shape?, len?, dtype?, size_bytes?}`` per variable, sorted by name;
    ``total`` how many matched, ``truncated`` whether ``limit`` left some out."""

    variables: Records
    total: int
    truncated: bool


class InspectVariableResult(ResultModel):
    """One variable: ``name``, ``type``, its bounded ``text`` (a DataFrame's head and dtypes, an array's
    shape and dtype, else a depth- and length-bounded repr), ``summary`` (as in ListVariables), ``truncated``."""

    name: str
    type: str
    text: str
    summary: Record
    truncated: bool


class KernelHistoryResult(ResultModel):
    """``cells``: ``{execution_count, source, outputs: [{kind, text}]}`` of the most recent executed cells,
    oldest first; images are described (``kind: image``), never sent."""

    cells: Records


class RunCodeResult(ResultModel):
    """A code run: ``status`` (``ok``, ``error``, ``timed_out``, ``interrupted``, ``refused``), ``stdout``,
    ``stderr``, ``outputs`` (``{kind, mime, text}`` per display or result), ``error`` (``{ename, evalue,
    traceback}``) when it raised, ``truncated`` when output was cut."""

    status: str
    stdout: str
    stderr: str
    outputs: Records
    error: Record | None = None
    truncated: bool


class ReadNotebookResult(ResultModel):
    """The document: ``backend`` (``headless``, ``collaboration``, ``file``), ``path``, ``cell_count``,
    ``cells`` (``{index, id, cell_type, source, outputs}``), ``note`` saying what the backend can do."""

    backend: str
    path: str | None = None
    cell_count: int
    cells: Records
    note: str | None = None


class EditNotebookResult(ResultModel):
    """An edit: ``op``, ``backend``, ``applied`` (False when only offered, e.g. ``set_next_input``),
    ``index`` and ``cell_id`` of the cell it touched, ``cell_count`` after it, ``note``."""

    op: str
    backend: str
    applied: bool
    index: int | None = None
    cell_id: str | None = None
    cell_count: int | None = None
    note: str | None = None


class ExecuteCellResult(ResultModel):
    """A cell run: its ``index`` (absent for a cell only offered to a live front end), ``cell_id``, ``note``, and
    the run as RunCode reports it (``status``, ``stdout``, ``stderr``, ``outputs``, ``error``, ``truncated``)."""

    index: int | None = None
    cell_id: str | None = None
    note: str | None = None
    status: str
    stdout: str
    stderr: str
    outputs: Records
    error: Record | None = None
    truncated: bool
