"""All-or-nothing disk commit with rollback (commands spec §10.6 step 6, per D2).

Files are written in input order, each to a temporary file in its target's
directory (missing parent directories are created first) that gets the
permission bits (and, when possible, the owner) of the file it replaces, then
renamed over the target with ``os.replace``. Deletions run after every rename
succeeded. On any failure, replaced and removed files are restored from the
original bytes (again by temporary file + rename), created files and then
created directories (when empty) are removed, leftover temporary files are
deleted, and the original error is re-raised.

Symlink entries (a link deleted or moved by the patch) are removed, created
and restored as links: a new link is made under a temporary name and renamed
into place, like a file.

Before each file is renamed into place or removed, it is stat'ed again and
compared with the ``(st_ino, st_size, st_mtime_ns)`` recorded when it was read
(absent files must still be absent); a difference means another process wrote
it, and the commit fails with :class:`ChangedOnDisk` (rolled back as usual).
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass, field

__all__ = ["Change", "ChangedOnDisk", "CommitError", "Signature", "commit", "current_umask"]

TEMP_SUFFIX = ".holon-patch.tmp"

#: ``(st_ino, st_size, st_mtime_ns)`` of a file as it was read.
Signature = tuple[int, int, int]


@dataclass
class Change:
    """One path's transition.

    Attributes:
        path: The resolved absolute path.
        original: Bytes on disk before the patch, or None when absent.
        final: Bytes after the patch, or None when the file is removed.
        mode: Permission bits for the written file (None: default under the umask).
        owner: ``(uid, gid)`` to keep on the written file, or None.
        original_mode: Permission bits to restore on rollback (None: default under the umask).
        original_link, final_link: ``original``/``final`` is a symlink's target rather than file bytes.
        signature: ``(st_ino, st_size, st_mtime_ns)`` as read (None: the path was absent).
    """

    path: str
    original: bytes | None
    final: bytes | None
    mode: int | None = None
    owner: tuple[int, int] | None = None
    original_mode: int | None = None
    original_link: bool = False
    final_link: bool = False
    signature: Signature | None = None


class ChangedOnDisk(Exception):
    """A file changed on disk between its read and its commit (another writer)."""


@dataclass
class CommitError(Exception):
    """A commit failed and was rolled back.

    Attributes:
        operation: ``mkdir``, ``write``, ``verify``, ``rename`` or ``remove``.
        path: The path being committed.
        cause: The underlying exception.
        rollback_errors: Errors met while restoring (empty when the rollback was complete).
    """

    operation: str
    path: str
    cause: BaseException
    rollback_errors: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.operation} {self.path}: {self.cause}"


def current_umask() -> int:
    """The process umask, read without changing it where ``/proc`` allows (thread-safe)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_temp(path: str, data: bytes, mode: int, owner: tuple[int, int] | None, temps: list[str]) -> str:
    directory, name = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{name[:80]}.", suffix=TEMP_SUFFIX, dir=directory)
    temps.append(tmp)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if owner is not None and owner != (os.geteuid(), os.getegid()):
            try:
                os.fchown(fd, *owner)
            except OSError:
                pass  # not permitted (not root): the file is ours, as with any new file
        os.fchmod(fd, mode)  # after fchown, which clears set-id bits
    finally:
        os.close(fd)
    return tmp


def _link_temp(path: str, target: bytes, temps: list[str]) -> str:
    directory, name = os.path.split(path)
    for _ in range(100):
        tmp = os.path.join(directory, f".{name[:80]}.{os.urandom(6).hex()}{TEMP_SUFFIX}")
        try:
            os.symlink(os.fsdecode(target), tmp)
        except FileExistsError:
            continue
        temps.append(tmp)
        return tmp
    raise FileExistsError(f"no free temporary name next to {path}")


def _verify(change: Change) -> None:
    """Raise :class:`ChangedOnDisk` unless ``change.path`` is as it was read (no signature: not checked)."""
    if change.signature is None and change.original is not None:
        return
    try:
        st = os.lstat(change.path)
    except FileNotFoundError:
        now = None
    else:
        now = (st.st_ino, st.st_size, st.st_mtime_ns)
    if now != change.signature:
        raise ChangedOnDisk(change.path)


def _make_parents(directory: str, created: list[str]) -> None:
    missing: list[str] = []
    cur = directory
    while not os.path.isdir(cur):
        missing.append(cur)
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    for d in reversed(missing):
        os.mkdir(d)
        created.append(d)


def commit(changes: list[Change]) -> None:
    """Commit ``changes`` to disk, all or nothing (per D2).

    Args:
        changes: Transitions in input order; entries whose ``final`` equals ``original`` are skipped.

    Raises:
        CommitError: when any step failed; everything was restored (see ``rollback_errors``).
    """
    needs_default = any(c.mode is None and c.final is not None for c in changes)
    default_mode = 0o666 & ~current_umask() if needs_default else 0o644
    temps: list[str] = []
    created_dirs: list[str] = []
    replaced: list[Change] = []
    removed: list[Change] = []
    writes = [c for c in changes
              if c.final is not None and (c.final != c.original or c.final_link != c.original_link)]
    removals = [c for c in changes if c.final is None and c.original is not None]
    step, current = "write", ""
    try:
        for change in writes:
            current = change.path
            step = "mkdir"
            _make_parents(os.path.dirname(change.path), created_dirs)
            step = "write"
            if change.final_link:
                tmp = _link_temp(change.path, change.final or b"", temps)
            else:
                mode = change.mode if change.mode is not None else default_mode
                tmp = _write_temp(change.path, change.final or b"", mode, change.owner, temps)
            step = "verify"
            _verify(change)
            step = "rename"
            os.replace(tmp, change.path)
            temps.remove(tmp)
            replaced.append(change)
        step = "remove"
        for change in removals:
            current = change.path
            step = "verify"
            _verify(change)
            step = "remove"
            os.unlink(change.path)
            removed.append(change)
    except BaseException as exc:
        errors = _rollback(replaced, removed, created_dirs, temps, default_mode)
        if not isinstance(exc, Exception):
            raise  # interrupts and exits propagate (after the rollback)
        raise CommitError(step, current, exc, errors) from exc


def _rollback(replaced: list[Change], removed: list[Change], created_dirs: list[str], temps: list[str],
              default_mode: int) -> list[str]:
    errors: list[str] = []
    for change in reversed(removed + replaced):
        try:
            if change.original is None:
                os.unlink(change.path)
            else:
                if change.original_link:
                    tmp = _link_temp(change.path, change.original, temps)
                else:
                    mode = change.original_mode if change.original_mode is not None else default_mode
                    tmp = _write_temp(change.path, change.original, mode, change.owner, temps)
                os.replace(tmp, change.path)
                temps.remove(tmp)
        except OSError as exc:
            errors.append(f"restore {change.path}: {exc}")
    for tmp in temps:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        except OSError as exc:
            errors.append(f"remove temporary {tmp}: {exc}")
    for d in reversed(created_dirs):
        try:
            if not os.listdir(d):
                os.rmdir(d)
        except OSError as exc:
            errors.append(f"remove directory {d}: {exc}")
    return errors


def file_mode(st: os.stat_result) -> int:
    """Permission bits of a stat result."""
    return stat.S_IMODE(st.st_mode)
