"""Call-local state and the in-memory application of file patches (commands spec §10.6 steps 1-2).

State maps each resolved path to its current content or absence, loaded on
first touch. File patches apply in input order against it, so delete-then-add,
consecutive modifies and rename-then-modify all work. Nothing touches the disk
here except reads; :meth:`Plan.changes` yields what the commit must do.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any

from .commit import Change
from .content import FileContent
from .failures import existing_file, io_failure, missing_file
from .hunks import apply_hunks
from .model import FilePatch

__all__ = ["Plan"]


@dataclass
class _Entry:
    resolved: str
    original: bytes | None
    mode: int | None
    owner: tuple[int, int] | None
    current: FileContent | None
    written: bool = False


def _load(resolved: str, requested: str) -> _Entry:
    try:
        st = os.stat(resolved)
    except (FileNotFoundError, NotADirectoryError):
        return _Entry(resolved, None, None, None, None)
    except OSError as exc:
        raise io_failure(f"cannot read {requested}", requested, exc) from None
    if not stat.S_ISREG(st.st_mode):
        raise io_failure(f"{requested} is not a regular file", requested, None, resolved_path=resolved)
    try:
        with open(resolved, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise io_failure(f"cannot read {requested}", requested, exc) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise io_failure(f"{requested} is not valid UTF-8 text; ApplyPatch edits UTF-8 text files only", requested,
                         None, resolved_path=resolved, byte_offset=exc.start) from None
    return _Entry(resolved, data, stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid), FileContent.parse(text))


@dataclass
class Plan:
    """The in-memory result of applying file patches.

    Attributes:
        root: The active execution root (for error details).
        resolved: Requested path (as written) → resolved absolute path.
        entries: Resolved path → state, in first-touch order.
        operations: ``(action, FilePatch, path, from_path)`` per applied file patch, in input order.
    """

    root: str
    resolved: dict[str, str]
    entries: dict[str, _Entry] = field(default_factory=dict)
    operations: list[tuple[str, FilePatch, str, str | None]] = field(default_factory=list)

    def _entry(self, requested: str) -> _Entry:
        resolved = self.resolved[requested]
        entry = self.entries.get(resolved)
        if entry is None:
            entry = self.entries[resolved] = _load(resolved, requested)
        return entry

    def apply(self, fp: FilePatch, action: str, target: Any) -> None:
        """Apply one classified file patch (see :meth:`FilePatch.operation`).

        Raises:
            ToolFailure: ``missing_file``, ``existing_file``, ``io_error``, ``context_not_found``,
                ``ambiguous_context``.
        """
        if action == "add":
            entry = self._entry(target)
            if entry.current is not None and not entry.current.is_empty():
                raise existing_file(target, entry.resolved)
            entry.current = apply_hunks(target, FileContent.empty(), fp.hunks)
            entry.written = True
            self.operations.append(("add", fp, target, None))
        elif action == "delete":
            entry = self._entry(target)
            if entry.current is None:
                raise missing_file("delete", target, entry.resolved, self.root)
            if fp.hunks:  # validated against the content; the file is removed regardless
                apply_hunks(target, entry.current.copy(), fp.hunks)
            entry.current = None
            self.operations.append(("delete", fp, target, None))
        elif action == "modify":
            entry = self._entry(target)
            if entry.current is None:
                raise missing_file("update", target, entry.resolved, self.root)
            entry.current = apply_hunks(target, entry.current, fp.hunks)
            entry.written = True
            self.operations.append(("modify", fp, target, None))
        else:
            source_path, dest_path = target
            source = self._entry(source_path)
            if source.current is None:
                raise missing_file("rename", source_path, source.resolved, self.root)
            dest = self._entry(dest_path)
            if dest.current is not None:
                raise existing_file(dest_path, dest.resolved)
            content = source.current
            if fp.hunks:
                content = apply_hunks(source_path, content, fp.hunks)
            source.current = None
            dest.current = content
            dest.written = True
            if dest.original is None and source.mode is not None:
                dest.mode = source.mode  # a moved file keeps its permission bits, like `git mv`
            self.operations.append(("move", fp, dest_path, source_path))

    def changes(self) -> tuple[list[Change], list[str]]:
        """What to commit, and the changed paths.

        Returns:
            ``(changes, changed_paths)``: one :class:`Change` per touched path in first-touch order,
            and the sorted absolute paths whose existence changed or that were written.
        """
        out: list[Change] = []
        changed: list[str] = []
        for entry in self.entries.values():
            final = entry.current.encode() if entry.current is not None else None
            existed = entry.original is not None
            if existed != (final is not None) or (final is not None and entry.written):
                changed.append(entry.resolved)
            out.append(Change(path=entry.resolved, original=entry.original, final=final, mode=entry.mode,
                              owner=entry.owner, original_mode=entry.mode if existed else None))
        return out, sorted(changed)
