"""Human receipts: the text a person reads in a notebook (``text/plain``), built from an envelope.

The model reads ``ToolResult.receipt`` (the contract's rendering, unchanged);
a person reads this. Its rules:

- the first line names the tool, the status, the duration and the summary:
  ``ListTasks · success · 4 ms — 2 active tasks``;
- then the result's key fields, two spaces in, labels aligned; nested records
  indented further; lists of records as small tables;
- a long value is cut with a visible marker (``… [+123 chars]``); no line is
  longer than :data:`MAX_LINE` except lines of command output, which are kept
  as the terminal showed them (escape sequences removed);
- an error shows its kind, message, hint and the details that matter.

A tool's renderer is data on its declaration (``ToolSpec.human``): a
function ``result dict -> body lines``, composed from the small builders here
(:func:`fields`, :func:`table`, :func:`record`, :func:`todos`,
:func:`shape`), shared where result shapes repeat. Tools without one get
:func:`generic`. Everything is a pure function of the envelope, so live views
can call :func:`render_human` too.

Example::

    text = render_human(result.display_envelope, duration_ms=12)
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .._ansi import strip_ansi

__all__ = [
    "MAX_LINE",
    "PROSE_LINE",
    "Renderer",
    "render_human",
    "headline",
    "shown_status",
    "duration_text",
    "error_lines",
    "generic",
    "fields",
    "table",
    "record",
    "todos",
    "shape",
    "text_block",
    "receipt_body",
    "clip",
    "shorten",
    "wrap",
    "aligned",
    "shorten_paths",
    "shorten_value",
]

#: Longest line of a human receipt, except command output lines.
MAX_LINE = 160
_VALUE = 100  # longest scalar value in a field line
_CELL = 48  # longest table cell
_ROWS = 25  # most table rows shown
_INDENT = "  "

#: A body renderer: the success ``result`` dict -> lines (each already indented).
Renderer = Callable[[dict[str, Any]], list[str]]


# ---------------------------------------------------------------- values


def clip(text: str, width: int) -> str:
    """``text`` on one line, cut to about ``width`` characters with a visible ``… [+N chars]`` marker."""
    one = " ".join(str(text).split("\n")) if "\n" in str(text) else str(text)
    if len(one) <= width:
        return one
    keep = max(width - 16, 8)
    return f"{one[:keep]}… [+{len(one) - keep} chars]"


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut at the last word boundary before ``width`` characters and ended with
    ``…`` when it was cut (a line of prose to glance at: a waking message, a title)."""
    one = " ".join(str(text).split())
    if len(one) <= width:
        return one
    cut = one[: width - 1]
    space = cut.rfind(" ")
    if space >= width // 2:  # a word boundary not too far back; else cut the long word itself
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def _scalar(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    return strip_ansi(str(value))


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _fmt(value: Any, width: int = _VALUE) -> str:
    if isinstance(value, list) and all(_is_scalar(v) for v in value):
        return clip(", ".join(_scalar(v) for v in value), width)
    if isinstance(value, (dict, list)):
        return clip(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str), width)
    return clip(_scalar(value), width)


def _label(key: str) -> str:
    return key.replace("_", " ")


def _get(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def aligned(pairs: Sequence[tuple[str, str]], indent: str) -> list[str]:
    """``label  value`` lines, values in one column; a value wrapped by :func:`wrap` keeps its lines in it."""
    if not pairs:
        return []
    width = min(max(len(k) for k, _ in pairs), 28)
    lines = []
    for k, v in pairs:
        if isinstance(v, _Prose) and not v.fixed:  # once: to the width the label column leaves
            room = max(PROSE_LINE - len(indent) - width - 2, 40)
            v = "\n".join(_wrap_lines(v.source, room, v.max_lines, v.keep_lines))
        first, *more = v.split("\n")  # a wrapped value (wrap): its lines align under the first
        lines.append(f"{indent}{k:<{width}}  {first}".rstrip())
        lines += [f"{indent}{'':<{width}}  {line}".rstrip() for line in more]
    return lines


#: A wrapped value's line, label column included, fits this many characters: about a notebook output's
#: width, so the front end does not wrap our wrapped lines a second time.
PROSE_LINE = 100


class _Prose(str):
    """A value :func:`wrap` wrapped: the text keeps its source, so :func:`aligned` can wrap it again to the
    width its label column leaves."""

    source: str
    max_lines: int
    keep_lines: bool
    fixed: bool


def _wrap_lines(text: str, width: int, max_lines: int, keep_lines: bool) -> list[str]:
    paragraphs = text.split("\n") if keep_lines else [text]
    lines: list[str] = []
    for para in paragraphs:
        one = " ".join(para.split())
        lines += textwrap.wrap(one, width, break_long_words=True, break_on_hyphens=False) or (
            [""] if keep_lines else []
        )
    while keep_lines and lines and not lines[-1]:
        lines.pop()
    if len(lines) > max_lines:
        if keep_lines:
            lines = [*lines[: max_lines - 1], f"… {len(lines) - max_lines + 1} more lines"]
        else:
            rest = " ".join(lines[max_lines - 1 :])
            lines = [*lines[: max_lines - 1], clip(rest, width)]
    return lines


def wrap(text: Any, width: int | None = None, max_lines: int = 4, keep_lines: bool = False) -> str:
    """``text`` on one line, or wrapped at word boundaries into at most ``max_lines`` lines (joined by
    newlines, for :func:`aligned`); what is left past them is clipped with the ``… [+N chars]`` marker.
    For prose a person must read whole: messages and hints.

    Args:
        text: The value.
        width: Line width in characters; None: what the label column leaves of :data:`PROSE_LINE`
            (decided by :func:`aligned`; 130 until then).
        max_lines: Most lines; past them the text is clipped (``keep_lines``: ``… N more lines``).
        keep_lines: Keep the text's own line breaks (an excerpt of a file in a hint), wrapping each line.
    """
    source = strip_ansi(str(text)) if text is not None else "none"
    source = source if keep_lines else _scalar(text)
    out = _Prose("\n".join(_wrap_lines(source, width or MAX_LINE - 30, max_lines, keep_lines)))
    out.source, out.max_lines, out.keep_lines, out.fixed = source, max_lines, keep_lines, width is not None
    return out


def _table(records: Sequence[dict[str, Any]], columns: Sequence[str], indent: str) -> list[str]:
    cols = [c for c in columns if any(_get(r, c) not in (None, "", [], {}) for r in records)] or list(columns[:1])
    cells = [[_fmt(_get(r, c), _CELL) if _get(r, c) is not None else "" for c in cols] for r in records[:_ROWS]]
    heads = [_label(c.split(".")[-1]) for c in cols]
    widths = [max([len(h), *(len(row[i]) for row in cells)]) for i, h in enumerate(heads)]
    lines = [indent + "  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=False)).rstrip()]
    lines += [indent + "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=False)).rstrip() for row in cells]
    if len(records) > _ROWS:
        lines.append(f"{indent}… {len(records) - _ROWS} more")
    return [clip(line, MAX_LINE) for line in lines]


# ---------------------------------------------------------------- builders


def fields(*paths: str, under: str | None = None, indent: str = _INDENT) -> Renderer:
    """A renderer of the given (dotted) fields of the result, or of its ``under`` object, aligned.

    ``"path:label"`` names a field's label; absent and null fields are left out.
    """

    def render(result: dict[str, Any]) -> list[str]:
        obj = _get(result, under) if under else result
        if not isinstance(obj, dict):
            return []
        pairs = []
        for spec in paths:
            path, _, label = spec.partition(":")
            value = _get(obj, path)
            if value is not None:
                pairs.append((label or _label(path.split(".")[-1]), _fmt(value)))
        return aligned(pairs, indent)

    return render


def table(
    key: str, *columns: str, title: str | None = None, empty: str | None = None, order: str | None = None
) -> Renderer:
    """A renderer of the list of records at ``key`` as a small table of ``columns`` (dotted paths).

    Columns empty in every row are left out; over 25 rows, the rest are counted. ``order``: a
    field to sort rows by for the reader (e.g. ``created_at``), when the result's own order is by
    random ids.
    """

    def render(result: dict[str, Any]) -> list[str]:
        records = [r for r in (_get(result, key) or []) if isinstance(r, dict)]
        if order:
            records.sort(key=lambda r: str(_get(r, order) or ""))
        if not records:
            return [f"{_INDENT}{empty}"] if empty else []
        head = [f"{_INDENT}{title or _label(key.split('.')[-1])} ({len(records)}):"]
        return head + _table(records, columns, _INDENT * 2)

    return render


def record(key: str, *paths: str, title: str | None = None) -> Renderer:
    """A renderer of one nested record: a ``title:`` line, then its fields indented."""

    def render(result: dict[str, Any]) -> list[str]:
        obj = _get(result, key)
        if not isinstance(obj, dict):
            return []
        body = fields(*paths, indent=_INDENT * 2)(obj) if paths else generic(obj, _INDENT * 2)
        return [f"{_INDENT}{title or _label(key.split('.')[-1])}:", *body] if body else []

    return render


_TODO_MARK = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}


def todos(key: str) -> Renderer:
    """A renderer of a todo list (``{text, state}`` items) as ``[x]`` / ``[>]`` / ``[ ]`` lines."""

    def render(result: dict[str, Any]) -> list[str]:
        items = [t for t in (_get(result, key) or []) if isinstance(t, dict)]
        return [
            f"{_INDENT * 2}{_TODO_MARK.get(str(t.get('state')), '[?]')} {clip(_scalar(t.get('text')), _VALUE)}"
            for t in items[:_ROWS]
        ]

    return render


def text_block(path: str, label: str, max_lines: int = 40) -> Renderer:
    """A renderer of a multi-line text value (a preview, a report) under ``label:``, 4 spaces in."""

    def render(result: dict[str, Any]) -> list[str]:
        text = _get(result, path)
        if not isinstance(text, str) or not text.strip():
            return []
        lines = strip_ansi(text).rstrip("\n").splitlines()
        out = [f"{_INDENT}{label}:", *(f"{_INDENT * 2}{clip(line, MAX_LINE - 4)}" for line in lines[:max_lines])]
        if len(lines) > max_lines:
            out.append(f"{_INDENT * 2}… {len(lines) - max_lines} more lines")
        return out

    return render


def receipt_body(render_receipt: Callable[[dict[str, Any], Any], str]) -> Renderer:
    """A renderer reusing a tool's own text receipt (already written for reading), indented, long lines cut."""

    def render(result: dict[str, Any]) -> list[str]:
        text = strip_ansi(render_receipt({"status": "success", "result": result}, None))
        return [f"{_INDENT}{clip(line, MAX_LINE - 2)}".rstrip() for line in text.splitlines()]

    return render


def shape(*parts: Renderer) -> Renderer:
    """The renderers ``parts`` one after another."""

    def render(result: dict[str, Any]) -> list[str]:
        return [line for part in parts for line in part(result)]

    return render


# ---------------------------------------------------------------- generic

_FIRST = ("id", "task_id", "agent_id", "name", "title", "status", "state", "kind", "objective", "summary")
_SKIP = frozenset({"command_diagnostics", "cmd_digest", "created_at", "updated_at", "hash"})


def _columns(records: Sequence[dict[str, Any]]) -> list[str]:
    keys: list[str] = []
    for r in records:
        keys += [k for k, v in r.items() if k not in keys and k not in _SKIP and _is_scalar(v)]
    ordered = [k for k in _FIRST if k in keys] + [k for k in keys if k not in _FIRST]
    return ordered[:6]


def generic(result: dict[str, Any], indent: str = _INDENT) -> list[str]:
    """Any result, readable: scalars aligned, nested records indented, lists of records as tables.

    Null, empty and bookkeeping fields (digests, timestamps of nested records) are left out;
    nesting deeper than three levels is shown as one clipped JSON line.
    """
    pairs, nested = [], []
    for key, value in result.items():
        if key in _SKIP or value in (None, "", [], {}):
            continue
        if _is_scalar(value) or (isinstance(value, list) and all(_is_scalar(v) for v in value)):
            pairs.append((_label(key), _fmt(value)))
        else:
            nested.append((key, value))
    lines = aligned(pairs, indent)
    for key, value in nested:
        if len(indent) >= 6:
            lines += aligned([(_label(key), _fmt(value))], indent)
        elif isinstance(value, dict):
            body = generic(value, indent + _INDENT)
            if body:
                lines += [f"{indent}{_label(key)}:", *body]
        else:
            records = [v for v in value if isinstance(v, dict)]
            if records:
                lines += [
                    f"{indent}{_label(key)} ({len(value)}):",
                    *_table(records, _columns(records), indent + _INDENT),
                ]
            else:
                lines += aligned([(_label(key), _fmt(value))], indent)
    return lines


# ---------------------------------------------------------------- envelope


_TASK_TOOLS = frozenset({"TaskOutput", "TaskStatus", "TaskStop"})  # tools whose subject is a task's state


def shown_status(env: dict[str, Any]) -> str:
    """The status a receipt's first line shows: the call's, except that a successful call reporting one
    task (TaskOutput, TaskStatus, TaskStop) shows the task's (``cancelled``, not ``success`` beside it)."""
    status = str(env.get("status", "?"))
    result = env.get("result")
    task = result.get("task") if isinstance(result, dict) and env.get("tool_name") in _TASK_TOOLS else None
    if status == "success" and isinstance(task, dict) and isinstance(task.get("status"), str):
        return task["status"]
    return status


def duration_text(ms: int) -> str:
    """A duration for a reader: ``850 ms``, ``2.9 s``, ``3 min 5 s``."""
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms // 60_000} min {ms % 60_000 // 1000} s"


def headline(env: dict[str, Any], duration_ms: int | None = None, ran_ms: int | None = None) -> str:
    """The first line: ``Tool · status · N ms — summary`` (clipped to :data:`MAX_LINE`).

    Args:
        env: The envelope.
        duration_ms: The call's duration.
        ran_ms: For a task's final receipt: how long the task ran, shown (``ran 2.9 s``) instead of the
            call's duration (a final receipt is fetched in a few ms, after the task ended).
    """
    parts = [str(env.get("tool_name", "?")), shown_status(env)]
    if ran_ms is not None:
        parts.append(f"ran {duration_text(ran_ms)}")
    elif duration_ms is not None:
        parts.append(f"{duration_ms} ms")
    line = " · ".join(parts)
    summary = env.get("summary_text")
    if summary:
        line += f" — {strip_ansi(str(summary))}"
    return clip(line, MAX_LINE)


_DETAIL_SKIP = frozenset({"field", "parse_error", "tool_name"})


def error_lines(err: dict[str, Any], summary: str | None = None) -> list[str]:
    """Body lines of an error: kind, message (when not the summary), field, parse error, hint, details."""
    raw_details = err.get("details")
    details: dict[str, Any] = raw_details if isinstance(raw_details, dict) else {}
    pairs = [("kind", _fmt(err.get("kind")))]
    if err.get("message") and err.get("message") != summary:
        pairs.append(("message", wrap(err["message"])))
    if isinstance(details.get("field"), str):
        pairs.append(("field", details["field"]))
    if isinstance(details.get("parse_error"), str):
        pairs.append(("parse error", wrap(details["parse_error"])))
    if err.get("recovery_hint"):
        pairs.append(("hint", wrap(err["recovery_hint"], max_lines=16, keep_lines=True)))  # an excerpt keeps its lines
    pairs.append(("retryable", "yes" if err.get("retryable") else "no"))
    lines = aligned(pairs, _INDENT)
    rest = {k: v for k, v in details.items() if k not in _DETAIL_SKIP}
    if rest:
        lines += [f"{_INDENT}details:", *generic(rest, _INDENT * 2)]
    return lines


def render_human(
    env: dict[str, Any],
    duration_ms: int | None = None,
    registry: Any = None,
    paths: Iterable[tuple[str, str]] = (),
    ran_ms: int | None = None,
) -> str:
    """The human receipt of an envelope (``text/plain`` of a notebook output).

    Args:
        env: A (scrubbed) envelope: ``tool_name``, ``status``, ``summary_text``, ``result`` or ``error``.
        duration_ms: The call's duration, when known.
        registry: Where the tool's renderer is looked up (``.get(name) -> ToolSpec``; the caller
            passes its registry, since declarations import this module); None: :func:`generic`.
        paths: ``(absolute path, label)`` pairs shown shorter, e.g. ``(holon home, "<holon home>")``.
        ran_ms: For a task's final receipt, how long the task ran (see :func:`headline`).

    Returns:
        Text whose first line is :func:`headline`; never raises for an odd envelope
        (a renderer that fails falls back to :func:`generic`).
    """
    paths = tuple(paths)
    env = shorten_value(env, paths)  # before values are clipped, so a clipped value keeps its label
    lines = [headline(env, duration_ms, ran_ms)]
    result, err = env.get("result"), env.get("error")
    if isinstance(err, dict):
        lines += error_lines(err, env.get("summary_text"))
    elif isinstance(result, dict):
        spec = registry.get(str(env.get("tool_name"))) if registry is not None else None
        renderer = getattr(spec, "human", None) or generic
        try:
            lines += renderer(result)
        except Exception:  # a renderer bug must not hide the receipt
            lines += generic(result)
    return shorten_paths("\n".join(lines), paths)


def shorten_value(value: Any, paths: Iterable[tuple[str, str]]) -> Any:
    """A JSON value with :func:`shorten_paths` applied to every string in it."""
    paths = tuple(paths)
    if not paths:
        return value
    if isinstance(value, str):
        return shorten_paths(value, paths)
    if isinstance(value, dict):
        return {k: shorten_value(v, paths) for k, v in value.items()}
    if isinstance(value, list):
        return [shorten_value(v, paths) for v in value]
    return value


def shorten_paths(text: str, paths: Iterable[tuple[str, str]]) -> str:
    """Replace each absolute path prefix by its label (``/x/home/a`` -> ``<holon home>/a``), longest first."""
    for path, label in sorted(paths, key=lambda p: len(p[0]), reverse=True):
        path = str(path).rstrip("/")
        if len(path) > 1 and path in text:
            prefix = re.escape(path)
            text = re.sub(prefix + r"/", label + "/" if label else "", text)
            text = re.sub(prefix + r"(?![\w.-])", label or ".", text)
    return text
