"""The notebook document the Notebook tools read and edit (issue 28: ReadNotebook, EditNotebook, ExecuteCell).

Three backends, picked per call by :func:`._collab.current_document`:

- **headless** (``holon-nb run`` / ``holon-nb test``): the harness loads a copy of the notebook it executes
  into the kernel (:meth:`HeadlessDocument.load`) before the first cell. Edits apply to that copy at once
  (so the agent reads what it wrote) and are queued as operations; after each cell the harness drains them
  (:func:`drain`) and applies them to the notebook it runs and saves. A cell an agent inserts is marked
  ``metadata.holon_nb.inserted_by = "agent"`` and gets a deterministic id (``agent-<n>``); the harness
  drops such cells before a run, so re-running a saved notebook re-creates them (the saved file is the
  expected output of ``holon-nb test``). ExecuteCell runs the cell's source in the kernel and sends its
  outputs the same way; the harness does not run agent-inserted cells again.
- **file** (a live front end without a collaboration document): the notebook is read from its saved file
  (``JPY_SESSION_NAME``; the receipt says it is the saved version). Nothing is ever written to that file,
  which an open editor would overwrite: ``insert`` falls back to ``set_next_input`` (the front end shows one
  new cell below the running one; the receipt says it was offered, not applied; ExecuteCell runs it by the
  ``cell_id`` the receipt gives, its outputs in the receipt only), and ``replace``,
  ``delete`` and ``move`` answer ``notebook_edit_unsupported``.

- **collaboration** (a live JupyterLab whose server has jupyter-collaboration): :mod:`._collab` reads and
  edits the open notebook's shared document; picked before **file** whenever it can be reached.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure

__all__ = ["HeadlessDocument", "FileDocument", "HEADLESS", "drain", "locate_cell", "summarise_outputs"]

#: Characters of a cell's outputs ReadNotebook shows.
MAX_OUTPUT_TEXT = 1_000


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def summarise_outputs(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``{kind, text}`` per nbformat output: streams and text/plain cut, images described, errors named."""
    out: list[dict[str, Any]] = []
    for item in outputs[:20]:
        kind = str(item.get("output_type", "?"))
        if kind == "stream":
            text = _text(item.get("text"))
            kind = str(item.get("name", "stream"))
        elif kind == "error":
            text = f"{item.get('ename')}: {item.get('evalue')}"
        else:
            data = item.get("data") or {}
            images = sorted(m for m in data if str(m).startswith("image/"))
            text = _text(data.get("text/plain"))
            if images:
                text = f"[{images[0]} image, not sent] {text}".strip()
            elif not text and data:
                text = f"[{sorted(data)[0]} output]"
        if len(text) > MAX_OUTPUT_TEXT:
            text = text[:MAX_OUTPUT_TEXT] + f"… [{len(text) - MAX_OUTPUT_TEXT} more chars]"
        out.append({"kind": kind, "text": text})
    return out


def locate_cell(
    tool: str, cells: list[dict[str, Any]], index: int | None, cell_id: str | None
) -> tuple[int, dict[str, Any]]:
    """``(index, cell)`` of the cell of ``cells`` named by ``cell_id`` (first) or ``index``.

    Raises:
        ToolFailure: ``cell_not_found`` when no cell has that id or the index is past the end.
    """
    if cell_id is not None:
        for i, cell in enumerate(cells):
            if cell.get("id") == cell_id:
                return i, cell
        raise _not_found(tool, None, cell_id, len(cells))
    if index is None or index >= len(cells):
        raise _not_found(tool, index, None, len(cells))
    return index, cells[index]


def _not_found(tool: str, index: int | None, cell_id: str | None, count: int) -> ToolFailure:
    which = f"id {cell_id!r}" if cell_id is not None else f"index {index}"
    return ToolFailure(
        ToolError(
            kind="cell_not_found",
            message=f"{tool}: the notebook has no cell with {which} (it has {count} cells, indices 0-{count - 1})",
            details={"tool_name": tool, "index": index, "cell_id": cell_id, "cell_count": count},
            recovery_hint="Read the notebook again (ReadNotebook): cells may have moved or been deleted.",
        )
    )


def _unsupported(tool: str, why: str) -> ToolFailure:
    return ToolFailure(
        ToolError(
            kind="notebook_edit_unsupported",
            message=f"{tool}: {why}",
            details={"tool_name": tool},
            recovery_hint="Suggest the change to the user in your reply, or use RunCode for code that only has to run.",
        )
    )


def _view(cell: dict[str, Any], index: int) -> dict[str, Any]:
    return {
        "index": index,
        "id": cell.get("id"),
        "cell_type": cell.get("cell_type", "code"),
        "source": _text(cell.get("source")),
        "outputs": summarise_outputs(cell.get("outputs") or []),
    }


def _slice(cells: list[dict[str, Any]], start: int | None, end: int | None, cell_id: str | None) -> list[Any]:
    if cell_id is not None:
        found = [_view(c, i) for i, c in enumerate(cells) if c.get("id") == cell_id]
        if not found:
            raise _not_found("ReadNotebook", None, cell_id, len(cells))
        return found
    lo = start or 0
    if lo > len(cells) or (start is not None and lo >= len(cells) and cells):
        raise _not_found("ReadNotebook", lo, None, len(cells))
    return [_view(c, i) for i, c in enumerate(cells) if lo <= i < (len(cells) if end is None else end)]


class HeadlessDocument:
    """The copy of the notebook a headless run executes (module docstring); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cells: list[dict[str, Any]] | None = None
        self.path: str | None = None
        self._ops: list[dict[str, Any]] = []
        self._inserted = 0

    @property
    def loaded(self) -> bool:
        return self.cells is not None

    def load(self, document: str) -> None:
        """Take the harness's copy: JSON ``{"path", "cells": [{id, cell_type, source, outputs}]}``."""
        doc = json.loads(document)
        with self._lock:
            self.cells = [dict(c) for c in doc["cells"]]
            self.path = doc.get("path")
            self._ops.clear()
            self._inserted = sum(1 for c in self.cells if str(c.get("id", "")).startswith("agent-"))

    def drain(self) -> list[dict[str, Any]]:
        """The queued operations, oldest first (the harness applies them); the queue is emptied."""
        with self._lock:
            ops, self._ops = self._ops, []
        return ops

    def read(self, start: int | None, end: int | None, cell_id: str | None) -> dict[str, Any]:
        with self._lock:
            cells = list(self.cells or [])
        return {
            "backend": "headless",
            "path": self.path,
            "cell_count": len(cells),
            "cells": _slice(cells, start, end, cell_id),
        }

    def locate(self, tool: str, index: int | None, cell_id: str | None) -> tuple[int, dict[str, Any]]:
        """``(index, cell)`` of the cell named by id or index (call with the lock held)."""
        return locate_cell(tool, self.cells or [], index, cell_id)

    def edit(self, op: str, target: dict[str, Any], source: str | None, cell_type: str) -> dict[str, Any]:
        with self._lock:
            cells = self.cells
            assert cells is not None
            if op == "insert":
                index = len(cells) if target["index"] is None else target["index"]
                if index > len(cells):
                    raise _not_found("EditNotebook", index, None, len(cells))
                self._inserted += 1
                cell = {
                    "id": f"agent-{self._inserted}",
                    "cell_type": cell_type,
                    "source": source or "",
                    "metadata": {"holon_nb": {"inserted_by": "agent"}},
                    "outputs": [],
                }
                cells.insert(index, cell)
                self._ops.append({"op": "insert", "index": index, "cell": dict(cell)})
            else:
                index, cell = self.locate("EditNotebook", target["index"], target["cell_id"])
                if op == "replace":
                    cell["source"] = source or ""
                    self._ops.append(
                        {"op": "replace", "cell_id": cell.get("id"), "index": index, "source": cell["source"]}
                    )
                elif op == "delete":
                    cells.pop(index)
                    self._ops.append({"op": "delete", "cell_id": cell.get("id"), "index": index})
                else:  # move
                    to = target["to_index"]
                    if to >= len(cells):
                        raise _not_found("EditNotebook", to, None, len(cells))
                    cells.insert(to, cells.pop(index))
                    self._ops.append({"op": "move", "cell_id": cell.get("id"), "index": index, "to_index": to})
                    index = to
            return {
                "op": op,
                "backend": "headless",
                "applied": True,
                "index": index,
                "cell_id": cell.get("id"),
                "cell_count": len(cells),
            }

    def cell_source(self, index: int | None, cell_id: str | None) -> tuple[int, str | None, str, str]:
        """``(index, id, cell_type, source)`` of one cell (ExecuteCell)."""
        with self._lock:
            i, cell = self.locate("ExecuteCell", index, cell_id)
            return i, cell.get("id"), str(cell.get("cell_type", "code")), _text(cell.get("source"))

    def record_outputs(self, cell_id: str | None, index: int | None, outputs: list[dict[str, Any]]) -> None:
        """Set one cell's outputs (ExecuteCell ran it) and queue them for the harness."""
        with self._lock:
            for cell in self.cells or []:
                if cell.get("id") == cell_id:
                    cell["outputs"] = outputs
            self._ops.append({"op": "outputs", "cell_id": cell_id, "index": index, "outputs": outputs})


class FileDocument:
    """A live front end's notebook as last saved (module docstring): read-only, insert offered."""

    def __init__(self, shell: Any, path: Path | None, why: str = "no collaboration document"):
        self._shell = shell
        self.path = path
        #: why the live collaboration document is not used (``._collab._CollabUnavailable``), for the receipts
        self.why = why

    def _cells(self) -> list[dict[str, Any]]:
        if self.path is None or not self.path.is_file():
            raise _unsupported("ReadNotebook", "this kernel does not know its notebook file")
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise _unsupported("ReadNotebook", f"the notebook file could not be read ({type(exc).__name__})") from None
        return [dict(c) for c in doc.get("cells") or []]

    def read(self, start: int | None, end: int | None, cell_id: str | None) -> dict[str, Any]:
        cells = self._cells()
        return {
            "backend": "file",
            "path": str(self.path),
            "cell_count": len(cells),
            "cells": _slice(cells, start, end, cell_id),
            "note": "the notebook as last saved: unsaved changes in the editor are not seen; without "
            f"jupyter-collaboration edits cannot be applied to the open notebook ({self.why})",
        }

    def edit(self, op: str, target: dict[str, Any], source: str | None, cell_type: str) -> dict[str, Any]:
        if op != "insert" or cell_type != "code":
            raise _unsupported(
                "EditNotebook",
                f"{op} needs the open notebook's collaboration document (jupyter-collaboration), which is not "
                f"available ({self.why}); the file is never written behind the open editor's back",
            )
        cell_id = f"agent-{len(OFFERED) + 1}"
        # the first line says where the cell came from (a person reviews it before running or saving it)
        self._shell.set_next_input(f"{OFFERED_MARK} ({cell_id}; holon_nb EditNotebook)\n{source or ''}", replace=False)
        OFFERED[cell_id] = source or ""
        return {
            "op": op,
            "backend": "file",
            "applied": False,
            "cell_id": cell_id,
            "note": f"no collaboration document ({self.why}): the cell was offered to the front end as the next input "
            "(set_next_input), below the cell that is running; it is saved only when the user saves; "
            f"ExecuteCell with cell_id {cell_id} runs its source here",
        }

    def cell_source(self, index: int | None, cell_id: str | None) -> tuple[int | None, str | None, str, str]:
        if cell_id is not None and cell_id in OFFERED:  # a cell offered to the front end: its index is the editor's
            return None, cell_id, "code", OFFERED[cell_id]
        cells = self._cells()
        for i, cell in enumerate(cells):
            if (cell_id is not None and cell.get("id") == cell_id) or (cell_id is None and i == index):
                return i, cell.get("id"), str(cell.get("cell_type", "code")), _text(cell.get("source"))
        raise _not_found("ExecuteCell", index, cell_id, len(cells))

    def record_outputs(self, cell_id: str | None, index: int | None, outputs: list[dict[str, Any]]) -> None:
        """Nothing to record: the receipt carries the outputs; the open notebook is not changed."""


#: The first line of a cell offered to a live front end (tests/_browser.py knows it: such a cell is not run).
OFFERED_MARK = "# offered by an agent"

#: Cells offered to a live front end (``set_next_input``) by id: ExecuteCell can run them by that id.
OFFERED: dict[str, str] = {}

#: The headless run's document (loaded by the harness; unloaded in a live kernel).
HEADLESS = HeadlessDocument()


def drain() -> str:
    """The harness's call after each cell: the queued operations as JSON text."""
    return json.dumps(HEADLESS.drain())
