"""The Codex ApplyPatch DSL parser (commands spec §10.4) and its Lark grammar.

``*** Begin Patch`` … ``*** End Patch`` with ``*** Add File:``, ``*** Delete
File:`` and ``*** Update File:`` (optionally ``*** Move to:``) sections. The
whole text may be wrapped in a ``<<EOF`` … ``EOF`` heredoc. As in Codex's own
parser, the Begin/End markers and the file-header lines may carry whitespace
on either side (``  *** Update File: foo.txt``, ``*** End Patch ``); only
those positions are trimmed, never an added, removed or context line.

Two Codex semantics are kept where upstream Holon differs (DIVERGENCE, both
upstream quirks a user would call bugs): a chunk with no old lines is appended
at the end of the file, as Codex does, rather than inserted at the top; and
``*** End of File`` anchors its chunk at the end of the file instead of
removing the file's final newline (Codex always leaves a final newline).
"""

from __future__ import annotations

from collections.abc import Callable

from ._failures import syntax_error
from ._model import ADD, CONTEXT, REMOVE, FilePatch, Hunk
from ._sniff import HEREDOC_OPENERS as _HEREDOC_OPENERS
from ._unified import split_patch_lines

__all__ = ["CODEX_LARK_GRAMMAR", "codex_lines", "parse_codex"]

#: The freeform grammar advertised with the ``codex_dsl_freeform`` surface (commands spec §10.1).
CODEX_LARK_GRAMMAR = r"""start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
"""


def codex_lines(text: str) -> tuple[list[str], int]:
    """Lines of a Codex patch without surrounding blank lines or a heredoc wrapper.

    Returns:
        ``(lines, skipped)``: the lines and how many lines were dropped before the first one.
    """
    lines = split_patch_lines(text)
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    if end - start >= 2 and lines[start].lstrip() in _HEREDOC_OPENERS and lines[end - 1] == "EOF":
        start, end = start + 1, end - 1
    return lines[start:end], start


def _header(line: str) -> str:
    """A line where a file header is expected, with surrounding whitespace removed (as Codex's parser
    trims it). Only header positions are trimmed: body lines keep every character."""
    return line.strip()


def _chunk(lines: list[tuple[str, str]], eof: bool) -> Hunk:
    old = sum(1 for k, _ in lines if k != ADD)
    new = sum(1 for k, _ in lines if k != REMOVE)
    return Hunk(
        old_start=1, old_count=old, new_start=1, new_count=new, lines=lines, anchor_eof=eof, append_if_pure_add=True
    )


def parse_codex(text: str, line_offset: int = 0) -> list[FilePatch]:
    """Parse Codex DSL text strictly (commands spec §10.4).

    Args:
        text: The trimmed patch text.
        line_offset: Lines removed before ``text`` (for ``details.line``).

    Returns:
        The file patches, in input order (Add: ``/dev/null`` → path; Delete: path → ``/dev/null``;
        Update: path → path, or a move with ``rename_from``/``rename_to``).

    Raises:
        ToolFailure: ``invalid_patch_syntax`` with rule ``wrong_patch_format``, ``missing_end_patch``,
            ``invalid_codex_hunk``, ``invalid_codex_add_line``, ``invalid_codex_change_line`` or ``missing_hunk``.
    """
    lines, skipped = codex_lines(text)

    def lineno(i: int) -> int:
        return i + 1 + skipped + line_offset

    if not lines or lines[0].strip() != "*** Begin Patch":
        raise syntax_error(
            "wrong_patch_format",
            "this surface expects Codex *** Begin Patch DSL",
            None,
            "submit raw *** Begin Patch / *** End Patch text without JSON wrapping",
        )
    if lines[-1].strip() != "*** End Patch" or len(lines) < 2:
        raise syntax_error(
            "missing_end_patch", "Codex DSL patch must end with *** End Patch", None, "end the patch with *** End Patch"
        )
    last = len(lines) - 1  # index of *** End Patch
    patches: list[FilePatch] = []
    i = 1
    while i < last:
        line = _header(lines[i])
        if line.startswith("*** Add File: "):
            patch, i = _add_file(lines, i + 1, last, line[len("*** Add File: ") :], lineno)
            patches.append(patch)
            continue
        if line.startswith("*** Delete File: "):
            patches.append(FilePatch(old_path=line[len("*** Delete File: ") :], new_path=None))
            i += 1
            continue
        if line.startswith("*** Update File: "):
            patch, i = _update_file(lines, i + 1, last, line[len("*** Update File: ") :], lineno)
            patches.append(patch)
            continue
        raise syntax_error(
            "invalid_codex_hunk",
            f"unexpected Codex DSL line: {lines[i][:200]}",
            None,
            "use *** Add File, *** Delete File, or *** Update File sections",
            line=lineno(i),
        )
    if not patches:
        raise syntax_error(
            "missing_hunk",
            "Codex DSL patch must include at least one file section",
            None,
            "add a file section between *** Begin Patch and *** End Patch",
        )
    return patches


def _add_file(lines: list[str], i: int, last: int, path: str, lineno: Callable[[int], int]) -> tuple[FilePatch, int]:
    """An ``*** Add File`` section's body from line ``i``: its file patch and the line after it."""
    body: list[tuple[str, str]] = []
    while i < last and not _header(lines[i]).startswith("*** "):  # a non-+ line ends the body
        if not lines[i].startswith("+"):
            raise syntax_error(
                "invalid_codex_add_line",
                "Codex Add File lines must start with +",
                path,
                "prefix every added line with +",
                line=lineno(i),
            )
        body.append((ADD, lines[i][1:]))
        i += 1
    if not body:
        raise syntax_error(
            "missing_hunk",
            "Codex Add File must include at least one added line",
            path,
            "add one or more + lines",
        )
    hunk = Hunk(old_start=0, old_count=0, new_start=1, new_count=len(body), lines=body)
    return FilePatch(old_path=None, new_path=path, hunks=[hunk]), i


def _update_file(lines: list[str], i: int, last: int, path: str, lineno: Callable[[int], int]) -> tuple[FilePatch, int]:
    """An ``*** Update File`` section from line ``i`` (an optional ``*** Move to``, then ``@@`` chunks): its file
    patch and the line after it."""
    move_to = None
    if i < last and lines[i].startswith("*** Move to: "):
        move_to = lines[i].rstrip()[len("*** Move to: ") :]
        i += 1
    hunks: list[Hunk] = []
    current: list[tuple[str, str]] = []
    eof = False
    while i < last:
        cur = lines[i]
        if cur == "*** End of File":
            eof = True
            i += 1
            continue
        if cur.startswith("*** "):
            break
        if cur == "@@" or cur.startswith("@@ "):
            if current:
                hunks.append(_chunk(current, eof))
                current, eof = [], False
            i += 1
            continue
        kind = cur[:1]
        if kind not in (CONTEXT, ADD, REMOVE):
            raise syntax_error(
                "invalid_codex_change_line",
                f"Codex change lines must start with space, +, or -, got: {cur[:200]!r}",
                path,
                "prefix blank context lines with a space; use only context, added and removed lines",
                line=lineno(i),
            )
        current.append((kind, cur[1:]))
        i += 1
    if current:
        hunks.append(_chunk(current, eof))
    if not hunks and move_to is None:
        raise syntax_error(
            "missing_hunk",
            "Codex Update File must include a change or Move to",
            path,
            "add change lines or a *** Move to header",
        )
    patch = FilePatch(
        old_path=path,
        new_path=move_to or path,
        rename_from=path if move_to else None,
        rename_to=move_to,
        hunks=hunks,
    )
    return patch, i
