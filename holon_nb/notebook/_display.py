"""Display helpers: receipts, notes and small tables as mimebundles.

A tool result displays through :class:`~holon_nb.runtime.ToolResult`'s own
``_repr_mimebundle_`` (``text/plain`` receipt, ``text/html`` card from
:mod:`holon_nb.render._card`, ``application/vnd.holon.tool-result+json``
scrubbed envelope). Everything here always carries ``text/plain`` so saved
and headless notebooks stay readable (style.md §2.13).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from IPython.display import display

from ..render import command_failures
from ..render._card import card_root
from ..render._palette import muted_style
from ..render.human import wrap
from ..runtime import ToolResult
from ..tools._errors import CommandFailed, ToolCallError

__all__ = ["Note", "Table", "interrupted", "raise_if_command_failed", "show_result"]


def interrupted(what: str) -> KeyboardInterrupt:
    """A ``KeyboardInterrupt`` that IPython shows as one line, ``KeyboardInterrupt: Interrupted: <what>``.

    Raise it (``from None``) from a magic that caught Ctrl-C: the cell still ends with
    ``KeyboardInterrupt`` (a headless run and nbclient see the usual error name), but its traceback
    is this one line naming what was stopped, not the frames of holon_nb's internals (IPython's
    ``_render_traceback_`` protocol).

    Args:
        what: What the interrupt stopped and what keeps running, e.g. ``stopped waiting for task_…``.
    """
    exc = KeyboardInterrupt(f"Interrupted: {what}")
    exc._render_traceback_ = lambda: [f"KeyboardInterrupt: Interrupted: {what}"]  # type: ignore[attr-defined]
    return exc


class Note:
    """A one-line text output (``text/plain`` and a muted ``text/html`` line).

    Args:
        text: The text shown.
    """

    def __init__(self, text: str):
        self.text = text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self.text, "text/html": card_root(html.escape(self.text), muted_style(), "holon-note")}

    def __repr__(self) -> str:
        return self.text


#: Widest cell line of a table's ``text/plain`` (keeps its lines near 160 characters).
CELL_CHARS = 56
#: Most lines a wrapped cell takes; the rest of a longer value is clipped (``… [+N chars]``).
CELL_LINES = 6


def _cell_lines(value: str) -> list[str]:
    """A cell's text on lines of at most :data:`CELL_CHARS` characters (:func:`~holon_nb.render.human.wrap`,
    as a receipt's hints); a short one as it is."""
    if len(value) <= CELL_CHARS and "\n" not in value:
        return [value]
    return wrap(value, CELL_CHARS, CELL_LINES).split("\n")


class Table:
    """A small table shown as aligned ``text/plain`` and an HTML ``<table>``.

    Args:
        title: One line above the table.
        columns: Column headers.
        rows: Rows of cell values (converted with ``str``).
        data: Optional JSON value added as ``application/vnd.holon.table+json`` (not
            ``application/json``, which JupyterLab would render as a tree instead of the table).
    """

    def __init__(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], data: Any = None):
        self.title = title
        self.columns = list(columns)
        self.rows = [[("" if v is None else str(v)) for v in row] for row in rows]
        self.data = data

    def text(self) -> str:
        """The ``text/plain`` rendering; a cell over :data:`CELL_CHARS` wraps onto more lines of its row
        (at most :data:`CELL_LINES`, then it is clipped with ``… [+N chars]``).

        The HTML table and the JSON data keep every value whole.
        """
        cells = [[_cell_lines(v) for v in row] for row in self.rows]
        widths = [max([len(c), *(len(line) for r in cells for line in r[i])]) for i, c in enumerate(self.columns)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        lines = [self.title, fmt.format(*self.columns).rstrip(), fmt.format(*("-" * w for w in widths))]
        for row in cells:
            for k in range(max(len(c) for c in row)):
                lines.append(fmt.format(*(c[k] if k < len(c) else "" for c in row)).rstrip())
        return "\n".join(lines)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        head = "".join(f"<th style='text-align:left'>{html.escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:left'>{html.escape(v)}</td>" for v in row) + "</tr>"
            for row in self.rows
        )
        bundle: dict[str, Any] = {
            "text/plain": self.text(),
            "text/html": card_root(
                f"<b>{html.escape(self.title)}</b><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>",
                classes="holon-table",
            ),
        }
        if self.data is not None:
            bundle["application/vnd.holon.table+json"] = self.data
        return bundle


def show_result(result: ToolResult, raise_on_error: bool = False) -> None:
    """Display a tool result's mimebundle in the current cell; optionally raise for an error.

    Args:
        result: What ``Runtime.call`` returned.
        raise_on_error: Raise after displaying when the envelope is an error.

    Raises:
        ToolCallError: when ``raise_on_error`` and ``result`` is an error envelope; it
            carries the scrubbed envelope (D12), since its traceback is saved in the notebook.
    """
    display(result)
    if raise_on_error and not result.ok:
        raise ToolCallError(result.display_envelope)


def raise_if_command_failed(result: ToolResult) -> None:
    """Raise :class:`CommandFailed` when :func:`command_failures` finds any in ``result`` (scrubbed, D12).

    Raises:
        CommandFailed: naming each failed command and how it ended.
    """
    failures = command_failures(result.display_envelope)
    if failures:
        raise CommandFailed(result.display_envelope, failures)
