"""The unified-diff subset parser (commands spec §10.3).

Lines are split on ``\\n`` and lose one trailing ``\\r``. A file patch is an
optional ``diff --git a b`` header, optional extended lines (rename headers,
ignored metadata), then ``--- old`` / ``+++ new`` and one or more hunks, or a
hunkless git block (rename-only, mode-only, new or deleted empty file).
Errors are ``invalid_patch_syntax`` with ``details.rule``,
``unsupported_git_patch_feature``, ``rename_path_mismatch`` or
``missing_git_header``.

Real ``diff``, ``git diff`` and ``svn diff`` output parses as printed
(DIVERGENCES from the upstream subset, whose rejections were bugs):

- ``---``/``+++`` paths end at a TAB (``diff -u`` timestamps, svn revisions,
  git's tab after a name with a space), as ``patch`` and ``git apply`` read
  them; a side whose timestamp is the Unix epoch and whose hunks are all empty
  on that side is absent (``diff -N``).
- Git's C-quoted names (``"a/\\303\\251t\\303\\251.txt"``, octal and ``\\t \\n \\" \\\\``
  escapes) are unquoted in ``diff --git``, ``---``/``+++`` and ``rename`` lines.
- A ``diff --git`` header whose names contain spaces is split as git does (the
  two names equal), else checked against the ``---``/``+++`` or ``rename`` paths.
- ``diff -ruN …`` command lines and svn ``Index: …`` + ``====`` lines before a
  file's headers are recorded in ``ignored_metadata``.
- Hunkless git blocks: ``old mode``/``new mode`` only (accepted, nothing
  changes), ``new file mode`` / ``deleted file mode`` (an empty file is created
  or deleted); ``--- /dev/null`` + ``+++ b/x`` without a hunk creates an empty file.
- Inside a hunk whose header counts still expect old and new lines, a
  ``--- x`` / ``+++ y`` pair is a removed and an added line (``-- x``, ``++ y``),
  not the next file's headers, when a body line follows it or it uses up the
  counts exactly.
"""

from __future__ import annotations

import re

from .._errors import ToolFailure
from ._failures import (
    missing_git_header,
    rename_path_mismatch,
    syntax_error,
    unsupported_feature,
)
from ._headers import (
    GitHeader,
    foreign_header,
    git_tokens,
    is_epoch,
    split_equal,
    strip_diff_prefix,
    unquote_c,
)
from ._model import ADD, CONTEXT, REMOVE, Diagnostic, FilePatch, Hunk, IgnoredMetadata
from ._sniff import looks_like_codex

__all__ = ["NO_NEWLINE_MARKER", "parse_unified", "split_patch_lines", "strip_diff_prefix"]

NO_NEWLINE_MARKER = "\\ No newline at end of file"
_METADATA_KINDS = (
    "index",
    "similarity index",
    "dissimilarity index",
    "new file mode",
    "deleted file mode",
    "old mode",
    "new mode",
)
_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def split_patch_lines(text: str) -> list[str]:
    """Split patch text on ``\\n``; drop one trailing ``\\r`` per line and a final empty line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln.removesuffix("\r") for ln in lines]


def _metadata(line: str) -> IgnoredMetadata | None:
    for kind in _METADATA_KINDS:
        if line.startswith(kind + " "):
            return IgnoredMetadata(kind=kind, value=line[len(kind) + 1 :])
    return None


def _unsupported(line: str) -> bool:
    return line == "GIT binary patch" or line.startswith(
        ("Binary files ", "copy from ", "copy to ", "Subproject commit ")
    )


class _Parser:
    def __init__(self, text: str, line_offset: int):
        self.lines = split_patch_lines(text)
        self.n = len(self.lines)
        self.offset = line_offset  # 1-based patch line of lines[i] is i + 1 + offset

    def lineno(self, i: int) -> int:
        return i + 1 + self.offset

    def blank(self, i: int) -> bool:
        return not self.lines[i].strip()

    def file_header_pair_at(self, i: int) -> bool:
        return self.lines[i].startswith("--- ") and i + 1 < self.n and self.lines[i + 1].startswith("+++ ")

    def starts_file(self, i: int) -> bool:
        line = self.lines[i]
        return line.startswith("diff --git ") or foreign_header(line) or self.file_header_pair_at(i)

    def run(self) -> list[FilePatch]:
        patches: list[FilePatch] = []
        i = 0
        while i < self.n:
            if self.blank(i):
                i += 1
                continue
            patch, i = self.file_patch(i)
            patches.append(patch)
        if not patches:
            raise syntax_error(
                "missing_file_header",
                "expected at least one unified diff file patch",
                None,
                "submit unified diff text with --- old_path and +++ new_path",
            )
        return patches

    def git_header(self, i: int) -> GitHeader:
        rest = self.lines[i][len("diff --git ") :]
        header = GitHeader(rest, self.lineno(i))
        parsed = git_tokens(rest)
        if parsed is not None and len(parsed[0]) == 2:
            header.names = (strip_diff_prefix(parsed[0][0]), strip_diff_prefix(parsed[0][1]))
            return header
        if parsed is not None and not parsed[1] and len(parsed[0]) > 2:  # unquoted names with spaces
            header.names = split_equal(rest.strip())
            header.rest = rest.strip()
            return header
        raise self.bad_git_header(header)

    @staticmethod
    def bad_git_header(header: GitHeader) -> ToolFailure:
        return syntax_error(
            "invalid_git_header",
            "expected diff --git a/path b/path (names with spaces need "
            "--- / +++ or rename from / rename to lines that name them)",
            None,
            "use diff --git a/path b/path followed by --- a/path and +++ b/path, or omit the git header",
            line=header.line,
        )

    def name(self, raw: str, i: int, rule: str) -> str:
        """A path field: a C-quoted name, or the text up to the first TAB."""
        if raw.startswith('"'):
            try:
                return unquote_c(raw)[0]
            except ValueError as exc:
                raise syntax_error(
                    rule,
                    f"malformed quoted path ({exc}): {raw[:200]}",
                    None,
                    'write the path unquoted, or as git quotes it ("a/\\303\\251.txt")',
                    line=self.lineno(i),
                ) from None
        return raw.split("\t", 1)[0]

    def path_header(self, i: int, prefix: str) -> tuple[str | None, bool]:
        """``(path, epoch)``: the path (None for ``/dev/null``) and whether its timestamp is the epoch."""
        line = self.lines[i]
        if not line.startswith(prefix + " "):
            raise syntax_error(
                "missing_file_header",
                f"expected {prefix} file header, got: {line[:200]}",
                None,
                "use --- old_path followed by +++ new_path",
                line=self.lineno(i),
            )
        raw = line[len(prefix) + 1 :]
        stamp = raw.split("\t", 1)[1] if "\t" in raw and not raw.startswith('"') else ""
        name = self.name(raw, i, "missing_file_header")
        if name == "/dev/null":
            return None, False
        path = strip_diff_prefix(name)
        if not path.strip():
            raise syntax_error(
                "missing_file_header",
                f"{prefix} file header has an empty path",
                None,
                "write a file path after --- and +++",
                line=self.lineno(i),
            )
        return path, bool(stamp) and is_epoch(stamp)

    def file_patch(self, i: int) -> tuple[FilePatch, int]:
        """The file patch starting at line ``i`` (a ``diff --git`` or ``---`` line), and the line after it.

        Raises:
            ToolFailure: ``invalid_patch_syntax`` (rules ``unexpected_git_metadata``, ``missing_file_header``,
                ``path_header_mismatch``, ``invalid_hunk_header``, ``missing_hunk``),
                ``unsupported_git_patch_feature``, ``missing_git_header`` or ``rename_path_mismatch``.
        """
        git: GitHeader | None = None
        if self.lines[i].startswith("diff --git "):
            git = self.git_header(i)
            i += 1
        rename_from, rename_to, metadata, i = self.extended_header(i, git)
        if i >= self.n or not self.lines[i].startswith("--- "):
            return self.hunkless_git_block(git, rename_from, rename_to, metadata, i)

        old_path, old_epoch = self.path_header(i, "---")
        i += 1
        if i >= self.n:
            raise syntax_error(
                "missing_file_header",
                "expected +++ new_path after --- old_path",
                old_path,
                "add the matching +++ file header before unified diff hunks",
                line=self.lineno(i - 1),
            )
        new_path, new_epoch = self.path_header(i, "+++")
        i += 1
        renamed = rename_from is not None and rename_to is not None
        self.check_paths(git, rename_from, rename_to, old_path, new_path)
        display = new_path or old_path or ""
        for meta in metadata:
            meta.path = display
        hunks, diagnostics, i = self.hunks(i, display)
        if old_epoch and not renamed and all(not h.old_block() for h in hunks):
            old_path = None  # `diff -N`: the epoch marks the absent side
        if new_epoch and not renamed and all(h.new_block_len() == 0 for h in hunks):
            new_path = None
        if not hunks and not renamed and (old_path is None) == (new_path is None):
            raise syntax_error(
                "missing_hunk",
                "file patch must include at least one hunk unless it is rename-only",
                display,
                "add an @@ hunk, or use diff --git with rename from/rename to for a rename-only patch",
            )
        return FilePatch(
            old_path=old_path,
            new_path=new_path,
            rename_from=rename_from if renamed else None,
            rename_to=rename_to if renamed else None,
            hunks=hunks,
            ignored_metadata=metadata,
            diagnostics=diagnostics,
            deletes_empty=not hunks and new_path is None,
        ), i

    def extended_header(
        self, i: int, git: GitHeader | None
    ) -> tuple[str | None, str | None, list[IgnoredMetadata], int]:
        """The lines between a file patch's start and its ``---``: ``(rename from, rename to, metadata, i)``.

        ``i`` is the first line after them (a ``---``, the next file patch, or the end).
        """
        metadata: list[IgnoredMetadata] = []
        rename_from = rename_to = None
        while i < self.n:
            line = self.lines[i]
            if line.startswith(("--- ", "diff --git ")) or (git is not None and foreign_header(line)):
                break
            if line.startswith("rename from "):
                rename_from = strip_diff_prefix(self.name(line[len("rename from ") :], i, "unexpected_git_metadata"))
            elif line.startswith("rename to "):
                rename_to = strip_diff_prefix(self.name(line[len("rename to ") :], i, "unexpected_git_metadata"))
            elif (meta := _metadata(line)) is not None:
                metadata.append(meta)
            elif foreign_header(line):
                kind, _, value = line.partition(" ")
                metadata.append(IgnoredMetadata(kind=kind.rstrip(":"), value=value))
                if kind == "Index:" and i + 1 < self.n and re.fullmatch(r"={3,}", self.lines[i + 1]):
                    i += 1
            elif _unsupported(line):
                raise unsupported_feature(line)
            elif line.strip():
                raise syntax_error(
                    "unexpected_git_metadata",
                    f"unexpected unified diff metadata line: {line[:200]}",
                    None,
                    "remove prose and unsupported metadata; start each file patch with "
                    "diff --git or --- / +++ file headers",
                    line=self.lineno(i),
                )
            i += 1
        return rename_from, rename_to, metadata, i

    def check_paths(
        self,
        git: GitHeader | None,
        rename_from: str | None,
        rename_to: str | None,
        old_path: str | None,
        new_path: str | None,
    ) -> None:
        """A rename needs a ``diff --git`` header naming the same paths as ``---``/``+++``; so does any git header."""
        if rename_from is not None and rename_to is not None:  # renamed
            if git is None:
                raise missing_git_header(rename_from, rename_to)
            if not git.agrees(rename_from, rename_to) or (old_path, new_path) != (rename_from, rename_to):
                raise rename_path_mismatch(rename_from, rename_to)
        if git is not None and not git.agrees(old_path, new_path):
            if git.names is None:
                raise self.bad_git_header(git)
            raise syntax_error(
                "path_header_mismatch",
                "diff --git paths disagree with ---/+++ paths",
                new_path or old_path,
                "make diff --git, ---, and +++ paths refer to the same file",
            )

    def hunks(self, i: int, display: str) -> tuple[list[Hunk], list[Diagnostic], int]:
        """The ``@@`` hunks from line ``i`` to the next file patch: ``(hunks, diagnostics, i)``."""
        hunks: list[Hunk] = []
        diagnostics: list[Diagnostic] = []
        while i < self.n:
            line = self.lines[i]
            if self.starts_file(i):
                break
            if not line.strip():
                i += 1
                continue
            if not line.startswith("@@ "):
                raise syntax_error(
                    "invalid_hunk_header",
                    f"expected unified diff hunk header, got: {line[:200]}",
                    display,
                    "use @@ -old_start,old_count +new_start,new_count @@ before hunk lines",
                    line=self.lineno(i),
                )
            hunk, i = self.hunk(i, display, diagnostics)
            hunks.append(hunk)
        return hunks, diagnostics, i

    def hunkless_git_block(
        self,
        git: GitHeader | None,
        rename_from: str | None,
        rename_to: str | None,
        metadata: list[IgnoredMetadata],
        i: int,
    ) -> tuple[FilePatch, int]:
        """A file patch without ``---``/``+++``: rename-only, mode-only, or a new or deleted empty file."""
        kinds = {m.kind for m in metadata}
        if rename_from is not None and rename_to is not None:
            if git is None:
                raise missing_git_header(rename_from, rename_to)
            if not git.agrees(rename_from, rename_to):
                raise rename_path_mismatch(rename_from, rename_to)
            for meta in metadata:
                meta.path = rename_to
            return FilePatch(
                old_path=rename_from,
                new_path=rename_to,
                rename_from=rename_from,
                rename_to=rename_to,
                ignored_metadata=metadata,
            ), i
        creates, deletes = "new file mode" in kinds, "deleted file mode" in kinds
        if (
            git is None
            or rename_from is not None
            or rename_to is not None
            or not (creates or deletes or {"old mode", "new mode"} <= kinds)
        ):
            raise syntax_error(
                "missing_file_header",
                "expected --- old_path followed by +++ new_path",
                None,
                "add --- and +++ headers before unified diff hunks",
                line=self.lineno(min(i, self.n - 1)),
            )
        if git.names is None:
            raise self.bad_git_header(git)
        old, new = git.names
        path = old if deletes else new
        for meta in metadata:
            meta.path = path
        if creates and not deletes:
            return FilePatch(old_path=None, new_path=new, ignored_metadata=metadata), i
        if deletes and not creates:
            return FilePatch(old_path=old, new_path=None, ignored_metadata=metadata, deletes_empty=True), i
        if creates or old != new:
            raise syntax_error(
                "missing_file_header",
                "a git block without ---/+++ must create, delete or change the mode of one file",
                None,
                "add --- and +++ headers before unified diff hunks",
                line=git.line,
            )
        return FilePatch(old_path=old, new_path=new, ignored_metadata=metadata, mode_only=True), i

    def ends_hunk(self, i: int, rem_old: int, rem_new: int) -> bool:
        line = self.lines[i]
        if line.startswith(("@@ ", "diff --git ")) or foreign_header(line):
            return True
        return self.file_header_pair_at(i) and not self.pair_is_body(i, rem_old, rem_new)

    def pair_is_body(self, i: int, rem_old: int, rem_new: int) -> bool:
        """A ``--- x``/``+++ y`` pair inside a hunk is a removed and an added line when the header counts
        still expect both and either a body line follows or the pair uses the counts up exactly."""
        if rem_old < 1 or rem_new < 1:
            return False
        if rem_old == 1 and rem_new == 1:
            return True
        after = self.lines[i + 2] if i + 2 < self.n else ""
        return after[:1] in (CONTEXT, ADD, REMOVE, "\\") and not self.file_header_pair_at(i + 2)

    def only_blanks_then_end(self, i: int, rem_old: int, rem_new: int) -> bool:
        """True when lines[i:] are blank up to the end of the patch or a line that ends a hunk."""
        while i < self.n and self.lines[i] == "":
            i += 1
        return i >= self.n or self.ends_hunk(i, rem_old, rem_new)

    def hunk(self, i: int, path: str, diagnostics: list[Diagnostic]) -> tuple[Hunk, int]:
        header = self.lines[i]
        m = _HUNK_HEADER.match(header)
        if m is None:
            raise syntax_error(
                "invalid_hunk_header",
                f"expected @@ -old_start,old_count +new_start,new_count @@, got: {header[:200]}",
                path,
                "use a standard unified diff hunk header with numeric ranges",
                line=self.lineno(i),
            )
        old_start, new_start = int(m.group(1)), int(m.group(3))
        old_count = 1 if m.group(2) is None else int(m.group(2))
        new_count = 1 if m.group(4) is None else int(m.group(4))
        rem_old, rem_new = old_count, new_count
        body: list[tuple[str, str]] = []
        no_newline = old_no_newline = False
        j = i + 1
        while j < self.n:
            line = self.lines[j]
            if self.ends_hunk(j, rem_old, rem_new):
                break
            if line == NO_NEWLINE_MARKER:
                last = body[-1][0] if body else None
                if last in (ADD, CONTEXT):
                    no_newline = True
                if last in (REMOVE, CONTEXT):
                    old_no_newline = True
                j += 1
                continue
            if line == "":
                if self.only_blanks_then_end(j, rem_old, rem_new):  # blank separator before the next header
                    while j < self.n and self.lines[j] == "":
                        j += 1
                    break
                context = "\n".join(f"{k}{t}" for k, t in body[-2:])
                raise syntax_error(
                    "invalid_hunk_empty_line",
                    f"hunk line {len(body) + 1} is empty; every hunk line needs a prefix (space for context, + for "
                    f"added, - for removed). Context:\n{context}\n---\nFix: add a space character to this blank line.",
                    path,
                    "ensure all blank lines within hunk sections have a space prefix",
                    line=self.lineno(j),
                )
            kind = line[0]
            if kind not in (CONTEXT, ADD, REMOVE):
                raise syntax_error(
                    "invalid_hunk_line",
                    f"hunk line must start with space, +, or -, got: {line[:200]}",
                    path,
                    "use only context, added, and removed lines inside hunks",
                    line=self.lineno(j),
                )
            body.append((kind, line[1:]))
            rem_old -= kind != ADD
            rem_new -= kind != REMOVE
            j += 1
        if not body:
            raise syntax_error(
                "invalid_hunk_header",
                "hunk header must be followed by at least one hunk line",
                path,
                "include context, added, or removed lines after the @@ header",
                line=self.lineno(i),
            )
        old_actual = sum(1 for k, _ in body if k != ADD)
        new_actual = sum(1 for k, _ in body if k != REMOVE)
        if (old_actual, new_actual) != (old_count, new_count):
            diagnostics.append(
                Diagnostic(
                    kind="hunk_count_mismatch",
                    path=path,
                    message=(
                        f"hunk header declared -{old_start},{old_count} +{new_start},{new_count} but body counted "
                        f"-{old_start},{old_actual} +{new_start},{new_actual}"
                    ),
                )
            )
        hunk = Hunk(
            old_start=old_start,
            old_count=old_count,
            new_start=new_start,
            new_count=new_count,
            lines=body,
            no_newline=no_newline,
            old_no_newline=old_no_newline,
        )
        return hunk, j


def parse_unified(text: str, line_offset: int = 0) -> list[FilePatch]:
    """Parse unified-diff text strictly (commands spec §10.3, with the real-output divergences above).

    Args:
        text: The trimmed patch text.
        line_offset: Lines removed before ``text`` (so ``details.line`` counts from the original patch).

    Returns:
        The file patches, in input order.

    Raises:
        ToolFailure: ``invalid_patch_syntax`` (rule ``wrong_patch_format`` for Codex DSL text, and the other
            unified rules), ``unsupported_git_patch_feature``, ``rename_path_mismatch``, ``missing_git_header``.
    """
    if looks_like_codex(text):
        raise syntax_error(
            "wrong_patch_format",
            "this surface expects a unified diff, not Codex *** Begin Patch DSL",
            None,
            "submit a unified diff with --- old_path, +++ new_path and @@ hunks",
        )
    return _Parser(text, line_offset).run()
