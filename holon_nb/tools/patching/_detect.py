"""Surfaces, format detection and the compatibility fallback (commands spec §10.1-§10.2).

The surface is chosen per model route; each surface has one strict format.
When the strict parse fails, the text's format is detected; a different known
format is parsed instead and the success carries an
``apply_patch_compatibility_fallback`` diagnostic. Text that looks like
neither format at all fails with rule ``unknown_patch_format``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._errors import ToolFailure
from ._codex import parse_codex
from ._failures import syntax_error
from ._model import Diagnostic, FilePatch
from ._sniff import first_lines as _first_lines
from ._sniff import looks_like_codex
from ._unified import parse_unified

__all__ = [
    "CODEX",
    "CODEX_SURFACE",
    "UNIFIED",
    "UNIFIED_SURFACE",
    "UNKNOWN",
    "ParsedPatch",
    "detect_format",
    "looks_like_codex",
    "parse_patch",
    "prepare_text",
    "surface_for_route",
]

UNIFIED_SURFACE, CODEX_SURFACE = "unified_diff_json", "codex_dsl_freeform"
UNIFIED, CODEX, UNKNOWN = "unified_diff", "codex_dsl", "unknown"
_CODEX_ROUTE_PREFIXES = ("openai-codex/", "openai-codex@", "deepseek@responses/")
_EXPECTED = {UNIFIED_SURFACE: UNIFIED, CODEX_SURFACE: CODEX}
_STRUCTURE_PREFIXES = (  # any of these makes the text a (possibly broken) patch rather than prose
    "--- ",
    "+++ ",
    "@@ ",
    "diff --git ",
    "*** ",
    "rename from ",
    "rename to ",
    "index ",
    "similarity index ",
    "new file mode ",
    "deleted file mode ",
    "old mode ",
    "new mode ",
    "GIT binary patch",
    "Binary files ",
    "copy from ",
    "copy to ",
    "Subproject commit ",
)


def surface_for_route(model_route: str | None) -> str:
    """``codex_dsl_freeform`` for routes starting ``openai-codex/``, ``openai-codex@`` or
    ``deepseek@responses/``; ``unified_diff_json`` otherwise (also for direct calls, route None)."""
    if model_route and model_route.startswith(_CODEX_ROUTE_PREFIXES):
        return CODEX_SURFACE
    return UNIFIED_SURFACE


def detect_format(text: str) -> str:
    """Detect ``codex_dsl``, ``unified_diff`` (``--- ``, ``+++ `` and ``@@ `` prefixes all within
    the first 40 lines) or ``unknown``."""
    if looks_like_codex(text):
        return CODEX
    lines = _first_lines(text.lstrip(), 40)
    if (
        any(ln.startswith("--- ") for ln in lines)
        and any(ln.startswith("+++ ") for ln in lines)
        and any(ln.startswith("@@ ") for ln in lines)
    ):
        return UNIFIED
    return UNKNOWN


def _parse(text: str, fmt: str, line_offset: int) -> list[FilePatch]:
    return parse_codex(text, line_offset) if fmt == CODEX else parse_unified(text, line_offset)


def prepare_text(patch: str) -> tuple[str, int]:
    """Trim patch text for parsing (commands spec §10.1).

    Leading whitespace and trailing line breaks are removed. Trailing spaces on
    the last line are kept: they belong to its content (a final context line
    `` `` for an empty file line, or an added line ending in spaces).

    Returns:
        ``(text, line_offset)``: the trimmed text and the number of lines removed before it.
    """
    stripped = patch.lstrip()
    removed = patch[: len(patch) - len(stripped)]
    offset = removed.count("\n")
    return stripped.rstrip("\r\n"), offset


@dataclass
class ParsedPatch:
    """A parsed patch and how it was parsed.

    Attributes:
        patches: File patches in input order.
        surface: The surface label.
        expected_format: The surface's strict format.
        detected_format: The format actually parsed.
        parser_mode: ``strict`` or ``compatibility``.
        diagnostics: ``apply_patch_compatibility_fallback`` when the fallback was used.
    """

    patches: list[FilePatch]
    surface: str
    expected_format: str
    detected_format: str
    parser_mode: str
    diagnostics: list[Diagnostic] = field(default_factory=list)


def parse_patch(patch: str, surface: str = UNIFIED_SURFACE) -> ParsedPatch:
    """Parse patch text for a surface, with the compatibility fallback (commands spec §10.2).

    Args:
        patch: The patch text as given (it is trimmed here).
        surface: ``unified_diff_json`` or ``codex_dsl_freeform``.

    Returns:
        The :class:`ParsedPatch`.

    Raises:
        ToolFailure: the strict parser's error when no fallback applies; ``invalid_patch_syntax`` rule
            ``unknown_patch_format`` when the text has no line of either format's structure.
    """
    expected = _EXPECTED[surface]
    text, offset = prepare_text(patch)
    try:
        patches = _parse(text, expected, offset)
        return ParsedPatch(patches, surface, expected, expected, "strict")
    except ToolFailure as strict:
        detected = detect_format(text)
        if detected == UNKNOWN:
            if not any(ln.lstrip().startswith(_STRUCTURE_PREFIXES) for ln in text.split("\n")):
                raise syntax_error(
                    "unknown_patch_format",
                    "the patch is neither a unified diff nor a Codex *** Begin Patch patch",
                    None,
                    "submit a unified diff: --- a/path, +++ b/path, then @@ -start,count +start,count @@ "
                    "hunks with ' ', '-' and '+' lines",
                ) from None
            raise
        if detected == expected:
            raise
        try:
            patches = _parse(text, detected, offset)
        # the strict error stands (commands spec §10.2); its hint also says why the other failed
        except ToolFailure as second:
            err = strict.error
            hint = (err.recovery_hint or "").rstrip()
            err.recovery_hint = (
                f"{hint}{'' if not hint or hint.endswith('.') else '.'} The text looks like "
                f"{detected}, and read as {detected} it fails too: {second.error.message}"
            ).strip()
            raise strict from None
        failure = strict.error
    rule = failure.details.get("rule") if isinstance(failure.details, dict) else None
    hunks = sum(len(p.hunks) for p in patches)
    patch_bytes = len(patch.encode("utf-8", "surrogatepass"))
    message = (
        f"ApplyPatch succeeded using {detected}, but this surface expects {expected}. Continue using {expected} "
        f"for future ApplyPatch calls. surface={surface}, expected_format={expected}, detected_format={detected}, "
        f"parser_mode=compatibility, compatibility_fallback_used=true, patch_bytes={patch_bytes}, "
        f"file_count={len(patches)}, hunk_count={hunks}, strict_parse_failure_kind={failure.kind}"
        + (f", strict_parse_failure_rule={rule}" if rule else "")
    )
    diag = Diagnostic(kind="apply_patch_compatibility_fallback", message=message)
    return ParsedPatch(patches, surface, expected, detected, "compatibility", [diag])
