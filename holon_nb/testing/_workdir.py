"""Where a tested notebook's kernel runs: a private copy of its folder, or the folder itself.

Notebook-tests spec §2: under the plugin (and :func:`~holon_nb.testing.check.check_notebook`)
each notebook has its own kernel and holon home, and notebooks in one folder share that folder
(their fixture directory) only when the notebook opts in with ``metadata.holon_nb.shared_dir: true``.

- By default each run's kernel starts in a fresh copy of the notebook's folder,
  ``<tmp>/holon-nb-copy-XXXX/<folder name>``: the notebook reads its fixtures
  (data files, ``<stem>.holon/`` cassettes) as usual, but what it writes never
  reaches the folder, another notebook of the folder, another xdist worker, or
  the next run of ``--holon-nb-repeat``. Copied: everything except
  :data:`IGNORED` (version control, caches, executed copies, an interactive
  ``.holon`` home) and the holon home when it lies inside the folder. The copy's
  path is masked as ``<WS>`` (:mod:`holon_nb.testing.normalize`), like the folder's.
- ``shared_dir: true``: the kernel runs in the folder itself, as ``holon-nb run``
  does; use it when the notebook needs what a copy cannot give (files outside
  its folder such as ``../data``, its git checkout, files another notebook of the
  folder writes). Such runs of one folder never overlap, even across xdist
  workers: each holds the folder's lock (:func:`folder_lock`) while it runs.
- Recording (cassette modes ``record`` and ``auto``) always runs in the folder, so
  what the notebook records lands where the next replay reads it.

A folder larger than :data:`MAX_FILES` files or :data:`MAX_BYTES` bytes is not
copied: the test fails with a message that names ``shared_dir``.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..tools._errors import HolonNBError

__all__ = [
    "IGNORED",
    "MAX_BYTES",
    "MAX_FILES",
    "COPY_PREFIX",
    "FolderTooLarge",
    "folder_lock",
    "private_copy",
    "shared_dir",
]

#: Names (fnmatch patterns) not copied into a notebook's private folder.
IGNORED = (
    ".git",
    ".hg",
    ".svn",
    ".ipynb_checkpoints",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".holon",
    "*.executed.ipynb",
    ".venv",
    "node_modules",
)
#: Largest folder copied for a private run (files, bytes); beyond, set ``shared_dir: true``.
MAX_FILES = 5000
MAX_BYTES = 200 * 1024 * 1024
#: Prefix of the temporary directory that holds a private copy (the normaliser masks it as ``<WS>``).
COPY_PREFIX = "holon-nb-copy-"


class FolderTooLarge(HolonNBError, ValueError):
    """The notebook's folder is too large to copy (or holds the temporary directory); the message says
    how to run the notebook in place instead."""


def shared_dir(metadata: Any) -> bool:
    """True when a notebook's metadata opts in to running in its own folder (``holon_nb.shared_dir``)."""
    meta: Any = metadata.get("holon_nb") if hasattr(metadata, "get") else None
    return bool(meta.get("shared_dir")) if hasattr(meta, "get") else False


def _copy_unless_gone(src: str, dst: str) -> str:
    """``shutil.copy2``, except that a file removed after the folder was listed is skipped: the folder may be
    in use (another xdist worker's kernel writing and removing its spool files in a holon home inside it), and
    a file gone before it could be copied is not part of what the notebook finds."""
    try:
        return shutil.copy2(src, dst)
    except FileNotFoundError:
        if os.path.lexists(src):  # the source is there: the failure is the copy's own
            raise
        return dst


def _ignore(skip: set[Path]) -> Any:
    def ignore(folder: str, names: list[str]) -> set[str]:
        dropped = {n for n in names if any(fnmatch.fnmatch(n, p) for p in IGNORED)}
        return dropped | {n for n in names if Path(folder, n).resolve() in skip}

    return ignore


def _measure(folder: Path, skip: set[Path], notebook: Path) -> None:
    """Raise :class:`FolderTooLarge` when copying ``folder`` would exceed the limits."""
    files = size = 0
    for root, dirs, names in os.walk(folder):
        keep = _ignore(skip)(root, dirs + names)
        dirs[:] = [d for d in dirs if d not in keep and not Path(root, d).is_symlink()]
        for name in names:
            if name in keep:
                continue
            files += 1
            with contextlib.suppress(OSError):
                size += Path(root, name).stat().st_size
            if files > MAX_FILES or size > MAX_BYTES:
                raise FolderTooLarge(
                    f"the folder of {notebook.name} ({folder}) is too large to copy for an isolated run "
                    f"(more than {MAX_FILES} files or {MAX_BYTES // 2**20} MB); set "
                    "metadata.holon_nb.shared_dir: true to run the notebook in its folder"
                )


def private_copy(notebook: Path, holon_home: str | None = None) -> Path:
    """Copy the folder of ``notebook`` into a new temporary directory; return the copy's path.

    The copy keeps the folder's name and its symlinks (as links). The caller removes
    ``result.parent`` when the run is over.

    Raises:
        FolderTooLarge: the folder exceeds :data:`MAX_FILES` / :data:`MAX_BYTES`, or the system
            temporary directory lies inside it.
    """
    folder = notebook.resolve().parent
    tmp = Path(tempfile.gettempdir()).resolve()
    if tmp == folder or folder in tmp.parents:
        raise FolderTooLarge(
            f"the folder of {notebook.name} ({folder}) holds the temporary directory and "
            "cannot be copied for an isolated run; set metadata.holon_nb.shared_dir: true"
        )
    skip = {Path(holon_home).resolve()} if holon_home else set()
    _measure(folder, skip, notebook)
    scratch = Path(tempfile.mkdtemp(prefix=COPY_PREFIX))
    try:
        target = scratch / folder.name
        shutil.copytree(folder, target, symlinks=True, ignore=_ignore(skip), copy_function=_copy_unless_gone)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return target


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive, cross-process lock on ``folder`` (a lock file in the temporary directory,
    named by the folder's path) for the duration of the block; blocks while another process holds it.
    Where ``fcntl`` is missing (Windows) the block runs unlocked."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        yield
        return
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:20]
    path = Path(tempfile.gettempdir()) / f"holon-nb-shared-{digest}.lock"
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
