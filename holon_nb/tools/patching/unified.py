"""The unified-diff subset parser (commands spec §10.3).

Lines are split on ``\\n`` and lose one trailing ``\\r``. A file patch is an
optional ``diff --git a b`` header, optional extended lines (rename headers,
ignored metadata), then ``--- old`` / ``+++ new`` and one or more hunks, or a
rename-only block. Errors are ``invalid_patch_syntax`` with ``details.rule``,
``unsupported_git_patch_feature``, ``rename_path_mismatch`` or
``missing_git_header``.
"""

from __future__ import annotations

import re

from .failures import (
    missing_git_header,
    rename_path_mismatch,
    syntax_error,
    unsupported_feature,
)
from .model import ADD, CONTEXT, REMOVE, Diagnostic, FilePatch, Hunk, IgnoredMetadata

__all__ = ["NO_NEWLINE_MARKER", "parse_unified", "split_patch_lines", "strip_diff_prefix"]

NO_NEWLINE_MARKER = "\\ No newline at end of file"
_METADATA_KINDS = ("index", "similarity index", "new file mode", "deleted file mode", "old mode", "new mode")
_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def split_patch_lines(text: str) -> list[str]:
    """Split patch text on ``\\n``; drop one trailing ``\\r`` per line and a final empty line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln.removesuffix("\r") for ln in lines]


def strip_diff_prefix(path: str) -> str:
    """Strip one leading ``a/`` or ``b/`` (``a//abs/p`` → ``/abs/p``; ``a/home/x`` → ``home/x``)."""
    if path.startswith(("a/", "b/")):
        return path[2:]
    return path


def _metadata(line: str) -> IgnoredMetadata | None:
    for kind in _METADATA_KINDS:
        if line.startswith(kind + " "):
            return IgnoredMetadata(kind=kind, value=line[len(kind) + 1:])
    return None


def _unsupported(line: str) -> bool:
    return line == "GIT binary patch" or line.startswith(
        ("Binary files ", "copy from ", "copy to ", "Subproject commit "))


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
            raise syntax_error("missing_file_header", "expected at least one unified diff file patch", None,
                               "submit unified diff text with --- old_path and +++ new_path")
        return patches

    def git_header(self, i: int) -> tuple[str, str]:
        parts = self.lines[i][len("diff --git "):].split()
        if len(parts) != 2:
            raise syntax_error("invalid_git_header", "expected diff --git a/path b/path (paths with spaces are "
                               "not supported)", None, "use diff --git a/path b/path or omit the git header",
                               line=self.lineno(i))
        return strip_diff_prefix(parts[0]), strip_diff_prefix(parts[1])

    def path_header(self, i: int, prefix: str) -> str | None:
        line = self.lines[i]
        if not line.startswith(prefix + " "):
            raise syntax_error("missing_file_header", f"expected {prefix} file header, got: {line[:200]}", None,
                               "use --- old_path followed by +++ new_path", line=self.lineno(i))
        raw = line[len(prefix) + 1:]
        if raw == "/dev/null":
            return None
        path = strip_diff_prefix(raw)
        if not path.strip():
            raise syntax_error("missing_file_header", f"{prefix} file header has an empty path", None,
                               "write a file path after --- and +++", line=self.lineno(i))
        return path

    def file_patch(self, i: int) -> tuple[FilePatch, int]:
        metadata: list[IgnoredMetadata] = []
        rename_from = rename_to = None
        git = None
        if self.lines[i].startswith("diff --git "):
            git = self.git_header(i)
            i += 1
        while i < self.n:
            line = self.lines[i]
            if line.startswith(("--- ", "diff --git ")):
                break
            if line.startswith("rename from "):
                rename_from = strip_diff_prefix(line[len("rename from "):])
            elif line.startswith("rename to "):
                rename_to = strip_diff_prefix(line[len("rename to "):])
            elif (meta := _metadata(line)) is not None:
                metadata.append(meta)
            elif _unsupported(line):
                raise unsupported_feature(line)
            elif line.strip():
                raise syntax_error("unexpected_git_metadata", f"unexpected unified diff metadata line: {line[:200]}",
                                   None, "remove prose and unsupported metadata; start each file patch with "
                                   "diff --git or --- / +++ file headers", line=self.lineno(i))
            i += 1

        if i >= self.n or self.lines[i].startswith("diff --git "):
            if rename_from is None or rename_to is None:
                raise syntax_error("missing_file_header", "expected --- old_path followed by +++ new_path", None,
                                   "add --- and +++ headers before unified diff hunks",
                                   line=self.lineno(min(i, self.n - 1)))
            if git is None:
                raise missing_git_header(rename_from, rename_to)
            if (rename_from, rename_to) != git:
                raise rename_path_mismatch(rename_from, rename_to)
            for meta in metadata:
                meta.path = rename_to
            return FilePatch(old_path=rename_from, new_path=rename_to, rename_from=rename_from,
                             rename_to=rename_to, ignored_metadata=metadata), i

        old_path = self.path_header(i, "---")
        i += 1
        if i >= self.n:
            raise syntax_error("missing_file_header", "expected +++ new_path after --- old_path", old_path,
                               "add the matching +++ file header before unified diff hunks", line=self.lineno(i - 1))
        new_path = self.path_header(i, "+++")
        i += 1
        renamed = rename_from is not None and rename_to is not None
        if renamed:
            if git is None:
                raise missing_git_header(rename_from, rename_to)  # type: ignore[arg-type]
            if (rename_from, rename_to) != git or (old_path, new_path) != (rename_from, rename_to):
                raise rename_path_mismatch(rename_from, rename_to)  # type: ignore[arg-type]
        if git is not None and ((old_path is not None and old_path != git[0])
                                or (new_path is not None and new_path != git[1])):
            raise syntax_error("path_header_mismatch", "diff --git paths disagree with ---/+++ paths",
                               new_path or old_path, "make diff --git, ---, and +++ paths refer to the same file")
        display = new_path or old_path or ""
        for meta in metadata:
            meta.path = display

        hunks: list[Hunk] = []
        diagnostics: list[Diagnostic] = []
        while i < self.n:
            line = self.lines[i]
            if line.startswith("diff --git ") or self.file_header_pair_at(i):
                break
            if not line.strip():
                i += 1
                continue
            if not line.startswith("@@ "):
                raise syntax_error("invalid_hunk_header", f"expected unified diff hunk header, got: {line[:200]}",
                                   display, "use @@ -old_start,old_count +new_start,new_count @@ before hunk lines",
                                   line=self.lineno(i))
            hunk, i = self.hunk(i, display, diagnostics)
            hunks.append(hunk)
        if not hunks and not renamed:
            raise syntax_error("missing_hunk", "file patch must include at least one hunk unless it is rename-only",
                               display, "add an @@ hunk, or use diff --git with rename from/rename to for a "
                               "rename-only patch")
        return FilePatch(old_path=old_path, new_path=new_path,
                         rename_from=rename_from if renamed else None, rename_to=rename_to if renamed else None,
                         hunks=hunks, ignored_metadata=metadata, diagnostics=diagnostics), i

    def ends_hunk(self, i: int) -> bool:
        line = self.lines[i]
        return line.startswith(("@@ ", "diff --git ")) or self.file_header_pair_at(i)

    def only_blanks_then_end(self, i: int) -> bool:
        """True when lines[i:] are blank up to the end of the patch or a line that ends a hunk."""
        while i < self.n and self.lines[i] == "":
            i += 1
        return i >= self.n or self.ends_hunk(i)

    def hunk(self, i: int, path: str, diagnostics: list[Diagnostic]) -> tuple[Hunk, int]:
        header = self.lines[i]
        m = _HUNK_HEADER.match(header)
        if m is None:
            raise syntax_error("invalid_hunk_header",
                               f"expected @@ -old_start,old_count +new_start,new_count @@, got: {header[:200]}",
                               path, "use a standard unified diff hunk header with numeric ranges",
                               line=self.lineno(i))
        old_start, new_start = int(m.group(1)), int(m.group(3))
        old_count = 1 if m.group(2) is None else int(m.group(2))
        new_count = 1 if m.group(4) is None else int(m.group(4))
        body: list[tuple[str, str]] = []
        no_newline = old_no_newline = False
        j = i + 1
        while j < self.n:
            line = self.lines[j]
            if self.ends_hunk(j):
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
                if self.only_blanks_then_end(j):  # blank separator before the next header or the end
                    while j < self.n and self.lines[j] == "":
                        j += 1
                    break
                context = "\n".join(f"{k}{t}" for k, t in body[-2:])
                raise syntax_error(
                    "invalid_hunk_empty_line",
                    f"hunk line {len(body) + 1} is empty; every hunk line needs a prefix (space for context, + for "
                    f"added, - for removed). Context:\n{context}\n---\nFix: add a space character to this blank line.",
                    path, "ensure all blank lines within hunk sections have a space prefix", line=self.lineno(j))
            kind = line[0]
            if kind not in (CONTEXT, ADD, REMOVE):
                raise syntax_error("invalid_hunk_line", f"hunk line must start with space, +, or -, got: {line[:200]}",
                                   path, "use only context, added, and removed lines inside hunks",
                                   line=self.lineno(j))
            body.append((kind, line[1:]))
            j += 1
        if not body:
            raise syntax_error("invalid_hunk_header", "hunk header must be followed by at least one hunk line", path,
                               "include context, added, or removed lines after the @@ header", line=self.lineno(i))
        old_actual = sum(1 for k, _ in body if k != ADD)
        new_actual = sum(1 for k, _ in body if k != REMOVE)
        if (old_actual, new_actual) != (old_count, new_count):
            diagnostics.append(Diagnostic(
                kind="hunk_count_mismatch", path=path,
                message=(f"hunk header declared -{old_start},{old_count} +{new_start},{new_count} but body counted "
                         f"-{old_start},{old_actual} +{new_start},{new_actual}"),
            ))
        hunk = Hunk(old_start=old_start, old_count=old_count, new_start=new_start, new_count=new_count,
                    lines=body, no_newline=no_newline, old_no_newline=old_no_newline)
        return hunk, j


def parse_unified(text: str, line_offset: int = 0) -> list[FilePatch]:
    """Parse unified-diff text strictly (commands spec §10.3).

    Args:
        text: The trimmed patch text.
        line_offset: Lines removed before ``text`` (so ``details.line`` counts from the original patch).

    Returns:
        The file patches, in input order.

    Raises:
        ToolFailure: ``invalid_patch_syntax`` (rule ``wrong_patch_format`` for Codex DSL text, and the other
            unified rules), ``unsupported_git_patch_feature``, ``rename_path_mismatch``, ``missing_git_header``.
    """
    from .detect import looks_like_codex

    if looks_like_codex(text):
        raise syntax_error("wrong_patch_format", "this surface expects a unified diff, not Codex *** Begin Patch DSL",
                           None, "submit a unified diff with --- old_path, +++ new_path and @@ hunks")
    return _Parser(text, line_offset).run()
