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

Every operation runs relative to a descriptor of the target's parent directory,
opened from ``/`` without following symlinks (:class:`DirHandles`): a symlink that
another process swaps onto a target's path after it was resolved fails the
commit (rolled back, reported as a change during the patch) instead of
redirecting the write outside the workspace.

Before each file is renamed into place or removed, it is stat'ed again and
compared with the ``(st_ino, st_size, st_mtime_ns)`` recorded when it was read
(absent files must still be absent); a difference means another process wrote
it, and the commit fails with :class:`ChangedOnDisk` (rolled back as usual).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field

from .._errors import HolonNBError

__all__ = ["Change", "ChangedOnDisk", "CommitError", "Signature", "SwappedPath", "commit", "current_umask"]

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


class ChangedOnDisk(HolonNBError):
    """A file changed on disk between its read and its commit (another writer)."""


@dataclass
class CommitError(HolonNBError):
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


# ---------------------------------------------------------------- directory descriptors (issue 9 item 5)

_DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class SwappedPath(HolonNBError, OSError):
    """A directory on a target's path is no longer a plain directory (a symlink or file was swapped in)."""


class DirHandles:
    """Open directory descriptors by absolute path, each reached without following symlinks.

    Use as a context manager; every descriptor is closed on exit. Descriptors stay valid for the
    directory they were opened on even if its path is later swapped, so a rollback restores
    files in the directories the commit actually wrote.
    """

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    def __enter__(self) -> DirHandles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every descriptor (idempotent)."""
        fds, self._fds = self._fds, {}
        for fd in fds.values():
            try:
                os.close(fd)
            except OSError:
                pass

    def get(self, directory: str, created: list[str] | None = None) -> int:
        """The descriptor of absolute ``directory``, opened component by component with ``O_NOFOLLOW``.

        Args:
            directory: A normalised absolute path (no ``.``/``..`` components).
            created: When given, missing components are created (``mkdir`` relative to their parent's
                descriptor) and their paths appended, in creation order.

        Raises:
            SwappedPath: a component is a symlink or not a directory.
            FileNotFoundError: a component is missing and ``created`` is None.
            OSError: any other failure.
        """
        directory = os.path.normpath(directory)
        if directory in self._fds:
            return self._fds[directory]
        parent, name = os.path.split(directory)
        if not name:  # "/"
            fd = os.open("/", _DIR_FLAGS)
            self._fds[directory] = fd
            return fd
        parent_fd = self.get(parent, created)
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except FileNotFoundError:
            if created is None:
                raise
            os.mkdir(name, 0o777, dir_fd=parent_fd)
            created.append(directory)
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise SwappedPath(
                    exc.errno, f"{directory} is no longer a directory (a symlink or file took its place)", directory
                ) from None
            raise
        self._fds[directory] = fd
        return fd

    def is_empty(self, directory: str) -> bool:
        """Whether ``directory`` (reached as :meth:`get` does) has no entries."""
        parent_fd, name = self.parent(directory)
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd)
        try:
            return not os.listdir(fd)
        finally:
            os.close(fd)

    def parent(self, path: str, created: list[str] | None = None) -> tuple[int, str]:
        """``(descriptor of the parent directory, final name)`` of absolute ``path``."""
        directory, name = os.path.split(os.path.normpath(path))
        return self.get(directory, created), name


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


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

#: A temporary file: ``(descriptor of its directory, its name)``.
_Temp = tuple[int, str]


def _temp_name(name: str) -> str:
    return f".{name[:80]}.{os.urandom(6).hex()}{TEMP_SUFFIX}"


def _write_temp(
    dirs: DirHandles, path: str, data: bytes, mode: int, owner: tuple[int, int] | None, temps: list[_Temp]
) -> _Temp:
    dfd, name = dirs.parent(path)
    for _ in range(100):
        tmp = _temp_name(name)
        try:
            fd = os.open(tmp, _TEMP_FLAGS, 0o600, dir_fd=dfd)
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(f"no free temporary name next to {path}")
    temps.append((dfd, tmp))
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
    return dfd, tmp


def _link_temp(dirs: DirHandles, path: str, target: bytes, temps: list[_Temp]) -> _Temp:
    dfd, name = dirs.parent(path)
    for _ in range(100):
        tmp = _temp_name(name)
        try:
            os.symlink(os.fsdecode(target), tmp, dir_fd=dfd)
        except FileExistsError:
            continue
        temps.append((dfd, tmp))
        return dfd, tmp
    raise FileExistsError(f"no free temporary name next to {path}")


def _put(dirs: DirHandles, tmp: _Temp, path: str, temps: list[_Temp]) -> None:
    """Rename a temporary file over ``path`` inside the directory it was created in (never via a symlink)."""
    dfd, name = dirs.parent(path)
    os.replace(tmp[1], name, src_dir_fd=tmp[0], dst_dir_fd=dfd)
    temps.remove(tmp)


def _verify(dirs: DirHandles, change: Change) -> None:
    """Raise :class:`ChangedOnDisk` unless ``change.path`` is as it was read (no signature: not checked)."""
    if change.signature is None and change.original is not None:
        return
    dfd, name = dirs.parent(change.path)
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        now = None
    else:
        now = (st.st_ino, st.st_size, st.st_mtime_ns)
    if now != change.signature:
        raise ChangedOnDisk(change.path)


def commit(changes: list[Change]) -> None:
    """Commit ``changes`` to disk, all or nothing (per D2), through directory descriptors.

    Every parent directory is opened from ``/`` without following symlinks (:class:`DirHandles`), and
    files are created, renamed and removed relative to it, so a symlink swapped onto a target's
    path after it was resolved makes the commit fail (and roll back) instead of writing elsewhere.
    Every new content is written to its temporary file before the first rename, so a full disk fails
    while every original is still in place; a rollback unlinks the unplaced temporaries before it
    restores, so the restores get the space they held.

    Args:
        changes: Transitions in input order; entries whose ``final`` equals ``original`` are skipped.

    Raises:
        CommitError: when any step failed; everything was restored (see ``rollback_errors``). Its
            ``cause`` is :class:`ChangedOnDisk` or :class:`SwappedPath` when another process
            changed a file or a directory on the way.
    """
    with DirHandles() as dirs:
        _commit(dirs, changes)


def _commit(dirs: DirHandles, changes: list[Change]) -> None:
    needs_default = any(c.mode is None and c.final is not None for c in changes)
    default_mode = 0o666 & ~current_umask() if needs_default else 0o644
    temps: list[_Temp] = []
    created_dirs: list[str] = []
    replaced: list[Change] = []
    removed: list[Change] = []
    writes = [c for c in changes if c.final is not None and (c.final != c.original or c.final_link != c.original_link)]
    removals = [c for c in changes if c.final is None and c.original is not None]
    step, current = "write", ""
    try:
        # every new content is written before any file is replaced: a full disk (or any write error)
        # fails while every original is still in place, and the renames after need no space
        staged: list[tuple[Change, _Temp]] = []
        for change in writes:
            current = change.path
            step = "mkdir"
            dirs.get(os.path.dirname(change.path), created_dirs)
            step = "write"
            if change.final_link:
                tmp = _link_temp(dirs, change.path, change.final or b"", temps)
            else:
                mode = change.mode if change.mode is not None else default_mode
                tmp = _write_temp(dirs, change.path, change.final or b"", mode, change.owner, temps)
            staged.append((change, tmp))
        for change, tmp in staged:
            current = change.path
            step = "verify"
            _verify(dirs, change)
            step = "rename"
            _put(dirs, tmp, change.path, temps)
            replaced.append(change)
        step = "remove"
        for change in removals:
            current = change.path
            step = "verify"
            _verify(dirs, change)
            step = "remove"
            dfd, name = dirs.parent(change.path)
            os.unlink(name, dir_fd=dfd)
            removed.append(change)
    except BaseException as exc:
        errors = _rollback(dirs, replaced, removed, created_dirs, temps, default_mode)
        if not isinstance(exc, Exception):
            raise  # interrupts and exits propagate (after the rollback)
        raise CommitError(step, current, exc, errors) from exc


def _rollback(
    dirs: DirHandles,
    replaced: list[Change],
    removed: list[Change],
    created_dirs: list[str],
    temps: list[_Temp],
    default_mode: int,
) -> list[str]:
    errors: list[str] = []
    _remove_temps(temps, errors)  # first: on a full disk, the space they hold is what the restores need
    for change in reversed(removed + replaced):
        try:
            if change.original is None:
                dfd, name = dirs.parent(change.path)
                os.unlink(name, dir_fd=dfd)
            else:
                if change.original_link:
                    tmp = _link_temp(dirs, change.path, change.original, temps)
                else:
                    mode = change.original_mode if change.original_mode is not None else default_mode
                    tmp = _write_temp(dirs, change.path, change.original, mode, change.owner, temps)
                _put(dirs, tmp, change.path, temps)
        except OSError as exc:
            errors.append(f"restore {change.path}: {exc}")
    _remove_temps(temps, errors)  # a restore that failed before its rename leaves one
    for d in reversed(created_dirs):
        try:
            parent_fd, name = dirs.parent(d)
            if dirs.is_empty(d):
                os.rmdir(name, dir_fd=parent_fd)
        except OSError as exc:
            errors.append(f"remove directory {d}: {exc}")
    return errors


def _remove_temps(temps: list[_Temp], errors: list[str]) -> None:
    """Unlink the temporary files not renamed into place (and forget them); failures go to ``errors``."""
    for dfd, tmp in temps:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except FileNotFoundError:
            pass
        except OSError as exc:
            errors.append(f"remove temporary {tmp}: {exc}")
    temps.clear()


def file_mode(st: os.stat_result) -> int:
    """Permission bits of a stat result."""
    return stat.S_IMODE(st.st_mode)
