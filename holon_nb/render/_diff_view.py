"""A coloured HTML view of a unified diff (pure string building; no Jupyter import).

ApplyPatch results carry one normalised ``diff_preview`` per changed file
(commands spec §10.7: ``--- a/…`` / ``+++ b/…`` headers, hunks, at most 80
lines then a ``... diff truncated`` line). ``render_diff`` turns one such
text into a table with old and new line numbers, removed lines red, added
lines green, hunk headers muted. Every value is HTML-escaped.

Example::

    html = render_diff("--- a/a.txt\\n+++ b/a.txt\\n@@ -1,2 +1,2 @@\\n one\\n-two\\n+TWO\\n")
"""

from __future__ import annotations

import html
import re
from typing import Any

from ._palette import fg

__all__ = ["render_diff", "render_file_diffs"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_CELL = "padding:0 6px;text-align:left;white-space:pre-wrap;word-break:break-word;font-family:monospace;font-size:90%"
_NUM = f"padding:0 6px;text-align:right;color:{fg('muted')};font-family:monospace;font-size:85%;user-select:none"
_ROW = {"+": "background:rgba(26,127,55,0.15)", "-": "background:rgba(207,34,46,0.15)", " ": ""}
_ACTION = {"add": ("A", "#1a7f37"), "modify": ("M", "#0969da"), "delete": ("D", "#cf222e"), "move": ("R", "#8250df")}


def _e(text: object) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def render_diff(diff: str) -> str:
    """Render one unified diff as an HTML table.

    Args:
        diff: Unified diff text (headers optional); ``\\`` marker lines and a trailing
            ``... diff truncated`` line are shown as notes.

    Returns:
        An HTML ``<table>`` fragment (empty string for an empty diff).
    """
    rows: list[str] = []
    old = new = 0
    left_old = left_new = 0  # lines still expected in the current hunk (headers are advisory)
    for line in diff.splitlines():
        m = _HUNK.match(line)
        in_hunk = left_old > 0 or left_new > 0
        if m and not in_hunk:
            counts = re.match(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@", line)
            old, new = int(m.group(1)), int(m.group(2))
            left_old = int(counts.group(1)) if counts and counts.group(1) is not None else 1
            left_new = int(counts.group(2)) if counts and counts.group(2) is not None else 1
            rows.append(
                f"<tr><td colspan='3' style='{_CELL};color:{fg('muted')};background:rgba(9,105,218,0.08)'>"
                f"{_e(line)}</td></tr>"
            )
            continue
        tag = line[:1]
        if not in_hunk or tag not in _ROW:
            if line.startswith(("diff --git", "index ")):
                continue
            style = "font-weight:bold" if line.startswith(("--- ", "+++ ")) else f"color:{fg('warn')};font-style:italic"
            rows.append(f"<tr><td colspan='3' style='{_CELL};{style}'>{_e(line)}</td></tr>")
            continue
        left = right = ""
        if tag in " -":
            left, old, left_old = str(old), old + 1, left_old - 1
        if tag in " +":
            right, new, left_new = str(new), new + 1, left_new - 1
        rows.append(
            f"<tr style='{_ROW[tag]}'><td style='{_NUM}'>{left}</td><td style='{_NUM}'>{right}</td>"
            f"<td style='{_CELL}'>{_e(line)}</td></tr>"
        )
    if not rows:
        return ""
    # MathJax classes on the table too: a diff is also shown outside a card (the agent view)
    return (
        f"<table class='holon-diff tex2jax_ignore mathjax_ignore' style='border-collapse:collapse;margin:2px 0'>"
        f"{''.join(rows)}</table>"
    )


def render_file_diffs(changed_files: list[Any]) -> str:
    """Render every ``changed_files`` entry of an ApplyPatch result: an action badge, the path, its diff.

    Args:
        changed_files: ``ApplyPatchResult.changed_files`` (``action``, ``path``, ``from_path``,
            ``diff_preview``, ``diff_truncated``).
    """
    parts = []
    for entry in changed_files:
        if not isinstance(entry, dict):
            continue
        letter, colour = _ACTION.get(str(entry.get("action")), ("?", "#57606a"))
        path = _e(entry.get("path"))
        if entry.get("from_path"):
            path = f"{_e(entry['from_path'])} → {path}"
        badge = (
            f"<span style='background:{colour};color:#fff;border-radius:4px;padding:0 5px;"
            f"font-family:monospace'>{letter}</span>"
        )
        body = render_diff(str(entry.get("diff_preview") or ""))
        parts.append(f"<div style='margin-top:6px'>{badge} <code>{path}</code>{body}</div>")
    return "".join(parts)
