"""Call-local state and the in-memory application of file patches (commands spec §10.6 steps 1-2).

State maps each resolved path to its current content or absence, loaded on
first touch. File patches apply in input order against it, so delete-then-add,
consecutive modifies and rename-then-modify all work. Nothing touches the disk
here except reads; :meth:`Plan.changes` yields what the commit must do.

Symlinks that a patch deletes or moves are entries of their own (located by
:func:`~.paths.resolve_link`): their content is their target text, as in git,
and deleting or moving one acts on the link, never on its target. A delete
hunk of such a link may show either the link's text (``git rm``) or the
content seen through it.

Each loaded file records ``(st_ino, st_size, st_mtime_ns)`` as read, so the
commit can refuse a file that another process changed in the meantime.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any

from .._errors import ToolFailure
from ._commit import Change, Signature
from ._content import FileContent
from ._failures import changed_during_patch, existing_file, io_failure, missing_file
from ._hunks import apply_hunks
from ._match import context_not_found
from ._model import Diagnostic, FilePatch, Hunk

__all__ = ["Operation", "Plan"]


@dataclass
class _Entry:
    resolved: str
    original: bytes | None
    mode: int | None
    owner: tuple[int, int] | None
    current: FileContent | None
    signature: Signature | None = None
    link: bool = False  # the original is a symlink (``original`` holds its target)
    current_link: bool = False  # the current content is a symlink's target text
    written: bool = False


@dataclass
class Operation:
    """One applied file patch: ``action`` ∈ add|modify|delete|move, the path as written (move: the
    destination), ``from_path`` for a move, and the hunks as applied (for ``diff_preview``)."""

    action: str
    patch: FilePatch
    path: str
    from_path: str | None
    applied: list[Hunk] = field(default_factory=list)


def _signature(st: os.stat_result) -> Signature:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _decode(data: bytes, requested: str, resolved: str) -> FileContent:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise io_failure(
            f"{requested} is not valid UTF-8 text; ApplyPatch edits UTF-8 text files only",
            requested,
            None,
            resolved_path=resolved,
            byte_offset=exc.start,
        ) from None
    return FileContent.parse(text)


def _load_link(resolved: str, requested: str) -> _Entry:
    try:
        st = os.lstat(resolved)
        target = os.readlink(resolved)
    except OSError as exc:
        raise io_failure(f"cannot read the symlink {requested}", requested, exc) from None
    raw = os.fsencode(target)
    return _Entry(
        resolved, raw, None, None, _decode(raw, requested, resolved), _signature(st), link=True, current_link=True
    )


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
            before = os.fstat(fh.fileno())
            data = fh.read()
            after = os.fstat(fh.fileno())
    except OSError as exc:
        raise io_failure(f"cannot read {requested}", requested, exc) from None
    if _signature(before) != _signature(after) or len(data) != after.st_size:
        raise changed_during_patch(requested, resolved)  # another process is writing it right now
    return _Entry(
        resolved,
        data,
        stat.S_IMODE(st.st_mode),
        (st.st_uid, st.st_gid),
        _decode(data, requested, resolved),
        _signature(after),
    )


def _read_through(entry: _Entry, requested: str) -> FileContent | None:
    """The content of the regular file a symlink entry points to, or None (not one, unreadable, not UTF-8)."""
    try:
        if not stat.S_ISREG(os.stat(entry.resolved).st_mode):  # never open a FIFO or a device
            return None
        with open(entry.resolved, "rb") as fh:
            return _decode(fh.read(), requested, entry.resolved)
    except (OSError, ToolFailure):
        return None


def _link_target(entry: _Entry, requested: str) -> bytes:
    """The target text a symlink entry's content now names (one trailing line break dropped)."""
    assert entry.current is not None
    text = entry.current.render()
    text = text[:-2] if text.endswith("\r\n") else text.removesuffix("\n")
    if not text or "\n" in text or "\0" in text:
        raise io_failure(
            f"{requested} is a symlink; its new content must be one line naming its target",
            requested,
            None,
            resolved_path=entry.resolved,
        )
    return text.encode("utf-8")


@dataclass
class Plan:
    """The in-memory result of applying file patches.

    Attributes:
        root: The active execution root (for error details).
        resolved: Requested path (as written) → resolved absolute path.
        links: Requested paths that name a symlink acted on itself (deleted or moved by the patch).
        entries: Resolved path → state, in first-touch order.
        operations: The applied file patches, in input order.
        diagnostics: ``relaxed_context_match`` diagnostics of the applied hunks.
    """

    root: str
    resolved: dict[str, str]
    links: set[str] = field(default_factory=set)
    entries: dict[str, _Entry] = field(default_factory=dict)
    operations: list[Operation] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def _entry(self, requested: str) -> _Entry:
        resolved = self.resolved[requested]
        entry = self.entries.get(resolved)
        if entry is None:
            load = _load_link if requested in self.links else _load
            entry = self.entries[resolved] = load(resolved, requested)
        return entry

    def _hunks(self, path: str, content: FileContent, hunks: list[Hunk]) -> tuple[FileContent, list[Hunk]]:
        applied = apply_hunks(path, content, hunks)
        self.diagnostics.extend(applied.diagnostics)
        return applied.content, applied.hunks

    def _validate_delete(self, fp: FilePatch, target: str, entry: _Entry) -> list[Hunk]:
        assert entry.current is not None
        if not fp.hunks:
            if not entry.current.is_empty() and fp.deletes_empty:
                raise _not_empty(target, entry)
            return []
        try:
            return self._hunks(target, entry.current.copy(), fp.hunks)[1]
        except ToolFailure as failure:
            seen = _read_through(entry, target) if entry.link else None
            if seen is None:
                raise
            try:  # a link's delete hunk may show the content read through it
                return self._hunks(target, seen, fp.hunks)[1]
            except ToolFailure:
                raise failure from None

    def apply(self, fp: FilePatch, action: str, target: Any) -> None:
        """Apply one classified file patch (see :meth:`FilePatch.operation`).

        Raises:
            ToolFailure: ``missing_file``, ``existing_file``, ``io_error``, ``context_not_found``,
                ``ambiguous_context``.
        """
        if action == "noop":  # mode-only git patch: metadata recorded, nothing to do
            return
        if action == "add":
            entry = self._entry(target)
            if entry.current is not None and not entry.current.is_empty():
                raise existing_file(target, entry.resolved)
            entry.current, applied = self._hunks(target, FileContent.empty(), fp.hunks)
            entry.current_link = False
            entry.written = True
            self.operations.append(Operation("add", fp, target, None, applied))
        elif action == "delete":
            entry = self._entry(target)
            if entry.current is None:
                raise missing_file("delete", target, entry.resolved, self.root)
            applied = self._validate_delete(fp, target, entry)  # the file is removed regardless
            entry.current = None
            entry.current_link = False
            self.operations.append(Operation("delete", fp, target, None, applied))
        elif action == "modify":
            entry = self._entry(target)
            if entry.current is None:
                raise missing_file("update", target, entry.resolved, self.root)
            entry.current, applied = self._hunks(target, entry.current, fp.hunks)
            entry.written = True
            self.operations.append(Operation("modify", fp, target, None, applied))
        else:
            source_path, dest_path = target
            source = self._entry(source_path)
            if source.current is None:
                raise missing_file("rename", source_path, source.resolved, self.root)
            dest = self._entry(dest_path)
            if dest.current is not None:
                raise existing_file(dest_path, dest.resolved)
            content, applied = source.current, []
            if fp.hunks:
                content, applied = self._hunks(source_path, content, fp.hunks)
            dest.current, dest.current_link = content, source.current_link
            source.current, source.current_link = None, False
            dest.written = True
            if dest.original is None and source.mode is not None:
                dest.mode = source.mode  # a moved file keeps its permission bits, like `git mv`
            self.operations.append(Operation("move", fp, dest_path, source_path, applied))

    def changes(self) -> tuple[list[Change], list[str]]:
        """What to commit, and the changed paths.

        Returns:
            ``(changes, changed_paths)``: one :class:`Change` per touched path in first-touch order,
            and the sorted absolute paths whose existence changed or that were written.

        Raises:
            ToolFailure: ``io_error`` when a symlink's new content is not a single target line.
        """
        out: list[Change] = []
        changed: list[str] = []
        requested = {v: k for k, v in self.resolved.items()}
        for entry in self.entries.values():
            if entry.current is None:
                final = None
            elif entry.current_link:
                final = _link_target(entry, requested.get(entry.resolved, entry.resolved))
            else:
                final = entry.current.encode()
            existed = entry.original is not None
            if existed != (final is not None) or (final is not None and entry.written):
                changed.append(entry.resolved)
            out.append(
                Change(
                    path=entry.resolved,
                    original=entry.original,
                    final=final,
                    mode=None if entry.current_link else entry.mode,
                    owner=entry.owner,
                    original_mode=entry.mode if existed else None,
                    original_link=entry.link,
                    final_link=entry.current_link,
                    signature=entry.signature,
                )
            )
        return out, sorted(changed)


def _not_empty(target: str, entry: _Entry) -> ToolFailure:
    """A hunkless git delete describes an empty file; refuse one that has content (as ``git apply``)."""
    assert entry.current is not None
    failure = context_not_found(target, [], entry.current.texts, 0)
    failure.error.message = (
        f"the patch deletes {target} as an empty file, but it has {len(entry.current.texts)} line(s)"
    )
    failure.error.recovery_hint = (
        f"read {target} and send a delete patch whose hunk removes its current lines "
        f"(--- a/{target} / +++ /dev/null / @@ -1,N +0,0 @@). " + (failure.error.recovery_hint or "")
    )
    return failure
