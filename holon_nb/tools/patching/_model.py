"""Parsed-patch data: hunks, file patches, diagnostics (commands spec §10.3-§10.4, §10.7).

Both parsers (unified diff and Codex DSL) produce the same :class:`FilePatch`
list; everything after parsing is format-independent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ADD", "CONTEXT", "REMOVE", "Diagnostic", "FilePatch", "Hunk", "IgnoredMetadata"]

CONTEXT, ADD, REMOVE = " ", "+", "-"


@dataclass
class Hunk:
    """One hunk: ``lines`` are ``(kind, text)`` pairs, kind in ``" "``, ``"+"``, ``"-"``.

    Attributes:
        old_start, old_count, new_start, new_count: The header numbers (advisory).
        lines: Body lines without their prefix or terminator.
        no_newline: New-side ``\\ No newline at end of file`` flag (after a ``+`` or context line).
        old_no_newline: The marker followed a ``-`` or context line (old side only; informational).
        anchor_eof: Codex ``*** End of File``: prefer a match that ends at the last line.
        append_if_pure_add: Codex chunk: a chunk with no old lines is appended at the end.
    """

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: list[tuple[str, str]]
    no_newline: bool = False
    old_no_newline: bool = False
    anchor_eof: bool = False
    append_if_pure_add: bool = False

    def old_block(self) -> list[str]:
        """Context and removed lines, in order."""
        return [t for k, t in self.lines if k != ADD]

    def new_block_len(self) -> int:
        """Number of context and added lines."""
        return sum(1 for k, _ in self.lines if k != REMOVE)

    def summary(self) -> dict[str, int]:
        """The ``hunks[]`` entry of a changed file (commands spec §10.7)."""
        return {
            "old_start": self.old_start,
            "old_count": self.old_count,
            "new_start": self.new_start,
            "new_count": self.new_count,
            "added_count": sum(1 for k, _ in self.lines if k == ADD),
            "removed_count": sum(1 for k, _ in self.lines if k == REMOVE),
        }


@dataclass
class IgnoredMetadata:
    """Accepted-and-ignored git metadata (``index``, ``new file mode`` …), never applied."""

    kind: str
    value: str
    path: str = ""

    def to_dict(self) -> dict[str, str]:
        """Wire form ``{path, kind, value}``."""
        return {"path": self.path, "kind": self.kind, "value": self.value}


@dataclass
class Diagnostic:
    """A non-fatal observation reported with a successful patch (commands spec §10.7)."""

    kind: str
    message: str
    path: str = ""

    def to_dict(self) -> dict[str, str]:
        """Wire form ``{path, kind, message}``."""
        return {"path": self.path, "kind": self.kind, "message": self.message}


@dataclass
class FilePatch:
    """One file's patch.

    Attributes:
        old_path: Source path as written (prefix-stripped), None for ``/dev/null``.
        new_path: Target path as written (prefix-stripped), None for ``/dev/null``.
        rename_from, rename_to: Rename headers (or Codex ``*** Move to``), if any.
        hunks: The hunks, in order.
        ignored_metadata: Metadata lines recorded but not applied.
        diagnostics: Parse-time diagnostics (``hunk_count_mismatch``).
        mode_only: A git mode change without content change (``old mode``/``new mode`` only): nothing to do.
        deletes_empty: A hunkless unified-diff delete (git's ``deleted file mode`` of an empty file): the
            file must be empty. A Codex ``*** Delete File`` has no hunks and no such condition.
    """

    old_path: str | None
    new_path: str | None
    rename_from: str | None = None
    rename_to: str | None = None
    hunks: list[Hunk] = field(default_factory=list)
    ignored_metadata: list[IgnoredMetadata] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    mode_only: bool = False
    deletes_empty: bool = False

    @property
    def display_path(self) -> str:
        """The path used in messages: the new path, else the old one."""
        return self.new_path or self.old_path or ""

    def paths(self) -> list[str]:
        """Every path this file patch names (old, new, rename headers), de-duplicated, in order."""
        out: list[str] = []
        for p in (self.old_path, self.new_path, self.rename_from, self.rename_to):
            if p is not None and p not in out:
                out.append(p)
        return out

    def operation(self) -> tuple[str, Any]:
        """Classify: ``("add", path)``, ``("delete", path)``, ``("modify", path)``,
        ``("move", (from, to))`` or ``("noop", path)`` (a mode-only git patch). Raises
        ``invalid_patch_syntax`` (``missing_rename_header``, ``missing_file_header``) for the two
        impossible shapes (commands spec §10.3)."""
        from ._failures import syntax_error

        if self.mode_only:
            return "noop", self.display_path
        if self.rename_from is not None and self.rename_to is not None:
            return "move", (self.rename_from, self.rename_to)
        if self.old_path is None and self.new_path is not None:
            return "add", self.new_path
        if self.old_path is not None and self.new_path is None:
            return "delete", self.old_path
        if self.old_path is not None and self.old_path == self.new_path:
            return "modify", self.old_path
        if self.old_path is not None:
            raise syntax_error(
                "missing_rename_header",
                "path-changing file patches must include rename from and rename to headers",
                self.display_path,
                "add diff --git plus rename from/rename to headers for file renames",
            )
        raise syntax_error(
            "missing_file_header",
            "both unified diff paths cannot be /dev/null",
            None,
            "use one workspace path for add or delete operations",
        )
