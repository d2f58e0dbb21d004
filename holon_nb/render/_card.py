"""The HTML card of a receipt (pure string building; no Jupyter import).

``render_card`` turns a (scrubbed) envelope into a readable card: tool,
status pill, duration, key fields (exit status, task id, disposition,
retrieval status, batch counts), the command output with truncation and
lossy-decoding notices marked, and for errors the kind, message and recovery
hint. Every value is HTML-escaped; the model-visible text receipt is kept in
a collapsed section below.

Example::

    html = render_card(result.display_envelope, result.full_receipt, result.duration_ms)
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from typing import Any

from ._ansi import ansi_to_html
from ._diff_view import render_file_diffs
from ._palette import css, fg, muted_style
from .human import duration_text, shorten_paths, shorten_value, shown_status
from .human._commands import OUTPUT_SHOWN_BELOW, capped_note, stream_notices

__all__ = ["CARD_CLASS", "MATH_IGNORE", "TAIL_BOX", "card_root", "render_card"]

_COLOURS = {"success": "#1a7f37", "error": "#cf222e", "deferred": "#9a6700"}
_TASK_COLOURS = {
    "completed": "#1a7f37",
    "failed": "#cf222e",
    "cancelled": "#9a6700",
    "interrupted": "#cf222e",
    "running": "#0969da",
    "queued": "#57606a",
    "cancelling": "#9a6700",
}
_MUTED = muted_style()
_PRE = (
    "margin:2px 0;padding:4px 6px;background:rgba(127,127,127,0.08);white-space:pre-wrap;"
    "word-break:break-word;max-height:28em;overflow:auto"
)
_NOTICE = f"color:{fg('warn')};font-style:italic"

#: Classes MathJax 2 (``tex2jax_ignore``) and MathJax 3 (``mathjax_ignore``) skip, with all they hold: command
#: output such as ``\\[ … \\]`` or ``$5 … $6`` is shown as printed, never typeset.
MATH_IGNORE = "tex2jax_ignore mathjax_ignore"
#: The class scoping :data:`_CSS`; every card and live view's root element carries it.
CARD_CLASS = "holon-card"
#: The style of a capped, scrollable output box (the final receipt's and the live tail's).
TAIL_BOX = _PRE
# Scoped under CARD_CLASS, so nothing else on the page changes. JupyterLab's rendered-HTML style right-aligns
# table rows and cells (``.jp-RenderedHTMLCommon td``) and centres tables; a widget's HTML gets a 28 px line height
# (double-spaced wrapped text). Lab's cell rule is ``:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td``
# (two classes, one type): ``div.holon-card.mathjax_ignore td`` outranks it (two classes, two types), while an
# element's own inline style (a diff's right-aligned line numbers) still wins.
_R = f"div.{CARD_CLASS}.mathjax_ignore"
_CSS = (
    f"<style>{css(_R)}{_R} table{{border-collapse:collapse;margin:2px 0;table-layout:auto}}"
    f"{_R} tr,{_R} th,{_R} td{{text-align:left;vertical-align:top;padding:1px 12px 1px 0;line-height:normal;"
    f"white-space:normal}}"
    f"{_R} th{{font-weight:bold;border-bottom:1px solid rgba(127,127,127,0.4)}}"
    f"{_R},{_R} div,{_R} p,{_R} span,{_R} li,{_R} summary,{_R} code{{line-height:normal}}"
    f"{_R} p,{_R} ul{{margin:0}}</style>"
)


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def card_root(inner: str, style: str = "", classes: str = "") -> str:
    """Wrap an HTML fragment in the root every card and live view shares.

    The root ``<div>`` carries :data:`CARD_CLASS`, :data:`MATH_IGNORE` (MathJax leaves it alone) and
    ``classes``; a ``<style>`` scoped under :data:`CARD_CLASS` left-aligns table cells and gives wrapped
    text a normal line height without margins, in JupyterLab, Notebook 7 and static HTML alike.

    Args:
        inner: The (already escaped) fragment.
        style: Inline style of the root, e.g. a coloured left border.
        classes: Further class names of the root, space-separated.

    Returns:
        ``<div class='holon-card tex2jax_ignore mathjax_ignore …' style='…'><style>…</style>inner</div>``.
    """
    names = " ".join(n for n in (CARD_CLASS, MATH_IGNORE, classes) if n)
    style_attr = f" style='{style}'" if style else ""
    return f"<div class='{names}'{style_attr}>{_CSS}{inner}</div>"


def _pill(text: str, colour: str) -> str:
    return (
        f"<span style='background:{colour};color:#fff;border-radius:8px;padding:0 7px;font-size:90%'>{_e(text)}</span>"
    )


def _pre(text: str) -> str:
    return f"<pre style='{_PRE}'>{ansi_to_html('' if text is None else str(text))}</pre>"


def _notice(text: str) -> str:
    return f"<div style='{_NOTICE}'>{_e(text)}</div>"


def _section(label: str, body: str) -> str:
    return f"<div style='margin-top:4px'><span style='{_MUTED}'>{_e(label)}</span>{body}</div>"


def _details(label: str, body: str) -> str:
    return f"<details style='margin-top:4px'><summary style='{_MUTED}'>{_e(label)}</summary>{body}</details>"


# ---------------------------------------------------------------- key fields


def _task_of(r: dict[str, Any]) -> dict[str, Any]:
    task = r.get("task") or r.get("task_handle")
    return task if isinstance(task, dict) else {}


def _batch_counts(r: dict[str, Any]) -> str:
    n = r.get("item_count", 0)
    parts = [f"{r.get('completed_count', 0)}/{n} completed"]
    parts += [f"{r[k]} {k[:-6]}" for k in ("failed_count", "rejected_count", "skipped_count") if r.get(k)]
    return ", ".join(parts)


def _facts(r: dict[str, Any]) -> list[tuple[str, str]]:
    """Key fields of a success payload, as (label, html value) pairs."""
    facts: list[tuple[str, str]] = []
    if "disposition" in r:
        facts.append(("disposition", _e(r["disposition"])))
    if "exit_status" in r:
        facts.append(("exit status", _e(r["exit_status"] if r["exit_status"] is not None else "none (signal)")))
    task = _task_of(r)
    if task.get("task_id") or task.get("id"):
        facts.append(("task", f"<code>{_e(task.get('task_id') or task.get('id'))}</code>"))
    # a promoted command's handle says "running" at promotion; a card cannot keep that current, and the live
    # view (then the final receipt) below it shows the task's real status
    if task.get("status") and r.get("disposition") != "promoted_to_task":
        facts.append(("task status", _pill(task["status"], _TASK_COLOURS.get(task["status"], "#57606a"))))
    if task.get("exit_status") is not None and "exit_status" not in r:
        facts.append(("exit status", _e(task["exit_status"])))
    if "retrieval_status" in r:
        facts.append(("retrieval", _e(r["retrieval_status"])))
    if "changed_file_count" in r:
        facts.append(("files changed", _e(r["changed_file_count"])))
    if "item_count" in r:
        facts.append(("items", _e(_batch_counts(r))))
    if "total_active" in r:
        facts.append(("active tasks", _e(f"{r.get('returned', 0)} shown of {r['total_active']}")))
    for key, label in (
        ("accepted_input", "input accepted"),
        ("bytes_written", "bytes written"),
        ("stop_requested", "stop requested"),
        ("force_stop_requested", "forced"),
    ):
        if key in r:
            facts.append((label, _e(r[key])))
    return facts


def _facts_html(facts: Iterable[tuple[str, str]]) -> str:
    items = [f"<span style='margin-right:12px'><span style='{_MUTED}'>{_e(k)}:</span> {v}</span>" for k, v in facts]
    return f"<div style='margin-top:2px'>{''.join(items)}</div>" if items else ""


# ---------------------------------------------------------------- outputs


def _stream_notices(r: dict[str, Any], name: str) -> list[str]:
    return [_notice(text) for text in stream_notices(r, name, bare_truncation=True)]


def _command_outputs(r: dict[str, Any]) -> str:
    parts = []
    for name in ("stdout", "stderr"):
        preview = r.get(f"{name}_preview")
        if preview is not None and preview.strip():
            parts.append(_section(name, _pre(preview) + "".join(_stream_notices(r, name))))
    if r.get("disposition") == "completed" and not parts:
        parts.append(f"<div style='{_MUTED}'>(no output)</div>")
    return "".join(parts)


def _initial_output(r: dict[str, Any]) -> str:
    if r.get(OUTPUT_SHOWN_BELOW):
        return f"<div style='{_MUTED}'>(its output is in the task's view below, then in its final receipt)</div>"
    preview = r.get("initial_output_preview")
    if not preview or not preview.strip():
        return f"<div style='{_MUTED}'>(no output captured before promotion)</div>"
    notice = _notice("initial output truncated") if r.get("initial_output_truncated") else ""
    return _section("initial output", _pre(preview) + notice)


def _task_output(task: dict[str, Any]) -> str:
    preview = task.get("output_preview") or ""
    if not preview.strip():
        return f"<div style='{_MUTED}'>(no output)</div>"
    notices = []
    if task.get("output_truncated"):
        total = task.get("output_total_chars", len(preview))
        omitted = total - task.get("output_kept_chars", len(preview))
        where = f"; full output: {task['artifacts'][0]['path']}" if task.get("artifacts") else ""
        notices.append(_notice(f"output truncated: {omitted} of {total} characters not shown{where}"))
    if task.get("output_lossy"):
        notices.append(_notice("output decoded lossily: invalid UTF-8 bytes were replaced by U+FFFD"))
    if task.get("output_bytes_dropped"):
        notices.append(
            _notice(f"output log capped: {task['output_bytes_dropped']} bytes were not kept{capped_note(task)}")
        )
    return _section("output", _pre(preview.rstrip("\n")) + "".join(notices))


def _batch_items(r: dict[str, Any]) -> str:
    rows = []
    for item in r.get("items") or []:
        res = item.get("result") or {}
        status = item.get("status", "")
        colour = {"completed": "#1a7f37", "failed": "#cf222e"}.get(status, "#9a6700")
        exit_status = res.get("exit_status", "") if res else ""
        detail = _command_outputs(res) if res else ""
        if item.get("error_kind"):
            detail += _notice(f"{item['error_kind']}: {item.get('error_message', '')}")
        cmd = str(item.get("cmd", ""))
        rows.append(
            f"<tr><td>{_e(item.get('index'))}</td><td><code>{_e(cmd[:120])}</code>"
            f"{'…' if len(cmd) > 120 else ''}{detail}</td><td>{_pill(status, colour)}</td>"
            f"<td>{_e(exit_status)}</td></tr>"
        )
    head = "<tr><th>#</th><th style='text-align:left'>command</th><th>status</th><th>exit</th></tr>"
    return f"<table style='margin-top:4px'>{head}{''.join(rows)}</table>" if rows else ""


def _task_list(r: dict[str, Any]) -> str:
    rows = [
        f"<tr><td><code>{_e(t.get('id'))}</code></td><td>{_e(t.get('status'))}</td>"
        f"<td style='text-align:left'>{_e(t.get('summary'))}</td></tr>"
        for t in r.get("tasks") or []
    ]
    if not rows:
        return f"<div style='{_MUTED}'>(no active tasks)</div>"
    head = "<tr><th>task</th><th>status</th><th style='text-align:left'>summary</th></tr>"
    return f"<table style='margin-top:4px'>{head}{''.join(rows)}</table>"


def _task_command(task: dict[str, Any]) -> str:
    cmd = task.get("command") or {}
    if not isinstance(cmd, dict) or not cmd.get("cmd"):
        return ""
    extra = ", ".join(f"{k}={cmd[k]}" for k in ("workdir", "accepts_input", "input_target") if cmd.get(k) is not None)
    return _section("command", _pre(cmd["cmd"]) + (f"<div style='{_MUTED}'>{_e(extra)}</div>" if extra else ""))


def _body(tool: str, r: dict[str, Any]) -> str:
    """The output part of a success card, chosen by the payload's shape."""
    if "changed_files" in r:
        return render_file_diffs(r["changed_files"]) + _diagnostics(r)
    if tool == "ExecCommand" or ("disposition" in r and ("stdout_preview" in r or "task_handle" in r)):
        return _initial_output(r) if r.get("disposition") == "promoted_to_task" else _command_outputs(r)
    if "items" in r and "item_count" in r:
        return _batch_items(r)
    if "retrieval_status" in r:
        return _task_output(_task_of(r))
    if "tasks" in r and "total_active" in r:
        return _task_list(r)
    task = _task_of(r)
    if task.get("command"):
        return _task_command(task)
    return ""


def _diagnostics(r: dict[str, Any]) -> str:
    items = [d for d in r.get("diagnostics") or [] if isinstance(d, dict)]
    return "".join(_notice(f"{d.get('kind')} on {d.get('path') or 'unknown path'}: {d.get('message')}") for d in items)


def _error(err: dict[str, Any], summary: Any = None) -> str:
    """The error part of a card; the message only when the headline's summary does not already say it."""
    details = err.get("details")
    field = details.get("field") if isinstance(details, dict) else None
    hint = err.get("recovery_hint")
    message = err.get("message")
    said = not message or message == summary
    parts = [
        f"<div><b>{_e(err.get('kind'))}</b>" + ("" if said else f": {_e(message)}") + "</div>",
        f"<div><span style='{_MUTED}'>field:</span> <code>{_e(field)}</code></div>" if isinstance(field, str) else "",
        (
            f"<div><span style='{_MUTED}'>parse error:</span> <code>{_e(details['parse_error'])}</code></div>"
            if isinstance(details, dict) and isinstance(details.get("parse_error"), str)
            else ""
        ),
        f"<div style='white-space:pre-wrap'><span style='{_MUTED}'>hint:</span> {_e(hint)}</div>" if hint else "",
        f"<div style='{_MUTED}'>retryable: {'yes' if err.get('retryable') else 'no'}</div>",
    ]
    if details:
        parts.append(_details("details", _pre(json.dumps(details, indent=2, sort_keys=True, default=str))))
    return "".join(parts)


def render_card(
    env: dict[str, Any],
    receipt: str,
    duration_ms: int | None = None,
    human: str | None = None,
    paths: Iterable[tuple[str, str]] = (),
    ran_ms: int | None = None,
) -> str:
    """Render a readable HTML card of one tool result.

    Args:
        env: The scrubbed envelope (``tool_name``, ``status``, ``summary_text``,
            ``result`` or ``error``).
        receipt: The scrubbed model-visible text receipt (shown collapsed).
        duration_ms: Call duration in milliseconds, if known.
        human: The human receipt (:func:`holon_nb.render.human.render_human`); its field lines
            are the card's body for a result the card has no dedicated view of.
        paths: ``(absolute path, label)`` pairs shown shorter (``<holon home>/…``, workspace-relative),
            in the receipt a model sees too: a saved card never holds a run's temporary directory.
        ran_ms: For a task's final receipt, how long the task ran (shown instead of ``duration_ms``).

    Returns:
        An HTML fragment; every value in it is escaped.
    """
    paths = tuple(paths)
    env, receipt = shorten_value(env, paths), shorten_paths(receipt, paths)
    status = shown_status(env)
    colour = _COLOURS.get(status) or _TASK_COLOURS.get(status, "#57606a")
    tool = str(env.get("tool_name", ""))
    head = f"<b>{_e(tool)}</b> {_pill(status, colour)}"
    if ran_ms is not None:
        head += f" <span style='{_MUTED}'>ran {_e(duration_text(ran_ms))}</span>"
    elif duration_ms is not None:
        head += f" <span style='{_MUTED}'>{_e(duration_ms)} ms</span>"
    if env.get("summary_text"):
        head += f" <span>— {_e(env['summary_text'])}</span>"
    result = env.get("result")
    body = ""
    if isinstance(result, dict):
        body = _facts_html(_facts(result)) + _body(tool, result)
        fields = "\n".join(line[2:] for line in (human or "").splitlines()[1:])
        if fields.strip() and not _body(tool, result):
            body += _pre(fields)
    if isinstance(env.get("error"), dict):
        body += _error(env["error"], env.get("summary_text"))
    body += _details("what the model sees", _pre(receipt))
    return card_root(
        f"<div>{head}</div>{body}", f"border-left:3px solid {colour};padding:4px 8px;margin:2px 0", "holon-receipt"
    )
