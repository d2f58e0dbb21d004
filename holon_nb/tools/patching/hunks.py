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
"""

from __future__ import annotations

from .content import FileContent
from .match import find_block
from .model import CONTEXT, REMOVE, Hunk

__all__ = ["apply_hunks"]


def _insert_index(hunk: Hunk, delta: int, n: int) -> int:
    if hunk.append_if_pure_add:  # Codex: a chunk without old lines is appended
        return n
    base = hunk.old_start if hunk.old_count == 0 else hunk.old_start - 1
    return min(max(base + delta, 0), n)


def apply_hunks(path: str, content: FileContent, hunks: list[Hunk]) -> FileContent:
    """Apply ``hunks`` to ``content`` (modified in place and returned).

    Args:
        path: The path as written (for errors).
        content: The file's current content.
        hunks: The file patch's hunks, in order.

    Returns:
        ``content``, changed.

    Raises:
        ToolFailure: ``context_not_found`` / ``ambiguous_context`` from placement.
    """
    texts, terms, style = content.texts, content.terms, content.style
    delta = 0
    for hunk in hunks:
        old = hunk.old_block()
        n = len(texts)
        if not old:
            index = _insert_index(hunk, delta, n)
        else:
            hint = hunk.old_start - 1 + delta if hunk.old_start > 0 else None
            index, _level = find_block(path, texts, old, hint, anchor_eof=hunk.anchor_eof)
        end = index + len(old)
        touches_end = end == n
        new_texts: list[str] = []
        new_terms: list[str] = []
        j = index
        for kind, text in hunk.lines:
            if kind == CONTEXT:
                new_texts.append(texts[j])  # the file's own text (relaxed matches keep its whitespace)
                new_terms.append(terms[j])
                j += 1
            elif kind == REMOVE:
                j += 1
            else:
                new_texts.append(text)
                new_terms.append(style)
        texts[index:end] = new_texts
        terms[index:end] = new_terms
        delta += len(new_texts) - len(old)
        total = len(texts)
        # every line but the last needs a terminator (a former last line may now have successors)
        for p in range(max(index - 1, 0), min(index + len(new_texts), total - 1)):
            if not terms[p]:
                terms[p] = style
        if touches_end and total:
            if hunk.no_newline:
                terms[-1] = ""
            elif not terms[-1]:
                terms[-1] = style
    return content
