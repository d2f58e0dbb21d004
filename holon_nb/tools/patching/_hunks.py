"""Applying one file patch's hunks to content in memory (commands spec §10.6 steps 3-5, per D1).

Hunks apply in order to the current content. Each hunk's header start is
adjusted by the line-count change of the hunks before it in the same file
patch (as ``git apply`` does), so later hunks look for their context where
it now is.

Terminators (per D1): context and untouched lines keep their own; added lines
take the file's newline style; a line that stops being the last line gains a
terminator. The final newline is decided only by a hunk that reaches the end
of the file: it ends with a terminator unless the hunk's new side carries the
``\\ No newline at end of file`` flag. DIVERGENCE (upstream quirk fixed):
upstream also added a final newline when a hunk far from the end was applied
to a file that had none; git leaves such a file's end alone, and so do we.
Likewise an insertion hunk ``@@ -k,0 +…`` goes after line ``k``, as in git
(upstream inserted it one line early).

BOM (per D1): the BOM is held apart from line 1, but ``git diff`` shows it as
part of line 1. A patch whose first old line starts with U+FEFF is matched
against the file with the BOM put back on line 1, so real git output applies;
after any hunk that rewrites line 1, a leading U+FEFF on the new line 1 becomes
the file's BOM again (never a second BOM). A git patch that drops the BOM
from line 1 therefore drops it from the file, as ``git apply`` does.

Relaxed matches (levels 1-3 of commands spec §10.6 step 3) succeed with a
``relaxed_context_match`` diagnostic naming the level and the first line that
differs; context lines keep the file's text and added lines are written as
given.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._content import BOM, FileContent
from ._match import find_block
from ._model import ADD, CONTEXT, REMOVE, Diagnostic, Hunk

__all__ = ["LEVEL_NAMES", "Applied", "apply_hunks"]

#: What each relaxed level ignores (commands spec §10.6 step 3).
LEVEL_NAMES = {
    1: "trailing whitespace ignored",
    2: "leading and trailing whitespace ignored",
    3: "whitespace runs collapsed",
}
_SHOWN = 60


@dataclass
class Applied:
    """The outcome of :func:`apply_hunks`.

    Attributes:
        content: The changed content (the object passed in).
        hunks: Each hunk as applied: actual positions, and the file's own text on context and removed
            lines (what ``diff_preview`` shows).
        diagnostics: ``relaxed_context_match`` per hunk placed by a relaxed level.
    """

    content: FileContent
    hunks: list[Hunk] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _insert_index(hunk: Hunk, delta: int, n: int) -> int:
    if hunk.append_if_pure_add:  # Codex: a chunk without old lines is appended
        return n
    base = hunk.old_start if hunk.old_count == 0 else hunk.old_start - 1
    return min(max(base + delta, 0), n)


def _shorten(text: str) -> str:
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "…")


def _relaxed_diagnostic(
    path: str, number: int, hunk: Hunk, index: int, level: int, old: list[str], texts: list[str]
) -> Diagnostic:
    k = next((i for i, t in enumerate(old) if t != texts[index + i]), 0)
    return Diagnostic(
        kind="relaxed_context_match",
        path=path,
        message=(
            f"hunk {number} (@@ -{hunk.old_start},{hunk.old_count} +{hunk.new_start},{hunk.new_count} @@) matched at "
            f"line {index + 1} only at relaxation level {level} ({LEVEL_NAMES[level]}); first differing line "
            f"{index + k + 1}: patch {_shorten(old[k])}, file {_shorten(texts[index + k])}. Context lines kept the "
            f"file's text; added lines were written exactly as given."
        ),
    )


def apply_hunks(path: str, content: FileContent, hunks: list[Hunk]) -> Applied:
    """Apply ``hunks`` to ``content`` (modified in place).

    Args:
        path: The path as written (for errors and diagnostics).
        content: The file's current content.
        hunks: The file patch's hunks, in order.

    Returns:
        The :class:`Applied` outcome (``content`` changed, the hunks as applied, diagnostics).

    Raises:
        ToolFailure: ``context_not_found`` / ``ambiguous_context`` from placement.
    """
    texts, terms, style = content.texts, content.terms, content.style
    out = Applied(content)
    delta = 0
    for number, hunk in enumerate(hunks, 1):
        old = hunk.old_block()
        n = len(texts)
        bom_in_line = False  # the BOM was put back on line 1 to match git's view of it
        level = 0
        if not old:
            index = _insert_index(hunk, delta, n)
        else:
            hint = hunk.old_start - 1 + delta if hunk.old_start > 0 else None
            if content.bom and n and old[0].startswith(BOM):
                texts[0] = BOM + texts[0]
                bom_in_line = True
            try:
                index, level = find_block(path, texts, old, hint, anchor_eof=hunk.anchor_eof)
            finally:
                if bom_in_line:
                    texts[0] = texts[0][1:]
            bom_in_line = bom_in_line and index == 0
            if bom_in_line:
                texts[0] = BOM + texts[0]
                content.bom = False
            if level:
                out.diagnostics.append(_relaxed_diagnostic(path, number, hunk, index, level, old, texts))
        end = index + len(old)
        touches_end = end == n
        new_texts: list[str] = []
        new_terms: list[str] = []
        shown: list[tuple[str, str]] = []
        first_added = False
        j = index
        for kind, text in hunk.lines:
            if kind == CONTEXT:
                new_texts.append(texts[j])  # the file's own text (relaxed matches keep its whitespace)
                new_terms.append(terms[j])
                shown.append((CONTEXT, texts[j]))
                j += 1
            elif kind == REMOVE:
                shown.append((REMOVE, texts[j]))
                j += 1
            else:
                first_added = first_added or not new_texts
                new_texts.append(text)
                new_terms.append(style)
                shown.append((ADD, text))
        texts[index:end] = new_texts
        terms[index:end] = new_terms
        out.hunks.append(
            Hunk(
                old_start=index - delta + (1 if old else 0),
                old_count=len(old),
                new_start=index + (1 if new_texts else 0),
                new_count=len(new_texts),
                lines=shown,
                no_newline=hunk.no_newline,
            )
        )
        delta += len(new_texts) - len(old)
        total = len(texts)
        if index == 0 and total and (bom_in_line or first_added) and texts[0].startswith(BOM):
            texts[0] = texts[0][1:]  # a leading U+FEFF on line 1 is the file's BOM, never a second one
            content.bom = True
        # every line but the last needs a terminator (a former last line may now have successors)
        for p in range(max(index - 1, 0), min(index + len(new_texts), total - 1)):
            if not terms[p]:
                terms[p] = style
        if touches_end and total:
            if hunk.no_newline:
                terms[-1] = ""
            elif not terms[-1]:
                terms[-1] = style
    return out
