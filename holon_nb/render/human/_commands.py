"""Human receipt bodies of the command tools: ExecCommand, ExecCommandBatch, TaskOutput.

Command output is shown as the terminal showed it (escape sequences removed,
``\\r``/``\\b`` already applied when the preview was cut), four spaces in,
lines kept whole; truncation, lossy decoding and log caps are stated in
``[…]`` lines with the artifact path. See :mod:`holon_nb.render.human._builders`.
"""

from __future__ import annotations

from typing import Any

from .._ansi import strip_ansi
from ._builders import aligned, clip, wrap

__all__ = ["exec_human", "batch_human", "task_output_human", "capped_note"]

_IN = "  "


def _block(label: str, text: str | None) -> list[str]:
    if text is None or not text.strip():
        return []
    return [f"{_IN}{label}:", *(f"{_IN * 2}{line}".rstrip() for line in strip_ansi(text).rstrip("\n").splitlines())]


_CAPPED_BY = {
    "max_home_bytes": "the holon home reached its size cap, max_home_bytes",
    "max_task_log_bytes": "the log reached max_task_log_bytes",
    "write_failed": "writing the file failed",
}


def capped_note(r: dict[str, Any], key: str = "output_capped_by") -> str:
    """`` (why)`` for a result whose output file stopped growing (``r[key]``: ``max_home_bytes``, …); "" without one."""
    why = r.get(key)
    return f" ({_CAPPED_BY.get(why, why)})" if why else ""


def stream_notices(r: dict[str, Any], name: str, *, bare_truncation: bool = False) -> list[str]:
    """Plain-text notices about stream ``name`` (``stdout``/``stderr``) of a command result: cut to an
    artifact (how much is not shown, where the rest is), decoded lossily. With ``bare_truncation`` also
    a result ``truncated`` without an artifact. Shared by the human receipt and the HTML card."""
    out = []
    if r.get(f"{name}_artifact") is not None:
        total = r.get(f"{name}_chars", 0)
        omitted = total - r.get(f"{name}_kept_chars", total)
        arts = r.get("artifacts") or []
        index = r[f"{name}_artifact"]
        path = arts[index]["path"] if isinstance(index, int) and index < len(arts) else "(artifact)"
        out.append(f"{name} truncated: {omitted} of {total} characters not shown; full output: {path}")
        if r.get(f"{name}_artifact_bytes_dropped"):  # issue 25 item 3a: the artifact itself was cut
            dropped = r[f"{name}_artifact_bytes_dropped"]
            note = capped_note(r, f"{name}_artifact_capped_by")
            out.append(f"{name} artifact incomplete: its last {dropped} bytes were not kept{note}")
    elif bare_truncation and r.get("truncated") and r.get(f"{name}_preview"):
        out.append(f"{name} truncated")
    if r.get(f"{name}_lossy"):
        out.append(f"{name} decoded lossily: invalid UTF-8 bytes were replaced by U+FFFD")
    return out


def _stream_notices(r: dict[str, Any], name: str) -> list[str]:
    return [f"{_IN * 2}[{notice}]" for notice in stream_notices(r, name)]


def _command_line(cmd: Any) -> list[str]:
    return [f"{_IN}command  {clip(strip_ansi(str(cmd)), 150)}"] if cmd else []


def _completed(r: dict[str, Any]) -> list[str]:
    lines = [f"{_IN}exit status  {r['exit_status'] if r.get('exit_status') is not None else 'none (signal)'}"]
    shown = False
    for name in ("stdout", "stderr"):
        block = _block(name, r.get(f"{name}_preview"))
        if block:
            lines += block + _stream_notices(r, name)
            shown = True
    if not shown:
        lines.append(f"{_IN}(no output)")
    return lines


#: display-only key (never in a stored envelope): the cell's task view, and then its final receipt, shows
#: the output, so the promotion receipt does not repeat it (issue 11, item 5)
OUTPUT_SHOWN_BELOW = "_output_shown_below"


def exec_human(r: dict[str, Any]) -> list[str]:
    """ExecCommand: exit status and output, or the task it became (with its output so far)."""
    disp = r.get("disposition")
    if disp == "completed":
        return _completed(r)
    task = r.get("task_handle") or {}
    if disp == "promoted_to_task":  # its status at promotion ("running") would stay in the cell, stale
        lines = [f"{_IN}task         {task.get('task_id', '?')} (a background task now)"]
    else:
        lines = [f"{_IN}task         {task.get('task_id', '?')} ({task.get('status', '?')})"]
    if disp == "promoted_to_task" and r.get(OUTPUT_SHOWN_BELOW):
        return lines + [f"{_IN}(its output is in the task's view below, then in its final receipt)"]
    if disp == "promoted_to_task":
        block = _block("output before promotion", r.get("initial_output_preview"))
        lines += block or [f"{_IN}(no output before promotion)"]
        if r.get("initial_output_truncated"):
            lines.append(f"{_IN * 2}[initial output truncated]")
        return lines
    # already_running: one aligned block, the instructions (what to do instead) whole
    pairs = [("task", f"{task.get('task_id', '?')} ({task.get('status', '?')})")]
    cmd = (r.get("command") or {}).get("cmd")
    if cmd:
        pairs.append(("command", clip(strip_ansi(str(cmd)), 150)))
    pairs += [(key, wrap(r[key])) for key in ("summary", "instructions") if r.get(key)]
    return aligned(pairs, _IN)


def batch_human(r: dict[str, Any]) -> list[str]:
    """ExecCommandBatch: the counts, then each item: index, status, exit, command and its output."""
    n = r.get("item_count", 0)
    counts = [f"{r.get('completed_count', 0)}/{n} completed"]
    counts += [f"{r[k]} {k[:-6]}" for k in ("failed_count", "rejected_count", "skipped_count") if r.get(k)]
    lines = [f"{_IN}items  {', '.join(counts)}"]
    for item in r.get("items") or []:
        res = item.get("result") or {}
        exit_status = res.get("exit_status")
        tail = f" exit {exit_status}" if exit_status is not None else ""
        lines.append(f"{_IN}[{item.get('index')}] {item.get('status')}{tail}: {clip(str(item.get('cmd', '')), 120)}")
        if item.get("error_kind"):
            lines.append(f"{_IN * 2}{item['error_kind']}: {clip(str(item.get('error_message', '')), 140)}")
        for name in ("stdout", "stderr"):
            preview = res.get(f"{name}_preview")
            if preview and preview.strip():
                lines += [f"{_IN * 2}{line}".rstrip() for line in strip_ansi(preview).rstrip("\n").splitlines()]
                lines += _stream_notices(res, name)
    return lines


def task_output_human(r: dict[str, Any]) -> list[str]:
    """TaskOutput: retrieval status, the task's state and exit status, its output and notices."""
    t = r.get("task") or {}
    exit_status = f", exit {t['exit_status']}" if t.get("exit_status") is not None else ""
    lines = [
        f"{_IN}task       {t.get('task_id', '?')} ({t.get('status', '?')}{exit_status})",
        f"{_IN}retrieval  {r.get('retrieval_status', '?')}",
    ]
    if t.get("summary"):
        lines.append(f"{_IN}summary    {clip(strip_ansi(str(t['summary'])), 140)}")
    block = _block("output", t.get("output_preview"))
    lines += block or [f"{_IN}(no output)"]
    if t.get("output_truncated"):
        total = t.get("output_total_chars", len(t.get("output_preview") or ""))
        omitted = total - t.get("output_kept_chars", total)
        where = f"; full output: {t['artifacts'][0]['path']}" if t.get("artifacts") else ""
        lines.append(f"{_IN * 2}[output truncated: {omitted} of {total} characters not shown{where}]")
    if t.get("output_lossy"):
        lines.append(f"{_IN * 2}[output decoded lossily: invalid UTF-8 bytes were replaced by U+FFFD]")
    if t.get("output_bytes_dropped"):
        lines.append(f"{_IN * 2}[output log capped: {t['output_bytes_dropped']} bytes were not kept{capped_note(t)}]")
    return lines
