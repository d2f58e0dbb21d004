"""Human receipts: the readable text of a tool result (a notebook's ``text/plain``).

:mod:`.builders` holds the small renderers a tool declaration composes
(``ToolSpec.human``) and :func:`render_human`; :mod:`.commands` the bodies of
the command tools' receipts. No Jupyter import; pure functions of an envelope.
"""

from ._builders import (
    MAX_LINE,
    PROSE_LINE,
    Renderer,
    aligned,
    clip,
    duration_text,
    error_lines,
    fields,
    generic,
    headline,
    receipt_body,
    record,
    render_human,
    shape,
    shorten,
    shorten_paths,
    shorten_value,
    shown_status,
    table,
    text_block,
    todos,
    wrap,
)
from ._commands import batch_human, capped_note, exec_human, task_output_human
from ._inputs import glance, pretty_input

__all__ = [
    "MAX_LINE",
    "PROSE_LINE",
    "Renderer",
    "aligned",
    "capped_note",
    "clip",
    "duration_text",
    "error_lines",
    "fields",
    "generic",
    "headline",
    "receipt_body",
    "record",
    "render_human",
    "shape",
    "shorten",
    "shorten_paths",
    "shorten_value",
    "shown_status",
    "table",
    "text_block",
    "todos",
    "wrap",
    "batch_human",
    "exec_human",
    "task_output_human",
    "glance",
    "pretty_input",
]
