"""Hunk placement: window, whole file, then relaxed levels (commands spec §10.6 step 3).

Exact matching scans with ``list.index`` on the block's longest line (C speed,
no per-line Python loop), so a hunk in a 50,000-line file costs one scan at
worst and usually only a window around its header position.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._envelope import ToolError
from .._errors import ToolFailure

__all__ = ["FFFD_HINT", "MAX_CANDIDATES", "NORMALIZERS", "ambiguous_context", "context_not_found", "find_block"]

MAX_CANDIDATES = 10
_NEARBY_BEFORE, _NEARBY_AFTER = 5, 6
_MD_HINT = (
    "If you are editing Markdown list lines, keep the diff prefix separate from the list marker: "
    "context ` - item`, deletion `-- item`, addition `+- item`."
)
FFFD_HINT = (
    " The patch contains U+FFFD replacement characters: re-read the file and copy its exact text; "
    "do not retry context lines that contain U+FFFD."
)

#: Relaxed comparison levels: 1 strips line ends, 2 both sides, 3 also collapses inner whitespace runs.
NORMALIZERS: dict[int, Callable[[str], str]] = {
    1: str.rstrip,
    2: str.strip,
    3: lambda s: " ".join(s.split()),
}


def _matches(lines: list[str], block: list[str], lo: int, hi: int, limit: int | None) -> list[int]:
    """Start indices ``i`` in ``[lo, hi]`` with ``lines[i:i+len(block)] == block`` (at most ``limit``)."""
    m = len(block)
    if hi < lo:
        return []
    k = max(range(m), key=lambda j: len(block[j]))  # anchor on the longest (likely rarest) line
    anchor = block[k]
    out: list[int] = []
    pos = lo + k
    stop = hi + k + 1
    while True:
        try:
            pos = lines.index(anchor, pos, stop)
        except ValueError:
            return out
        start = pos - k
        if lines[start : start + m] == block:
            out.append(start)
            if limit is not None and len(out) >= limit:
                return out
        pos += 1


def _relaxed(lines: list[str], block: list[str], level: int, limit: int | None) -> list[int]:
    norm = NORMALIZERS[level]
    return _matches([norm(s) for s in lines], [norm(s) for s in block], 0, len(lines) - len(block), limit)


def find_block(
    path: str, lines: list[str], block: list[str], hint: int | None, *, anchor_eof: bool = False
) -> tuple[int, int]:
    """Place a non-empty old block in ``lines``.

    Order (commands spec §10.6 step 3): a unique exact match in the window
    ``hint ± max(20, 2×len(block))``; else a unique exact match in the whole
    file; else, when the file has several exact copies, the one starting exactly
    at ``hint`` (the header's ``old_start`` shifted by earlier hunks); else the
    first relaxed level (1, 2, 3) with exactly one match. With
    ``anchor_eof`` (Codex ``*** End of File``) an exact match ending at the last
    line wins first.

    Args:
        path: The path as written (for errors).
        lines: The file's line texts.
        block: The old block (context + removed lines).
        hint: 0-based expected start (header start adjusted by earlier hunks), or None.
        anchor_eof: Prefer a match at the end of the file.

    Returns:
        ``(index, level)``: the start index and 0 for exact or the relaxed level used.

    Raises:
        ToolFailure: ``context_not_found`` or ``ambiguous_context``.
    """
    n, m = len(lines), len(block)
    if m > n:
        raise context_not_found(path, block, lines, hint)
    max_start = n - m
    if anchor_eof and lines[max_start:] == block:
        return max_start, 0
    if hint is not None and 0 <= hint <= max_start:
        radius = max(20, 2 * m)
        found = _matches(lines, block, max(0, hint - radius), min(max_start, hint + radius), 2)
        if len(found) == 1:
            return found[0], 0
    found = _matches(lines, block, 0, max_start, 2)
    if len(found) == 1:
        return found[0], 0
    if found and hint is not None and 0 <= hint <= max_start and lines[hint : hint + m] == block:
        return hint, 0  # several copies, but the header's (shifted) start names one of them exactly
    if not found:  # relaxed levels only widen the match set, so they can only help when exact found none
        for level in (1, 2, 3):
            relaxed = _relaxed(lines, block, level, 2)
            if len(relaxed) == 1:
                return relaxed[0], level
    candidates = _relaxed(lines, block, 3, None)
    if not candidates:
        raise context_not_found(path, block, lines, hint)
    raise ambiguous_context(path, block, lines, candidates, hint)


def context_not_found(path: str, block: list[str], lines: list[str], hint: int | None) -> ToolFailure:
    """``context_not_found`` with ``details {path, expected_lines, nearby_range, nearby_lines}``."""
    n = len(lines)
    center = min(max(hint or 0, 0), max(n - 1, 0))
    start, end = (0, 0) if n == 0 else (max(0, center - _NEARBY_BEFORE), min(n, center + _NEARBY_AFTER))
    nearby = [{"line_number": start + i + 1, "text": lines[start + i]} for i in range(end - start)]
    preview = "\n".join(f"{e['line_number']}: {e['text']}" for e in nearby)
    details = {
        "path": path,
        "expected_lines": block[:3],
        "nearby_range": {"start": start + 1 if n else 0, "end": end},
        "nearby_lines": nearby,
    }
    window = lines[start:end]
    markdown = any(t.startswith(" ") and ("-" + t).startswith("- ") and ("-" + t) in window for t in block)
    if markdown:
        details["suspected_issue"] = "markdown_list_diff_prefix"
        hint_text = (
            f"read the exact target region in {path} and retry with explicit diff prefixes. {_MD_HINT} "
            f"Nearby current content:\n{preview}"
        )
    else:
        hint_text = (
            f"read the exact target region in {path} and submit a hunk with matching context. "
            f"Nearby current content:\n{preview}"
        )
    return ToolFailure(
        ToolError(
            kind="context_not_found",
            message=f"hunk context does not match current file: {path}",
            details=details,
            recovery_hint=hint_text,
        )
    )


def ambiguous_context(
    path: str, block: list[str], lines: list[str], matches: list[int], hint: int | None
) -> ToolFailure:
    """``ambiguous_context`` with ``candidate_count``, ≤10 ``candidates`` and ``truncated``."""
    h = max(hint or 0, 0)
    candidates: list[dict[str, Any]] = []
    for index in matches[:MAX_CANDIDATES]:
        lo, hi = max(0, index - 2), min(len(lines), index + len(block) + 2)
        candidates.append(
            {
                "line_number": index + 1,
                "distance_from_hint": abs(index - h),
                "preview": [s.rstrip() for s in lines[lo:hi]],  # leading whitespace is part of the context
                "preview_range": {"start": lo + 1, "end": hi},
            }
        )
    truncated = len(matches) > MAX_CANDIDATES
    listing = "\n".join(f"  - Line {c['line_number']}: {' / '.join(c['preview'])}" for c in candidates)
    intro = (
        f"Showing first {MAX_CANDIDATES} of {len(matches)} matching locations:"
        if truncated
        else "The following locations all match the current context:"
    )
    hint_text = (
        f"include more surrounding context (at least 3 lines, or 5-10 if the file has repeated "
        f"structures) in the hunk for {path}. {intro}\n{listing}"
    )
    return ToolFailure(
        ToolError(
            kind="ambiguous_context",
            message=f"hunk context matches {len(matches)} locations in {path}",
            details={
                "path": path,
                "expected_lines": block[:3],
                "candidate_count": len(matches),
                "reported_count": len(candidates),
                "truncated": truncated,
                "candidates": candidates,
            },
            recovery_hint=hint_text,
        )
    )
