"""The ``ApplyPatchResult`` payload, its summary and its text receipt (commands spec §10.7, §10.9)."""

from __future__ import annotations

import re
from typing import Any

from ._model import Diagnostic, FilePatch, Hunk, IgnoredMetadata
from ._unified import NO_NEWLINE_MARKER

__all__ = ["DIFF_PREVIEW_MAX_LINES", "build_result", "changed_file", "diff_preview", "render_receipt", "sanitize"]

DIFF_PREVIEW_MAX_LINES = 80
_MARKERS = {"add": "A", "modify": "M", "delete": "D", "move": "R"}
_TOKEN_LIMIT, _TEXT_LIMIT = 96, 700
_RECEIPT_DIAGNOSTICS, _SUMMARY_DIAGNOSTICS = 8, 3
_WHITESPACE = re.compile(r"(\s+)")
ADVISORY = "Inspect the affected target region before applying another patch to the same file."


def diff_preview(fp: FilePatch, applied: list[Hunk] | None = None) -> tuple[str, bool]:
    """The normalised ``--- a/…``/``+++ b/…`` diff of a file patch, cut to 80 lines.

    Args:
        fp: The file patch.
        applied: The hunks as applied (actual positions; the file's own text on context and removed
            lines, so a relaxed match shows what was written); default: the patch's hunks.

    Returns:
        ``(text, truncated)``.
    """
    lines = [
        f"--- {'a/' + fp.old_path if fp.old_path is not None else '/dev/null'}",
        f"+++ {'b/' + fp.new_path if fp.new_path is not None else '/dev/null'}",
    ]
    total = 2
    for hunk in fp.hunks if applied is None else applied:
        total += 1 + len(hunk.lines) + (1 if hunk.no_newline else 0)
        if len(lines) > DIFF_PREVIEW_MAX_LINES:
            continue
        lines.append(f"@@ -{hunk.old_start},{hunk.old_count} +{hunk.new_start},{hunk.new_count} @@")
        lines.extend(k + t for k, t in hunk.lines[: DIFF_PREVIEW_MAX_LINES + 1])
        if hunk.no_newline:
            lines.append(NO_NEWLINE_MARKER)
    if total > DIFF_PREVIEW_MAX_LINES:
        return "\n".join(
            lines[:DIFF_PREVIEW_MAX_LINES] + [f"... diff truncated: showing {DIFF_PREVIEW_MAX_LINES} of {total} lines"]
        ), True
    return "\n".join(lines), False


def changed_file(
    action: str, fp: FilePatch, path: str, from_path: str | None, applied: list[Hunk] | None = None
) -> dict[str, Any]:
    """One ``changed_files`` entry: ``{action, path, from_path?, hunks, diff_preview, diff_truncated?}``.

    ``hunks`` carries the patch's header numbers; ``diff_preview`` shows ``applied`` when given."""
    preview, truncated = diff_preview(fp, applied if fp.hunks else None)
    entry: dict[str, Any] = {
        "action": action,
        "path": path,
        "hunks": [h.summary() for h in fp.hunks],
        "diff_preview": preview,
    }
    if from_path is not None:
        entry["from_path"] = from_path
    if truncated:
        entry["diff_truncated"] = True
    return entry


def sanitize(text: str) -> str:
    """Model-visible diagnostic text: tokens over 96 chars become ``[long token omitted]``; ≤700 chars."""
    parts = _WHITESPACE.split(text.strip())
    joined = "".join(p if p.isspace() or len(p) <= _TOKEN_LIMIT else "[long token omitted]" for p in parts)
    return joined if len(joined) <= _TEXT_LIMIT else joined[: _TEXT_LIMIT - 1] + "…"


def _marker(entry: dict[str, Any], sep: str, arrow: str) -> str:
    mark = _MARKERS[entry["action"]]
    if entry["action"] == "move":
        return f"{mark}{sep}{entry.get('from_path', '?')}{arrow}{entry['path']}"
    return f"{mark}{sep}{entry['path']}"


def build_result(
    changed_files: list[dict[str, Any]],
    changed_paths: list[str],
    ignored: list[IgnoredMetadata],
    diagnostics: list[Diagnostic],
) -> dict[str, Any]:
    """The ``ApplyPatchResult`` payload with its ``summary_text`` (commands spec §10.7)."""
    summary = (
        ("patched " + ", ".join(_marker(e, ":", "->") for e in changed_files)) if changed_files else "patched no files"
    )
    if diagnostics:
        parts = [sanitize(f"{d.kind} on {d.path or 'unknown path'}") for d in diagnostics[:_SUMMARY_DIAGNOSTICS]]
        if len(diagnostics) > _SUMMARY_DIAGNOSTICS:
            parts.append(f"+{len(diagnostics) - _SUMMARY_DIAGNOSTICS} more")
        summary += f" (diagnostics: {', '.join(parts)})"
    result: dict[str, Any] = {
        "changed_files": changed_files,
        "changed_paths": changed_paths,
        "changed_file_count": len(changed_paths),
        "summary_text": summary,
    }
    if ignored:
        result["ignored_metadata"] = [m.to_dict() for m in ignored]
    if diagnostics:
        result["diagnostics"] = [d.to_dict() for d in diagnostics]
    return result


def render_receipt(env: dict[str, Any], context: Any = None) -> str:
    """The text receipt of a successful ApplyPatch (commands spec §10.9)."""
    result = env["result"]
    diagnostics = result.get("diagnostics") or []
    head = "Success with diagnostics." if diagnostics else "Success."
    lines = [f"{head} Updated the following files:"]
    files = result.get("changed_files") or []
    lines += [_marker(e, " ", " -> ") for e in files] or ["(no file changes recorded)"]
    if diagnostics:
        lines += ["", "Diagnostics:"]
        for d in diagnostics[:_RECEIPT_DIAGNOSTICS]:
            path = sanitize(d.get("path") or "") or "unknown path"
            lines.append(f"- {d['kind']} on {path}: {sanitize(d.get('message', ''))}")
        if len(diagnostics) > _RECEIPT_DIAGNOSTICS:
            lines.append(f"- omitted {len(diagnostics) - _RECEIPT_DIAGNOSTICS} additional diagnostics")
        lines.append(ADVISORY)
    return "\n".join(lines)
