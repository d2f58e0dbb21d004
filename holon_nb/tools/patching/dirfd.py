"""Directory file descriptors for race-free confined writes (issue 9 item 5).

A patch's targets are resolved and confined by path (:mod:`.paths`); writing
by path later would follow a symlink that another process swapped in after
the check. Here every parent directory is opened from ``/`` one component at
a time with ``O_NOFOLLOW | O_DIRECTORY``, and every later operation (create
a temporary file, rename it over the target, unlink, mkdir, stat) runs
relative to that directory's descriptor (``dir_fd=``) on a single name. A
symlink anywhere on the path at write time therefore fails the open
(``ELOOP``/``ENOTDIR``) instead of redirecting the write: the resolved paths
contain no symlinks when they are checked, so finding one means the tree
changed underneath the patch.
"""

from __future__ import annotations

import errno
import os

__all__ = ["DirHandles", "SwappedPath"]

# O_PATH (Linux): a directory that may be searched but not listed (mode 0o711) can still be a dir_fd
_DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class SwappedPath(OSError):
    """A directory on a target's path is no longer a plain directory (a symlink or file was swapped in)."""


class DirHandles:
    """Open directory descriptors by absolute path, each reached without following symlinks.

    Use as a context manager; every descriptor is closed on exit. Descriptors stay valid for the
    directory they were opened on even if its path is later swapped, so a rollback restores
    files in the directories the commit actually wrote.
    """

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    def __enter__(self) -> "DirHandles":
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
                raise SwappedPath(exc.errno, f"{directory} is no longer a directory (a symlink or file "
                                             "took its place)", directory) from None
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
